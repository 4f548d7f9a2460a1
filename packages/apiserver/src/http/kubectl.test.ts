import { writeFile } from "node:fs/promises";
import { deployments, namespaces, pods, replicaSets } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// End-to-end: the real kubectl (v1.32, on the PATH) against our server. Each test starts a
// server on a free port and runs kubectl with its own HOME (discovery cache) and KUBECONFIG.

afterEach(closeKubectlClusters);

const cluster = () => kubectlCluster();

async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const deploymentYaml = (name: string, image: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: {app: ${name}}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: main
        image: ${image}
        ports: [{containerPort: 80}]
`;

/** Splits `kubectl get` output into rows of cells. */
const rows = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s{2,}/));

describe("kubectl against the embedded server", { timeout: 120_000 }, () => {
  it("api-resources lists the served kinds with short names", async () => {
    const { kubectl } = await cluster();
    const result = await kubectl(["api-resources"]);
    expect(result.code).toBe(0);
    const table = rows(result.stdout);
    expect(table[0]).toEqual(["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]);
    expect(table).toContainEqual(["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    expect(table).toContainEqual(["namespaces", "ns", "v1", "false", "Namespace"]);
    expect(table).toContainEqual(["leases", "coordination.k8s.io/v1", "true", "Lease"]);
  });

  it("create -f creates what the manifest says", async () => {
    const { kubectl, client, file } = await cluster();
    const result = await kubectl([
      "create",
      "-f",
      await file("web.yaml", deploymentYaml("web", "nginx:1.27", 2)),
    ]);
    expect([result.code, result.stdout.trim()]).toEqual([0, "deployment.apps/web created"]);
    const web = await client.resource(deployments, "default").get("web");
    expect(web.spec?.replicas).toBe(2);
    expect(web.spec?.template.spec?.containers[0]?.ports).toEqual([{ containerPort: 80, protocol: "TCP" }]);
  });

  it("the imperative generators work, protobuf bodies included", async () => {
    const { kubectl, client } = await cluster();
    const commands: [string[], string][] = [
      [["create", "namespace", "team-a"], "namespace/team-a created"],
      [
        ["create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=80"],
        "deployment.apps/web created",
      ],
      [["run", "box", "--image=busybox", "--labels=app=box"], "pod/box created"],
      [["expose", "deployment", "web", "--port=80", "--target-port=8080"], "service/web exposed"],
      [["create", "configmap", "cfg", "--from-literal=a=1", "--from-literal=b=two"], "configmap/cfg created"],
      [["create", "secret", "generic", "s1", "--from-literal=password=hunter2"], "secret/s1 created"],
      [["create", "job", "once", "--image=busybox", "--", "echo", "hi"], "job.batch/once created"],
    ];
    for (const [args, expected] of commands) {
      const result = await kubectl(args);
      expect({ args, code: result.code, stdout: result.stdout.trim(), stderr: result.stderr }).toEqual({
        args,
        code: 0,
        stdout: expected,
        stderr: "",
      });
    }
    expect((await client.resource(namespaces).get("team-a")).status?.phase).toBe("Active");
    const web = await client.resource(deployments, "default").get("web");
    expect(web.spec?.replicas).toBe(3);
    expect(web.spec?.template.spec?.containers[0]).toMatchObject({ name: "nginx", image: "nginx:1.27" });
    expect((await client.resource(pods, "default").get("box")).metadata?.labels).toEqual({ app: "box" });
    const get = await kubectl(["get", "configmap", "cfg", "-o", "jsonpath={.data.b}"]);
    expect(get.stdout).toBe("two");
    const secret = await kubectl(["get", "secret", "s1", "-o", "jsonpath={.data.password}"]);
    expect(Buffer.from(secret.stdout, "base64").toString()).toBe("hunter2");
  });

  it("get prints kubectl's columns, -o wide, -o yaml, selectors and all namespaces", async () => {
    const { kubectl, file } = await cluster();
    await kubectl(["create", "namespace", "team-a"]);
    await kubectl(["create", "-f", await file("web.yaml", deploymentYaml("web", "nginx:1.27", 2))]);
    await kubectl([
      "create",
      "-n",
      "team-a",
      "-f",
      await file("api.yaml", deploymentYaml("api", "busybox", 1)),
    ]);
    await kubectl(["run", "p1", "--image=busybox", "--labels=app=web"]);
    await kubectl(["run", "p2", "--image=busybox", "--labels=app=other"]);

    const plain = rows((await kubectl(["get", "deploy"])).stdout);
    expect(plain).toEqual([
      ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
      ["web", "0/2", "0", "0", expect.stringMatching(/^\d+s$/)],
    ]);
    const wide = rows((await kubectl(["get", "deploy", "-o", "wide"])).stdout);
    expect(wide[0]).toEqual([
      "NAME",
      "READY",
      "UP-TO-DATE",
      "AVAILABLE",
      "AGE",
      "CONTAINERS",
      "IMAGES",
      "SELECTOR",
    ]);
    expect(wide[1]).toEqual(["web", "0/2", "0", "0", expect.any(String), "main", "nginx:1.27", "app=web"]);
    const yaml = await kubectl(["get", "deploy", "web", "-o", "yaml"]);
    expect(yaml.stdout).toContain("kind: Deployment");
    expect(yaml.stdout).toContain("  replicas: 2");
    const labelled = rows((await kubectl(["get", "pods", "-l", "app=web", "-o", "name"])).stdout);
    expect(labelled).toEqual([["pod/p1"]]);
    const byField = rows(
      (await kubectl(["get", "pods", "--field-selector", "metadata.name=p2", "-o", "name"])).stdout,
    );
    expect(byField).toEqual([["pod/p2"]]);
    const all = rows((await kubectl(["get", "deploy", "-A"])).stdout);
    expect(all.map((r) => [r[0], r[1]])).toEqual([
      ["NAMESPACE", "NAME"],
      ["default", "web"],
      ["team-a", "api"],
    ]);
    const short = await kubectl(["get", "po,deploy"]);
    expect(short.stdout).toContain("pod/p1");
    expect(short.stdout).toContain("deployment.apps/web");
    const everything = await kubectl(["get", "all"]);
    expect(everything.stdout).toContain("deployment.apps/web");
  });

  it("get -w prints a change as it arrives", async () => {
    const { kubectl, background, client } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx"]);
    const watch = background(["get", "deploy", "-w"]);
    await eventually(() => watch.stdout.includes("web"), "the initial row");
    await client.resource(deployments, "default").patch("web", { spec: { replicas: 4 } }, { type: "merge" });
    await eventually(() => watch.stdout.includes("0/4"), "the changed row");
    expect(rows(watch.stdout).map((r) => r.slice(0, 2))).toEqual([
      ["NAME", "READY"],
      ["web", "0/1"],
      ["web", "0/4"],
    ]);
  });

  it("apply twice with a change merges strategically; apply --server-side creates and updates", async () => {
    const { kubectl, client, file } = await cluster();
    const path = await file("app.yaml", deploymentYaml("app", "nginx:1.26", 2));
    expect((await kubectl(["apply", "-f", path])).stdout.trim()).toBe("deployment.apps/app created");
    await writeFile(
      path,
      deploymentYaml("app", "nginx:1.27", 4).replace("        ports: [{containerPort: 80}]\n", ""),
    );
    expect((await kubectl(["apply", "-f", path])).stdout.trim()).toBe("deployment.apps/app configured");
    const app = await client.resource(deployments, "default").get("app");
    expect(app.spec?.replicas).toBe(4);
    expect(app.spec?.template.spec?.containers).toMatchObject([{ name: "main", image: "nginx:1.27" }]);
    // The ports left the manifest: the three-way merge removes them.
    expect(app.spec?.template.spec?.containers[0]?.ports).toBeUndefined();
    expect(app.metadata?.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toContain(
      "nginx:1.27",
    );

    const ssa = await file("ssa.yaml", deploymentYaml("ssa", "nginx:1.26", 1));
    expect((await kubectl(["apply", "--server-side", "-f", ssa])).stdout.trim()).toBe(
      "deployment.apps/ssa serverside-applied",
    );
    await writeFile(ssa, deploymentYaml("ssa", "nginx:1.27", 3));
    expect((await kubectl(["apply", "--server-side", "-f", ssa])).stdout.trim()).toBe(
      "deployment.apps/ssa serverside-applied",
    );
    const applied = await client.resource(deployments, "default").get("ssa");
    expect([applied.spec?.replicas, applied.spec?.template.spec?.containers[0]?.image]).toEqual([
      3,
      "nginx:1.27",
    ]);
  });

  it("scale, label, annotate and set image change the deployment", async () => {
    const { kubectl, client } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx:1.26"]);
    const steps: [string[], string][] = [
      [["scale", "deploy/web", "--replicas=5"], "deployment.apps/web scaled"],
      [["scale", "deploy/web", "--replicas=3", "--current-replicas=5"], "deployment.apps/web scaled"],
      [["label", "deploy", "web", "tier=fe"], "deployment.apps/web labeled"],
      [["annotate", "deploy", "web", "note=hello"], "deployment.apps/web annotated"],
      [["set", "image", "deploy/web", "nginx=nginx:1.27"], "deployment.apps/web image updated"],
    ];
    for (const [args, expected] of steps) {
      const result = await kubectl(args);
      expect({ args, out: result.stdout.trim(), err: result.stderr }).toEqual({
        args,
        out: expected,
        err: "",
      });
    }
    const web = await client.resource(deployments, "default").get("web");
    expect(web.spec?.replicas).toBe(3);
    expect(web.metadata?.labels).toEqual({ app: "web", tier: "fe" });
    expect(web.metadata?.annotations).toEqual({ note: "hello" });
    expect(web.spec?.template.spec?.containers[0]?.image).toBe("nginx:1.27");
    expect(web.metadata?.generation).toBe(4);
    const wrongCurrent = await kubectl(["scale", "deploy/web", "--replicas=1", "--current-replicas=9"]);
    expect(wrongCurrent.code).toBe(1);
    expect(wrongCurrent.stderr).toContain("error: Expected replicas to be 9, was 3");
  });

  it.each([
    ["background", "is removed", 0],
    ["foreground", "is removed", 0],
    ["orphan", "stays, without its owner reference", 1],
  ])("delete --cascade=%s: the owned ReplicaSet %s", async (mode, _what, remaining) => {
    const { api, kubectl, client } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx"]);
    const web = await client.resource(deployments, "default").get("web");
    await client.resource(replicaSets, "default").create({
      metadata: {
        name: "web-1",
        labels: { app: "web" },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: "web",
            uid: web.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "nginx", image: "nginx" }] },
        },
      },
    });
    const result = await kubectl(["delete", "deploy", "web", `--cascade=${mode}`]);
    expect([result.code, result.stdout.trim()]).toEqual([0, 'deployment.apps "web" deleted']);
    await api.flush();
    const left = (await client.resource(replicaSets, "default").list()).items;
    expect(left).toHaveLength(remaining);
    if (remaining === 1) expect(left[0]!.metadata?.ownerReferences ?? []).toEqual([]);
    expect((await kubectl(["get", "deploy"])).stderr.trim()).toBe("No resources found in default namespace.");
  });

  it("describe shows the object with its defaults", async () => {
    const { kubectl } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx:1.27", "--port=80"]);
    const result = await kubectl(["describe", "deploy", "web"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Name:\s+web$/m);
    expect(result.stdout).toMatch(
      /^Replicas:\s+1 desired \| 0 updated \| 0 total \| 0 available \| 0 unavailable$/m,
    );
    expect(result.stdout).toMatch(/^StrategyType:\s+RollingUpdate$/m);
    expect(result.stdout).toMatch(/Port:\s+80\/TCP/);
  });

  it("a missing object gets kubectl's NotFound message", async () => {
    const { kubectl } = await cluster();
    const result = await kubectl(["get", "deploy", "nope"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('Error from server (NotFound): deployments.apps "nope" not found');
  });

  it("an invalid manifest gets the Invalid message naming the field", async () => {
    const { kubectl, file } = await cluster();
    const bad = deploymentYaml("bad", "nginx", -1);
    const result = await kubectl(["create", "-f", await file("bad.yaml", bad)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The Deployment "bad" is invalid');
    expect(result.stderr).toContain("spec.replicas");
    expect(result.stderr).toContain("must be greater than or equal to 0");
  });

  it("a Secret's stringData lands in data; a dual-stack Service on this single-stack cluster is refused as upstream words it", async () => {
    const { kubectl, file } = await cluster();
    const secret = await file(
      "secret.yaml",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: s3cret\n",
    );
    expect((await kubectl(["apply", "-f", secret])).stdout.trim()).toBe("secret/creds created");
    const data = await kubectl(["get", "secret", "creds", "-o", "jsonpath={.data.password}"]);
    expect(Buffer.from(data.stdout, "base64").toString()).toBe("s3cret");
    expect((await kubectl(["get", "secret", "creds", "-o", "jsonpath={.stringData}"])).stdout).toBe("");
    const service = await file(
      "svc.yaml",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: both\nspec:\n  ipFamilyPolicy: RequireDualStack\n  selector:\n    app: web\n  ports:\n  - port: 80\n",
    );
    const refused = await kubectl(["apply", "-f", service]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `The Service "both" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`,
    );
  });

  it("on a dual-stack cluster a Service gains an IP of each family, and drops one under SingleStack", async () => {
    const { kubectl } = await kubectlCluster({ serviceClusterIPRange: "10.96.0.0/16,fd00:10:96::/112" });
    expect((await kubectl(["create", "service", "clusterip", "web", "--tcp=80"])).stdout.trim()).toBe(
      "service/web created",
    );
    const fields = async () =>
      (
        await kubectl([
          "get",
          "svc",
          "web",
          "-o",
          "jsonpath={.spec.ipFamilyPolicy} {.spec.ipFamilies} {.spec.clusterIPs}",
        ])
      ).stdout;
    expect(await fields()).toMatch(/^SingleStack \["IPv4"\] \["10\.96\.\d+\.\d+"\]$/);
    const patched = await kubectl([
      "patch",
      "svc",
      "web",
      "-p",
      '{"spec":{"ipFamilyPolicy":"PreferDualStack"}}',
    ]);
    expect(patched.stdout.trim()).toBe("service/web patched");
    expect(await fields()).toMatch(
      /^PreferDualStack \["IPv4","IPv6"\] \["10\.96\.\d+\.\d+","fd00:10:96::[0-9a-f]+"\]$/,
    );
    const clusterIP = (await kubectl(["get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}"])).stdout;
    expect(rows((await kubectl(["get", "svc", "web"])).stdout)[1]?.slice(0, 4)).toEqual([
      "web",
      "ClusterIP",
      clusterIP,
      "<none>",
    ]);
    const shorten = await kubectl([
      "patch",
      "svc",
      "web",
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/spec/clusterIPs/1"}]',
    ]);
    expect(shorten.code).toBe(1);
    expect(shorten.stderr.trim()).toBe(
      `The Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP`,
    );
    await kubectl(["patch", "svc", "web", "-p", '{"spec":{"ipFamilyPolicy":"SingleStack"}}']);
    expect(await fields()).toBe(`SingleStack ["IPv4"] ["${clusterIP}"]`);
  });

  it("bad values are printed as Go prints them: a label map, a selector, a roleRef", async () => {
    const { kubectl, file } = await cluster();
    const mismatched = deploymentYaml("bad", "nginx", 1).replace(
      "labels: {app: bad}\n    spec:",
      "labels: {app: other}\n    spec:",
    );
    const refused = await kubectl(["create", "-f", await file("bad.yaml", mismatched)]);
    expect(refused.stderr.trim()).toBe(
      'The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
    );
    await kubectl(["create", "-f", await file("web.yaml", deploymentYaml("web", "nginx", 1))]);
    const moved = await kubectl([
      "patch",
      "deploy",
      "web",
      "-p",
      '{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}',
    ]);
    expect(moved.stderr.trim()).toBe(
      'The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    );
    await kubectl(["create", "rolebinding", "rb", "--clusterrole=view", "--user=jane"]);
    const rebound = await kubectl([
      "patch",
      "rolebinding",
      "rb",
      "--type=merge",
      "-p",
      '{"roleRef":{"name":"edit"}}',
    ]);
    expect(rebound.stderr.trim()).toBe(
      'The RoleBinding "rb" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    );
  });

  it("a stale update gets a Conflict", async () => {
    const { kubectl, file } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx"]);
    const stale = await file("stale.yaml", (await kubectl(["get", "deploy", "web", "-o", "yaml"])).stdout);
    await kubectl(["label", "deploy", "web", "x=y"]);
    const result = await kubectl(["replace", "-f", stale]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Error from server (Conflict): error when replacing "' +
        stale +
        '": Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    );
  });
});
