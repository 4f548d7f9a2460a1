import { createPublicKey, verify } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/index.js";

afterEach(closeKubectlClusters);

/** A cluster that requires the admin token `t0ken` (over HTTPS, where kubectl sends it). */
function secured() {
  return kubectlCluster({}, { token: "t0ken", tls: true });
}

const forbiddenPods =
  'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"\n';

describe("kubectl auth against RBAC", () => {
  it("the admin token is reconcile-admin in system:masters, allowed everything", async () => {
    const { kubectl } = await secured();
    expect(await kubectl(["auth", "can-i", "delete", "pods"])).toEqual({
      code: 0,
      stdout: "yes\n",
      stderr: "",
    });
    const whoami = await kubectl(["auth", "whoami", "-o", "json"]);
    expect(JSON.parse(whoami.stdout)).toEqual({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: null },
      status: {
        userInfo: { username: "reconcile-admin", groups: ["system:masters", "system:authenticated"] },
      },
    });
  });

  it("--as impersonates a user who may do nothing until a RoleBinding grants edit in one namespace", async () => {
    const { kubectl } = await secured();
    const whoami = await kubectl(["auth", "whoami", "--as=jane", "--as-group=devs", "-o", "json"]);
    expect(JSON.parse(whoami.stdout).status.userInfo).toEqual({
      username: "jane",
      groups: ["devs", "system:authenticated"],
    });
    expect(await kubectl(["auth", "can-i", "create", "pods", "--as=jane"])).toEqual({
      code: 1,
      stdout: "no\n",
      stderr: "",
    });
    expect(await kubectl(["get", "pods", "--as=jane"])).toEqual({
      code: 1,
      stdout: "",
      stderr: forbiddenPods,
    });
    expect(
      await kubectl([
        "create",
        "rolebinding",
        "jane-edit",
        "--clusterrole=edit",
        "--user=jane",
        "-n",
        "default",
      ]),
    ).toMatchObject({ code: 0 });
    await until(
      async () => (await kubectl(["auth", "can-i", "create", "pods", "--as=jane"])).stdout === "yes\n",
    );
    // edit aggregates system:aggregate-to-edit and view's rules, and only in its namespace.
    expect((await kubectl(["auth", "can-i", "get", "deployments.apps", "--as=jane"])).stdout).toBe("yes\n");
    expect(
      (await kubectl(["auth", "can-i", "create", "pods", "-n", "kube-system", "--as=jane"])).stdout,
    ).toBe("no\n");
    expect((await kubectl(["auth", "can-i", "create", "rolebindings", "--as=jane"])).stdout).toBe("no\n");
    expect((await kubectl(["auth", "can-i", "list", "nodes", "--as=jane"])).stdout).toBe("no\n");
    expect(await kubectl(["get", "pods", "--as=jane"])).toMatchObject({ code: 0 });
  });

  it("can-i --list lists the rules a user holds in a namespace", async () => {
    const { kubectl } = await secured();
    await kubectl(["create", "role", "reader", "--verb=get,list", "--resource=configmaps", "-n", "default"]);
    await kubectl(["create", "rolebinding", "r", "--role=reader", "--user=jane", "-n", "default"]);
    let listing = "";
    await until(async () => {
      listing = (await kubectl(["auth", "can-i", "--list", "--as=jane", "-n", "default"])).stdout;
      return listing.includes("configmaps");
    });
    const lines = listing.split("\n").map((l) => l.trim().split(/\s+/));
    expect(lines[0]).toEqual(["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]);
    expect(lines).toContainEqual(["configmaps", "[]", "[]", "[get", "list]"]);
    expect(lines).toContainEqual(["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"]);
    expect(lines).toContainEqual(["[/api/*]", "[]", "[get]"]);
  });

  it("create token issues a ServiceAccount token that authenticates as it, with its groups", async () => {
    const { kubectl } = await secured();
    expect(await kubectl(["create", "serviceaccount", "robot"])).toMatchObject({ code: 0 });
    const created = await kubectl(["create", "token", "robot", "--duration=1h"]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    const [header, claims] = token
      .split(".")
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
    expect(header.alg).toBe("ES256");
    expect(claims).toMatchObject({
      aud: ["https://kubernetes.default.svc.cluster.local"],
      iss: "https://kubernetes.default.svc.cluster.local",
      sub: "system:serviceaccount:default:robot",
      "kubernetes.io": { namespace: "default", serviceaccount: { name: "robot" } },
    });
    expect(claims.exp - claims.iat).toBe(3600);
    const whoami = await kubectl(["auth", "whoami", `--token=${token}`, "-o", "json"]);
    expect(JSON.parse(whoami.stdout).status.userInfo).toMatchObject({
      username: "system:serviceaccount:default:robot",
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    });
    // Its holder may not impersonate anyone.
    expect(
      await kubectl(["get", "--raw", "/api/v1/namespaces/default/pods", `--token=${token}`, "--as=jane"]),
    ).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'Error from server (Forbidden): users "jane" is forbidden: User "system:serviceaccount:default:robot" cannot impersonate resource "users" in API group "" at the cluster scope\n',
    });
    // The published key verifies it offline; the token dies with its ServiceAccount.
    const jwks = JSON.parse((await kubectl(["get", "--raw", "/openid/v1/jwks"])).stdout) as {
      keys: Record<string, string>[];
    };
    const [signed, signature] = [
      token.slice(0, token.lastIndexOf(".")),
      token.slice(token.lastIndexOf(".") + 1),
    ];
    const key = createPublicKey({ key: jwks.keys[0]!, format: "jwk" });
    expect(
      verify(
        "sha256",
        Buffer.from(signed),
        { key, dsaEncoding: "ieee-p1363" },
        Buffer.from(signature, "base64url"),
      ),
    ).toBe(true);
    await kubectl(["delete", "serviceaccount", "robot"]);
    const after = await kubectl(["auth", "whoami", `--token=${token}`]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("Unauthorized");
  });

  it("refuses a token that is too short-lived, and a token for a ServiceAccount that does not exist", async () => {
    const { kubectl } = await secured();
    expect(await kubectl(["create", "token", "ghost"])).toEqual({
      code: 1,
      stdout: "",
      stderr: 'error: failed to create token: serviceaccounts "ghost" not found\n',
    });
    await kubectl(["create", "serviceaccount", "robot"]);
    const short = await kubectl(["create", "token", "robot", "--duration=5m"]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("may not specify a duration less than 10 minutes");
  });

  it("a client certificate signed by the cluster CA authenticates its CN, its Os as groups", async () => {
    const { kubectl, server, file } = await secured();
    const certificate = await server.clientCertificate({ username: "ann", groups: ["ops", "audit"] });
    const kubeconfig = await file("ann.kubeconfig", server.kubeconfig({ clientCertificate: certificate }));
    const ann = (args: string[]) => kubectl([`--kubeconfig=${kubeconfig}`, ...args]);
    const whoami = await ann(["auth", "whoami", "-o", "json"]);
    expect(JSON.parse(whoami.stdout).status.userInfo).toEqual({
      username: "ann",
      groups: ["ops", "audit", "system:authenticated"],
    });
    expect((await ann(["auth", "can-i", "list", "nodes"])).stdout).toBe("no\n");
    await kubectl(["create", "clusterrolebinding", "ops-view", "--clusterrole=system:node", "--group=ops"]);
    await until(async () => (await ann(["auth", "can-i", "list", "nodes"])).stdout === "yes\n");
    expect(await ann(["get", "nodes"])).toMatchObject({ code: 0, stderr: "No resources found\n" });
  });

  it("a namespace admin grants only what it holds, unless it may escalate or bind", async () => {
    const { kubectl } = await secured();
    await kubectl([
      "create",
      "rolebinding",
      "jane-admin",
      "--clusterrole=admin",
      "--user=jane",
      "-n",
      "default",
    ]);
    const jane = (args: string[]) => kubectl([...args, "--as=jane", "-n", "default"]);
    await until(async () => (await jane(["auth", "can-i", "create", "roles"])).stdout === "yes\n");
    expect(await jane(["create", "role", "pod-reader", "--verb=get,list", "--resource=pods"])).toMatchObject({
      code: 0,
    });
    expect(await jane(["create", "role", "node-reader", "--verb=list", "--resource=nodes"])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "node-reader" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["list"]}\n',
    });
    expect(
      await jane(["create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob"]),
    ).toMatchObject({
      code: 0,
    });
    const escalation = await jane([
      "create",
      "rolebinding",
      "bob-root",
      "--clusterrole=cluster-admin",
      "--user=bob",
    ]);
    expect(escalation.code).toBe(1);
    expect(escalation.stderr).toContain(
      'rolebindings.rbac.authorization.k8s.io "bob-root" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
    );
    // The bind verb on that role lifts the check.
    await kubectl([
      "create",
      "clusterrole",
      "bind-root",
      "--verb=bind",
      "--resource=clusterroles",
      "--resource-name=cluster-admin",
    ]);
    await kubectl(["create", "clusterrolebinding", "jane-bind", "--clusterrole=bind-root", "--user=jane"]);
    await until(
      async () => (await jane(["auth", "can-i", "bind", "clusterroles/cluster-admin"])).stdout === "yes\n",
    );
    expect(
      await jane(["create", "rolebinding", "bob-root", "--clusterrole=cluster-admin", "--user=bob"]),
    ).toMatchObject({
      code: 0,
    });
  });

  it("get rolebindings prints the role, and the subjects with -o wide", async () => {
    const { kubectl } = await secured();
    await kubectl([
      "create",
      "rolebinding",
      "mixed",
      "--clusterrole=view",
      "--user=ann",
      "--user=bob",
      "--group=ops",
      "--serviceaccount=default:robot",
    ]);
    const wide = await kubectl(["get", "rolebinding", "mixed", "-o", "wide"]);
    const [header, row] = wide.stdout.trimEnd().split("\n");
    expect(header?.split(/\s{2,}/)).toEqual(["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]);
    expect(row?.split(/\s{2,}/)).toEqual([
      "mixed",
      "ClusterRole/view",
      expect.stringMatching(/^\d+s$/),
      "ann, bob",
      "ops",
      "default:robot",
    ]);
    const roles = await kubectl(["get", "clusterrole", "cluster-admin"]);
    expect(roles.stdout).toMatch(/^NAME\s+CREATED AT\ncluster-admin\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
  });

  it("discovery lists the reviews and serviceaccounts/token, create only, as kube-apiserver", async () => {
    const { kubectl } = await secured();
    const listed = await kubectl(["api-resources", "--api-group=authorization.k8s.io", "-o", "wide"]);
    const rows = listed.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.trim().split(/\s{2,}/));
    expect(rows).toEqual([
      ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"],
      ["localsubjectaccessreviews", "authorization.k8s.io/v1", "true", "LocalSubjectAccessReview", "create"],
      ["selfsubjectaccessreviews", "authorization.k8s.io/v1", "false", "SelfSubjectAccessReview", "create"],
      ["selfsubjectrulesreviews", "authorization.k8s.io/v1", "false", "SelfSubjectRulesReview", "create"],
      ["subjectaccessreviews", "authorization.k8s.io/v1", "false", "SubjectAccessReview", "create"],
    ]);
    const core = JSON.parse((await kubectl(["get", "--raw", "/api/v1"])).stdout) as {
      resources: { name: string; kind: string; group?: string; verbs: string[] }[];
    };
    expect(core.resources.find((r) => r.name === "serviceaccounts/token")).toEqual({
      name: "serviceaccounts/token",
      singularName: "",
      namespaced: true,
      group: "authentication.k8s.io",
      version: "v1",
      kind: "TokenRequest",
      verbs: ["create"],
    });
    const get = await kubectl(["get", "--raw", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]);
    expect(get).toMatchObject({ code: 1, stderr: expect.stringContaining("MethodNotAllowed") });
    // kubectl finds the kind (else: "the server doesn't have a resource type"), and knows its scope.
    expect(await kubectl(["auth", "can-i", "create", "subjectaccessreviews", "--as=jane"])).toEqual({
      code: 1,
      stdout: "no\n",
      stderr:
        "Warning: resource 'subjectaccessreviews' is not namespace scoped in group 'authorization.k8s.io'\n\n",
    });
  });

  it("a wrong token is a 401 on every path, public ones included", async () => {
    const { kubectl } = await secured();
    for (const path of ["/version", "/healthz", "/api", "/api/v1/pods"]) {
      expect([path, await kubectl(["get", "--raw", path, "--token=nope"])]).toEqual([
        path,
        { code: 1, stdout: "", stderr: "error: You must be logged in to the server (Unauthorized)\n" },
      ]);
    }
  });
});

describe("kubectl as a node, through the Node authorizer", () => {
  const asNode = ["--as=system:node:n1", "--as-group=system:nodes"];

  it("a node reads its own Node and the pods bound to it, nothing wider, with the authorizer's reason", async () => {
    const { kubectl } = await secured();
    expect(await kubectl(["get", "nodes", ...asNode])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'Error from server (Forbidden): nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: node \'n1\' cannot read all nodes, only its own Node object\n',
    });
    // Its own Node is allowed (not found yet, as before a kubelet registers).
    expect((await kubectl(["get", "node", "n1", ...asNode])).stderr).toBe(
      'Error from server (NotFound): nodes "n1" not found\n',
    );
    expect(await kubectl(["get", "pods", "-A", "--field-selector=spec.nodeName=n1", ...asNode])).toEqual({
      code: 0,
      stdout: "",
      stderr: "No resources found\n",
    });
    expect((await kubectl(["get", "pods", "-A", ...asNode])).stderr).toBe(
      'Error from server (Forbidden): pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector\n',
    );
  });

  it("can-i: a node may read a Secret only once a pod bound to it names that Secret", async () => {
    const { kubectl } = await secured();
    const canI = () => kubectl(["auth", "can-i", "get", "secrets/token", "-n", "default", ...asNode]);
    expect((await canI()).stdout).toBe("no - no relationship found between node 'n1' and this object\n");
    await kubectl(["create", "secret", "generic", "token", "--from-literal=k=v"]);
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default" },
      spec: {
        nodeName: "n1",
        containers: [{ name: "c", image: "busybox" }],
        volumes: [{ name: "s", secret: { secretName: "token" } }],
      },
    };
    await kubectl(["create", "-f", "-"], JSON.stringify(pod));
    await until(async () => (await canI()).stdout === "yes\n");
    expect((await kubectl(["get", "secret", "token", "-o", "jsonpath={.data.k}", ...asNode])).stdout).toBe(
      "dg==",
    );
  });
});

describe("kubectl auth without authentication", () => {
  it("can-i says yes to anything, and says why", async () => {
    const { url } = await kubectlCluster();
    const spec = { resourceAttributes: { verb: "get", resource: "pods", namespace: "default" } };
    const response = await fetch(`${url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: true, reason: "this server runs without authentication: every request is allowed" },
    });
  });
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("not reached within 2 s");
}
