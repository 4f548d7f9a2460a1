// What admission costs a create (issue: the default chain ≤ 10 % of a create; an in-process webhook
// ≤ 20 µs per request; a ValidatingAdmissionPolicy of 5 rules ≤ 30 µs).
//
// Pod creates per second through the in-process client, one after another, on six servers in one
// run: (a) no admission; (b) kube-apiserver's default chain (NamespaceLifecycle, LimitRanger with a
// LimitRange that defaults, ServiceAccount, Priority, DefaultTolerationSeconds, ResourceQuota with
// a quota, …); (c) the default chain and one validating webhook answered in process; (d) the default
// chain and one validating webhook over HTTPS on loopback; (e) the default chain and a
// ValidatingAdmissionPolicy of 5 validations; (f) no admission, sent the pod as (b)'s chain leaves
// it (resources, the token volume, priority, tolerations), so that b − f is what the plugins do
// themselves and f − a what storing the larger pod costs. What (b)–(e) cost per create is the median over rounds
// of each round's difference (the variants of a round ran side by side). 7 rounds after a warm-up round, the variants interleaved in chunks of 100 creates, each
// round's pods deleted (untimed) before the next. Medians reported.
//
// Then the chain's own time, measured directly rather than as a difference of two rates: on (b)
// and on (g), the default chain in a namespace as a new cluster has it (its ServiceAccount, no
// LimitRange, no quota), CREATES pods per round are created with the server observing its
// admission (`observeAdmission`, what feeds kube-apiserver's
// apiserver_admission_step_admission_duration_seconds), and the two phases' time is set against
// the whole create's (the four clock readings per create are in both); then as many again with
// each plugin timed apart, for the breakdown. Medians over the rounds.
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import {
  limitRanges,
  type Pod,
  pods,
  resourceQuotas,
  serviceAccounts,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { generateServingCertificates } from "../src/http/tls.js";
import { ApiServer, defaultAdmissionPlugins } from "../src/index.js";

const creates = Number(process.env.CREATES ?? 2000);
const rounds = Number(process.env.ROUNDS ?? 7);
const podRule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] };

async function defaultChainServer(): Promise<ApiServer> {
  const server = new ApiServer({ admissionPlugins: defaultAdmissionPlugins, garbageCollection: false });
  const client = server.client();
  await client.resource(serviceAccounts, "default").create({ metadata: { name: "default" } });
  await client.resource(limitRanges, "default").create({
    metadata: { name: "limits" },
    spec: { limits: [{ type: "Container", default: { cpu: "100m", memory: "64Mi" } }] },
  } as never);
  await client
    .resource(resourceQuotas, "default")
    .create({ metadata: { name: "quota" }, spec: { hard: { pods: "1000000" } } } as never);
  // What the quota controller would write: the quota is enforced from its status.
  const quota = await client.resource(resourceQuotas, "default").get("quota");
  await client
    .resource(resourceQuotas, "default")
    .updateStatus({ ...quota, status: { hard: { pods: "1000000" }, used: { pods: "0" } } } as never);
  return server;
}

function allow(review: Record<string, unknown>) {
  const uid = (review.request as { uid: string }).uid;
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } };
}

async function webhookConfiguration(server: ApiServer, clientConfig: Record<string, unknown>) {
  await server
    .client()
    .resource(validatingWebhookConfigurations)
    .create({
      metadata: { name: "bench" },
      webhooks: [
        {
          name: "bench.example.com",
          clientConfig,
          rules: [podRule],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    } as never);
}

const none = new ApiServer({ admissionPlugins: [], garbageCollection: false });
const chain = await defaultChainServer();
const inProcess = await defaultChainServer();
inProcess.admissionWebhooks.serve("https://bench.local/validate", allow);
await webhookConfiguration(inProcess, { url: "https://bench.local/validate" });

const certificates = await generateServingCertificates();
const hook = https.createServer(
  { cert: certificates.serving.cert, key: certificates.serving.key, keepAlive: true },
  (req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(allow(JSON.parse(body))));
    });
  },
);
await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
const overHttps = await defaultChainServer();
await webhookConfiguration(overHttps, {
  url: `https://127.0.0.1:${(hook.address() as AddressInfo).port}/validate`,
  caBundle: Buffer.from(certificates.ca.cert).toString("base64"),
});

