// What authentication and RBAC cost (issue: authorization ≤ 5 % of a create;
// a SubjectAccessReview ≤ 20 µs with 10,000 rules across 1,000 bindings).
//
// The server holds 1,000 ClusterRoles of 10 rules each (10,000 rules) and
// 1,000 RoleBindings in namespace "bench", binding `user-<i>` and the group
// `group-<i % 10>` to role i. Decisions are indexed by subject, so a user is
// judged on its own bindings only:
//   (a) one decision for `user-500` (one binding, the allowing rule last of 10);
//   (b) one decision for a user in all ten groups (all 1,000 bindings, 10,000
//       rules; the allowing rule is the last rule of the last binding) — the
//       worst case this policy allows;
//   (d) one decision of the whole chain (Node authorizer, then RBAC) for a node
//       reading a Secret that one of its pods names, with 1,000 pods bound
//       across 100 nodes (a lookup in the Node authorizer's graph);
//   (c) ConfigMap creates/s over HTTP on loopback, one after another on a
//       keep-alive connection, in one run: no authentication; the admin token
//       (system:masters, decided before RBAC); a token user that RBAC judges
//       through its one binding. The difference between the last and the
//       first is what authentication and authorization cost a create.
//
// 5 runs after a warm-up for (a) and (b); for (c) 6 rounds after a warm-up round, the three
// variants in rotating order (the store grows with every run). Medians reported.
import * as http from "node:http";
import { clusterRoles, namespaces, pods, roleBindings } from "@reconcile/api";
import { measure, writeResults } from "../../../tools/bench/index.js";
import type { Attributes } from "../src/http/auth/attributes.js";
import { ApiServer } from "../src/index.js";

const bindings = 1000;
const rulesPerRole = 10;
const decisions = Number(process.env.DECISIONS ?? 20_000);
const creates = Number(process.env.CREATES ?? 2000);

const server = new ApiServer();
const client = server.client();
const verbs = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
for (let i = 0; i < bindings; i++) {
  const rules = Array.from({ length: rulesPerRole }, (_, r) => ({
    apiGroups: [r === rulesPerRole - 1 ? "" : `group${r}.example.com`],
    resources: [r === rulesPerRole - 1 ? `configmaps` : `things${i}`],
    // Only the last rule of role 500 (user-500's) and of the last role allows creating config maps.
    verbs: r === rulesPerRole - 1 && (i === 500 || i === bindings - 1) ? verbs : ["get"],
  }));
  await client.resource(clusterRoles).create({ metadata: { name: `role-${i}` }, rules });
}
await client.resource(namespaces).create({ metadata: { name: "bench" } });
for (let i = 0; i < bindings; i++) {
  await client.resource(roleBindings, "bench").create({
    metadata: { name: `binding-${i}`, namespace: "bench" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `role-${i}` },
    subjects: [
      { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: `user-${i}` },
      { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: `group-${i % 10}` },
    ],
  });
}
const listening = await server.listen({
  token: "admin-token",
  users: [{ token: "user-token", user: { username: "user-500" } }],
});
await server.auth.start();
const plain = await server.listen();

function attributes(user: Attributes["user"]): Attributes {
  return {
    user,
    resourceRequest: true,
    verb: "create",
    apiGroup: "",
    resource: "configmaps",
    subresource: "",
    namespace: "bench",
    name: "",
  };
}
const oneBinding = attributes({ username: "user-500", groups: ["system:authenticated"] });
const allBindings = attributes({
  username: "someone",
  groups: [...Array.from({ length: 10 }, (_, g) => `group-${g}`), "system:authenticated"],
});
for (const [label, asked] of [
  ["one binding", oneBinding],
  ["every binding", allBindings],
] as const) {
  const decision = await server.auth.rbac.authorize(asked);
  if (!decision.allowed) throw new Error(`the ${label} user was denied`);
}

