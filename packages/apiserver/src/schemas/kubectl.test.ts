import { rm } from "node:fs/promises";
import { configMaps, deployments } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

// End-to-end: the real kubectl (v1.32, on the PATH) against the built-in kinds' schemas —
// strict field validation as kubectl asks for it, and `kubectl explain`.

const misspelt = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicass: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx
`;

describe("kubectl and strict field validation", () => {
  it("kubectl create -f with a misspelt field fails as on a real cluster, and nothing is created", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const path = await file("deploy.yaml", misspelt);
    const result = await kubectl(["create", "-f", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `Error from server (BadRequest): error when creating "${path}": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass"\n`,
    );
    await expect(client.resource(deployments, "default").get("web")).rejects.toThrow(/not found/);
  });

  it("--validate=warn creates the object without the field and prints the server's warning", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const result = await kubectl(["create", "--validate=warn", "-f", await file("deploy.yaml", misspelt)]);
    expect(result).toEqual({
      code: 0,
      stdout: "deployment.apps/web created\n",
      stderr: 'Warning: unknown field "spec.replicass"\n',
    });
    const stored = await client.resource(deployments, "default").get("web");
    expect(stored.spec?.replicas).toBe(1);
    expect(stored.spec).not.toHaveProperty("replicass");
  });

  it("kubectl apply refuses the field on create and on the patch that changes a live object", async () => {
    const { kubectl, file } = await kubectlCluster();
    const good = await file("good.yaml", misspelt.replace("replicass", "replicas"));
    expect((await kubectl(["apply", "-f", good])).stdout).toBe("deployment.apps/web created\n");
    const bad = await file("bad.yaml", misspelt.replace("replicass: 2", "replicass: 3"));
    const result = await kubectl(["apply", "-f", bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^The request is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.replicass"\n$/,
    );
  });
});

describe("kubectl apply --server-side and undeclared fields", () => {
  it("is refused with upstream's typed-patch error", async () => {
    const { kubectl, file } = await kubectlCluster();
    const result = await kubectl(["apply", "--server-side", "-f", await file("deploy.yaml", misspelt)]);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "Error from server: failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicass: field not declared in schema\n",
    });
  });
});