// A namespace as a new cluster has it: the ServiceAccount controller's `default`, nothing else.
const fresh = new ApiServer({ admissionPlugins: defaultAdmissionPlugins, garbageCollection: false });
await fresh
  .client()
  .resource(serviceAccounts, "default")
  .create({ metadata: { name: "default" } });

const policy = await defaultChainServer();
await policy
  .client()
  .resource(validatingAdmissionPolicies)
  .create({
    metadata: { name: "five" },
    spec: {
      matchConstraints: { resourceRules: [podRule] },
      validations: [
        { expression: "size(object.spec.containers) <= 10" },
        { expression: "object.spec.containers.all(c, c.image != '')" },
        { expression: "!has(object.spec.hostNetwork) || !object.spec.hostNetwork" },
        { expression: "object.metadata.name.size() < 64" },
        { expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))" },
      ],
    },
  } as never);
await policy
  .client()
  .resource(validatingAdmissionPolicyBindings)
  .create({
    metadata: { name: "five" },
    spec: { policyName: "five", validationActions: ["Deny"] },
  } as never);

const sent = (): Pod => ({ spec: { containers: [{ name: "c", image: "nginx:1.27" }] } });
// The pod as the default chain leaves it (LimitRanger's resources, ServiceAccount's token volume,
// Priority's and DefaultTolerationSeconds' fields), sent to a server without admission: what storing
// the larger pod costs, apart from what the chain's plugins do.
const admittedPod = await chain
  .client()
  .resource(pods, "default")
  .create({ ...sent(), metadata: { name: "sample" } });
await chain.client().resource(pods, "default").delete("sample", { gracePeriodSeconds: 0 });
const admitted = (): Pod => ({
  metadata: { annotations: admittedPod.metadata?.annotations ?? {} },
  spec: admittedPod.spec!,
});
const bare = new ApiServer({ admissionPlugins: [], garbageCollection: false });

const variants: [string, ApiServer, () => Pod][] = [
  ["a: no admission", none, sent],
  ["b: kube-apiserver's default chain", chain, sent],
  ["c: default chain + one in-process validating webhook", inProcess, sent],
  ["d: default chain + one validating webhook over HTTPS on loopback", overHttps, sent],
  ["e: default chain + a ValidatingAdmissionPolicy of 5 validations", policy, sent],
  ["f: no admission, the pod as the default chain leaves it", bare, admitted],
];
let counter = 0;
/** Nanoseconds `count` creates of `body`'s pods, one after another, take on `server`. */
async function timeCreates(server: ApiServer, body: () => Pod, count: number): Promise<number> {
  const resource = server.client().resource(pods, "default");
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const pod = body();
    await resource.create({ ...pod, metadata: { ...pod.metadata, name: `p-${counter++}` } });
  }
  return Number(process.hrtime.bigint() - started);
}

// Each round interleaves the variants in chunks (a chunk of each in turn, the order rotating), so
// that garbage collection and the machine's other work fall on all of them alike; the round's pods
// are deleted (untimed) before the next, so every round creates into a store of the same size.
const chunk = 100;
const runs = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (let round = -1; round < rounds; round++) {
  const spent = new Map<string, number>(variants.map(([name]) => [name, 0]));
  for (let done = 0, turn = 0; done < creates; done += chunk, turn++) {
    for (let k = 0; k < variants.length; k++) {
      const [name, server, body] = variants[(k + turn) % variants.length]!;
      spent.set(name, spent.get(name)! + (await timeCreates(server, body, Math.min(chunk, creates - done))));
    }
  }
  for (const [, server] of variants)
    await server.client().resource(pods, "default").deleteCollection({ gracePeriodSeconds: 0 });
  if (round >= 0) for (const [name, ns] of spent) runs.get(name)!.push(creates / (ns / 1e9));
}
const medians = new Map([...runs].map(([name, values]) => [name, median(values)]));
/** The median over rounds of what `name` costs per create beyond `than`, each round's two taken together. */
function pairedCost(name: string, than: string): number {
  const mine = runs.get(name)!;
  const theirs = runs.get(than)!;
  return median(mine.map((rate, round) => (1 / rate - 1 / theirs[round]!) * 1e6));
}
const [noneName, defaults, admittedName] = [variants[0]![0], variants[1]![0], variants[5]![0]];
// What the chain's plugins do themselves: b against f, the same pod stored without admission.
const ownMicros = pairedCost(defaults, admittedName);
const measurements = variants.map(([name], k) => {
  const rate = medians.get(name)!;
  const costMicros = k === 0 ? 0 : pairedCost(name, noneName);
  const extra =
    k === 0
      ? {}
      : {
          costPerCreateMicros: Number(costMicros.toFixed(2)),
          shareOfCreate: Number((costMicros / (1e6 / rate)).toFixed(3)),
          ...(k >= 2 && k <= 4
            ? { costOverDefaultChainMicros: Number(pairedCost(name, defaults).toFixed(2)) }
            : {}),
          ...(k === 1
            ? {
                pluginsOwnMicros: Number(ownMicros.toFixed(2)),
                pluginsShareOfCreate: Number((ownMicros / (1e6 / rate)).toFixed(3)),
              }
            : {}),
        };
  console.log(
    `${name}: median ${rate.toFixed(0)} creates/s${k === 0 ? "" : ` (${costMicros.toFixed(1)} µs more per create than a)`}`,
  );
  return { name, unit: "creates/s", higherIsBetter: true, runs: runs.get(name)!, median: rate, extra };
});
console.log(
  `b's plugins themselves (b against f): ${ownMicros.toFixed(1)} µs per create, ${((ownMicros / (1e6 / medians.get(defaults)!)) * 100).toFixed(1)} % of b's create`,
);
// What (c), (d) and (e) add on top of the default chain.
for (const [name] of variants.slice(2, 5))
  console.log(`${name}: ${pairedCost(name, defaults).toFixed(1)} µs per create on top of b`);