// What a request pays: the whole chain (the Node authorizer first, which passes a non-node user on).
const decide = (asked: Attributes) => async () => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < decisions; i++) server.auth.authorize(asked);
  return Number(process.hrtime.bigint() - started) / 1000 / decisions;
};
const a = await measure(
  {
    name: "a: one RBAC decision, a user with 1 binding of 10 rules (1,000 bindings stored)",
    unit: "µs",
    higherIsBetter: false,
    target: 20,
  },
  decide(oneBinding),
);
const b = await measure(
  {
    name: "b: one RBAC decision, a user in 10 groups: all 1,000 bindings, 10,000 rules, allowed by the last",
    unit: "µs",
    higherIsBetter: false,
    target: 20,
  },
  decide(allBindings),
);

for (let i = 0; i < 1000; i++) {
  await client.resource(pods, "bench").create({
    metadata: { name: `pod-${i}` },
    spec: {
      nodeName: `node-${i % 100}`,
      containers: [{ name: "c", image: "busybox", envFrom: [{ secretRef: { name: `secret-${i}` } }] }],
    },
  });
}
const nodeRead: Attributes = {
  user: { username: "system:node:node-7", groups: ["system:nodes", "system:authenticated"] },
  resourceRequest: true,
  verb: "get",
  apiGroup: "",
  resource: "secrets",
  subresource: "",
  namespace: "bench",
  name: "secret-907",
};
const graphReady = async () => (await server.auth.authorize(nodeRead)).allowed;
for (let i = 0; i < 100 && !(await graphReady()); i++) await new Promise((r) => setTimeout(r, 10));
if (!(await graphReady())) throw new Error("the node was denied a Secret its pod names");
const d = await measure(
  {
    name: "d: one decision of the chain for a node reading a Secret its pod names (1,000 pods on 100 nodes)",
    unit: "µs",
    higherIsBetter: false,
    target: 20,
  },
  decide(nodeRead),
);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let counter = 0;
function post(url: string, token: string | undefined): Promise<number> {
  const body = JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `cm-${counter++}` },
    data: { k: "v" },
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/api/v1/namespaces/bench/configmaps`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
const createsPerSecond = (url: string, token: string | undefined) => async () => {
  const started = performance.now();
  for (let i = 0; i < creates; i++) {
    const code = await post(url, token);
    if (code !== 201) throw new Error(`a create answered ${code}`);
  }
  return creates / ((performance.now() - started) / 1000);
};
const runs = { none: [] as number[], admin: [] as number[], rbac: [] as number[] };
const variants = [
  ["none", plain.url, undefined],
  ["admin", listening.url, "admin-token"],
  ["rbac", listening.url, "user-token"],
] as const;
// The store grows with every run, so the order rotates: each variant runs first, second and third equally often.
for (let round = 0; round < 7; round++) {
  for (let k = 0; k < variants.length; k++) {
    const [key, url, token] = variants[(round + k) % variants.length]!;
    const value = await createsPerSecond(url, token)();
    if (round > 0) runs[key].push(value); // the first round warms up
  }
}
const c = await Promise.all(
  (
    [
      ["c: ConfigMap creates/s over HTTP, no authentication", runs.none],
      ["c: ConfigMap creates/s over HTTP, the admin token (system:masters)", runs.admin],
      ["c: ConfigMap creates/s over HTTP, a token user judged by RBAC (1,000 bindings stored)", runs.rbac],
    ] as const
  ).map(([name, values]) =>
    measure(
      { name, unit: "creates/s", higherIsBetter: true, runs: values.length, warmups: 0 },
      (() => {
        let i = 0;
        return () => values[i++]!;
      })(),
    ),
  ),
);
const cost = 1 - c[2]!.median / c[0]!.median;
console.log(`authentication and authorization cost ${(cost * 100).toFixed(1)} % of a create (goal ≤ 5 %)`);
writeResults("rbac", [a, b, d, ...c], { authorizationShareOfCreate: cost });
agent.destroy();
await server.close();