describe("kubectl explain", () => {
  it("explains a built-in field from Kubernetes' own schema", async () => {
    const { kubectl } = await kubectlCluster();
    const result = await kubectl(["explain", "deployment.spec.replicas"]);
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: `GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: replicas <integer>


DESCRIPTION:
    Number of desired pods. This is a pointer to distinguish between explicit
    zero and not specified. Defaults to 1.
    

`,
    });
  });

  it("shows an enum field's values and their meanings, as kube-openapi adds them from the Go types", async () => {
    const { kubectl } = await kubectlCluster();
    expect(await kubectl(["explain", "deployment.spec.strategy.type"])).toEqual({
      code: 0,
      stderr: "",
      stdout: `GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: type <string>
ENUM:
    Recreate
    RollingUpdate

DESCRIPTION:
    Type of deployment. Can be "Recreate" or "RollingUpdate". Default is
    RollingUpdate.
    
    Possible enum values:
     - \`"Recreate"\` Kill all existing pods before creating new ones.
     - \`"RollingUpdate"\` Replace the old ReplicaSets by new one using rolling
    update i.e gradually scale down the old ReplicaSets and scale up the new
    one.
    

`,
    });
    // A value without a doc comment is listed bare.
    const operator = await kubectl(["explain", "resourcequota.spec.scopeSelector.matchExpressions.operator"]);
    expect(operator.stdout).toContain('Possible enum values:\n     - `"DoesNotExist"`\n     - `"Exists"`\n');
  });

  it("lists a kind's fields with their types, and refuses a field the kind does not have", async () => {
    const { kubectl } = await kubectlCluster();
    const result = await kubectl(["explain", "pods.spec.containers"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("FIELD: containers <[]Container>");
    expect(result.stdout).toMatch(/\n {2}image\t<string>\n/);
    expect(result.stdout).toMatch(/\n {2}name\t<string> -required-\n/);
    const missing = await kubectl(["explain", "deployment.spec.replicass"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: field "replicass" does not exist\n');
  });
});

const labelled = (kind: string, apiVersion: string, name: string, body = "") => `apiVersion: ${apiVersion}
kind: ${kind}
metadata:
  name: ${name}
  namespace: default
  labels: { app: x }
${body}`;

describe("kubectl apply of a List and with --prune", () => {
  it("applies every item of a kind: List, validating them against the OpenAPI v2 document", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const list = `apiVersion: v1
kind: List
items:
- ${labelled("ConfigMap", "v1", "a", "data: { k: v }").replaceAll("\n", "\n  ")}
- ${labelled("Service", "v1", "b", "spec: { ports: [{ port: 80 }] }").replaceAll("\n", "\n  ")}
`;
    const result = await kubectl(["apply", "-f", await file("list.yaml", list)]);
    expect(result).toEqual({ code: 0, stdout: "configmap/a created\nservice/b created\n", stderr: "" });
    expect((await client.resource(configMaps, "default").get("a")).data).toEqual({ k: "v" });

    const typo = list.replace("data: { k: v }", "dataa: { k: v }");
    const refused = await kubectl(["apply", "-f", await file("typo.yaml", typo)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unknown field "dataa"');
  });

  it("prunes, by label, the objects of kubectl's default allow-list that the directory no longer holds", async () => {
    const { kubectl, file } = await kubectlCluster();
    const template = `spec:
  selector: { matchLabels: { app: x } }
  template:
    metadata: { labels: { app: x } }
    spec: { containers: [{ name: c, image: nginx }] }`;
    await file("a.yaml", labelled("ConfigMap", "v1", "keep"));
    await file("b.yaml", labelled("ConfigMap", "v1", "drop"));
    await file("c.yaml", labelled("StatefulSet", "apps/v1", "db", `${template}\n  serviceName: db`));
    await file("d.yaml", labelled("DaemonSet", "apps/v1", "agent", template));
    await file(
      "e.yaml",
      labelled(
        "PersistentVolumeClaim",
        "v1",
        "data",
        "spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }",
      ),
    );
    const dir = (await file("a.yaml", labelled("ConfigMap", "v1", "keep"))).replace(/\/a\.yaml$/, "");
    const first = await kubectl(["apply", "--prune", "-l", "app=x", "-f", dir]);
    expect(first.code).toBe(0);
    expect(first.stdout.split("\n").sort()).toEqual([
      "",
      "configmap/drop created",
      "configmap/keep created",
      "daemonset.apps/agent created",
      "persistentvolumeclaim/data created",
      "statefulset.apps/db created",
    ]);
    await rm(`${dir}/b.yaml`);
    await rm(`${dir}/d.yaml`);
    const second = await kubectl(["apply", "--prune", "-l", "app=x", "-f", dir]);
    expect(second.code).toBe(0);
    expect(second.stdout.split("\n").sort()).toEqual([
      "",
      "configmap/drop pruned",
      "configmap/keep unchanged",
      "daemonset.apps/agent pruned",
      "persistentvolumeclaim/data unchanged",
      "statefulset.apps/db unchanged",
    ]);
    const table = await kubectl(["get", "statefulsets,persistentvolumeclaims"]);
    const rows = table.stdout.split("\n").map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(["NAME", "READY", "AGE"]);
    expect(rows[1]?.slice(0, 2)).toEqual(["statefulset.apps/db", "0/1"]);
    expect(rows[3]).toEqual([
      "NAME",
      "STATUS",
      "VOLUME",
      "CAPACITY",
      "ACCESS MODES",
      "STORAGECLASS",
      "VOLUMEATTRIBUTESCLASS",
      "AGE",
    ]);
    expect(rows[4]?.slice(0, 2)).toEqual(["persistentvolumeclaim/data", "Pending"]);
  });
});