/** The chain's own time per create on `server`, observed, and each plugin's: medians over rounds. */
async function observedChain(server: ApiServer) {
  const own: number[] = [];
  const whole: number[] = [];
  const byPlugin = new Map<string, number[]>();
  for (let round = -1; round < rounds; round++) {
    // The phases alone first (two timings per phase), then each plugin apart (two per plugin).
    let stepSeconds = 0;
    let stop = server.observeAdmission({
      admissionStep: (_operation, _rejected, _type, seconds) => {
        stepSeconds += seconds;
      },
    });
    const ns = await timeCreates(server, sent, creates);
    stop();
    await server.client().resource(pods, "default").deleteCollection({ gracePeriodSeconds: 0 });
    const plugins = new Map<string, number>();
    stop = server.observeAdmission({
      admissionController: (name, _operation, _rejected, type, seconds) => {
        const key = `${name} ${type}`;
        plugins.set(key, (plugins.get(key) ?? 0) + seconds);
      },
    });
    await timeCreates(server, sent, creates);
    stop();
    await server.client().resource(pods, "default").deleteCollection({ gracePeriodSeconds: 0 });
    if (round < 0) continue;
    own.push((stepSeconds * 1e6) / creates);
    whole.push(ns / 1e3 / creates);
    for (const [key, seconds] of plugins) {
      if (!byPlugin.has(key)) byPlugin.set(key, []);
      byPlugin.get(key)!.push((seconds * 1e6) / creates);
    }
  }
  const ownMicros = median(own);
  const createMicros = median(whole);
  const plugins = [...byPlugin]
    .map(([name, values]) => ({ name, micros: Number(median(values).toFixed(2)) }))
    .sort((x, y) => y.micros - x.micros);
  return { own, ownMicros, createMicros, share: ownMicros / createMicros, plugins };
}
const observed: Measurement[] = [];
for (const [name, server] of [
  ["b: kube-apiserver's default chain, with a LimitRange and a quota", chain],
  ["g: kube-apiserver's default chain, the namespace as a new cluster has it", fresh],
] as const) {
  const { own, ownMicros, createMicros, share, plugins } = await observedChain(server);
  console.log(
    `${name}, observed: the chain ${ownMicros.toFixed(1)} µs of a ${createMicros.toFixed(1)} µs create (${(share * 100).toFixed(1)} %); most: ${plugins
      .slice(0, 4)
      .map((p) => `${p.name} ${p.micros} µs`)
      .join(", ")}`,
  );
  observed.push({
    name: `${name}: the chain's own time, observed`,
    unit: "µs/create",
    higherIsBetter: false,
    runs: own,
    median: ownMicros,
    extra: {
      createMicros: Number(createMicros.toFixed(2)),
      shareOfCreate: Number(share.toFixed(3)),
      plugins,
    },
  });
}
writeResults("apiserver-admission", [...measurements, ...observed], { creates, rounds });
for (const [, server] of variants) await server.close();
await fresh.close();
hook.close();
