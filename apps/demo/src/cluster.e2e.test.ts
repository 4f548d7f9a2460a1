// The real kubectl against the demo's cluster: API server over HTTP, the
// leader-elected controller manager (ReplicaSet, Deployment, Endpoints,
// EndpointSlice, Job, namespace and ServiceAccount controllers, …), the scheduler and three simulated nodes
// whose containers run their commands.
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateServingCertificates } from "@reconcile/apiserver";
import { prometheusApiServerMetrics } from "@reconcile/controller-manager";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, fastNodeLifecycle, newApiServer, startCluster } from "./cluster.js";
import { eventually } from "./e2e-helpers.js";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let cluster: Cluster;
let close: () => Promise<void>;
let kubectl: (...args: string[]) => Promise<Result>;
let managerUrl: string;
let kubectlEnv: Record<string, string>;
let rootCA: string;
/** What the authorizer denied the cluster's own components (kubelets, scheduler, controllers). */
const componentDenials: string[] = [];

beforeAll(async () => {
  const api = newApiServer();
  api.auth.onDenied((attributes, reason) => {
    const who = attributes.user.username;
    if (!/^system:(node:|kube-|serviceaccount:kube-system:)/.test(who)) return;
    const what = attributes.resourceRequest
      ? `${attributes.verb} ${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ""} ${attributes.namespace}/${attributes.name}`
      : `${attributes.verb} ${attributes.path}`;
    componentDenials.push(`${who}: ${what}${reason ? ` (${reason})` : ""}`);
  });
  rootCA = (await generateServingCertificates()).ca.cert;
  cluster = startCluster(api, { nodes: 3, nodeLifecycle: fastNodeLifecycle, rootCA });
  const listening = await api.listen({
    port: 0,
    kubeletConnection: cluster.kubeletConnection(),
    metrics: prometheusApiServerMetrics(),
  });
  const health = await cluster.controllerManagers[0]!.manager.listen();
  managerUrl = health.url;
  await cluster.synced;
  const home = await mkdtemp(join(tmpdir(), "reconcile-demo-e2e-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, listening.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  kubectlEnv = env;
  kubectl = (...args) =>
    new Promise((resolve) => {
      execFile(
        "kubectl",
        ["--request-timeout=20s", ...args],
        { env, timeout: 30_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  close = async () => {
    await health.close();
    await cluster.stop();
    await listening.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  };
});

afterAll(async () => {
  await close?.();
});

/** `kubectl apply -f -` with `manifest` on its standard input. */
async function applyStdin(manifest: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "kubectl",
      ["apply", "-f", "-", "--request-timeout=20s"],
      { env: kubectlEnv, timeout: 30_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`kubectl apply failed: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end(manifest);
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl(...args);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

describe("kubectl against the composed cluster", () => {
  it("get nodes lists the three simulated nodes, Ready", async () => {
    await expect
      .poll(async () => ok("get", "nodes", "--no-headers"), { timeout: 10_000 })
      .toMatch(/node-3\s+Ready/);
    const lines = (await ok("get", "nodes", "--no-headers")).trim().split("\n");
    expect(lines.map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      ["node-1", "Ready"],
      ["node-2", "Ready"],
      ["node-3", "Ready"],
    ]);
  });

  it("a Deployment rolls out; get pods -o wide shows each pod's node and IP, one pod per node", async () => {
    expect(await ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=80")).toBe(
      "deployment.apps/web created\n",
    );
    expect(await ok("rollout", "status", "deployment/web", "--timeout=20s")).toContain(
      'deployment "web" successfully rolled out',
    );
    const rows = (await ok("get", "pods", "-o", "wide", "--no-headers", "-l", "app=web"))
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/));
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row[1]).toBe("1/1");
      expect(row[2]).toBe("Running");
      expect(row[5]).toMatch(/^10\.244\.\d+\.\d+$/);
    }
    expect(rows.map((row) => row[6]).sort()).toEqual(["node-1", "node-2", "node-3"]);
  });

  it("describe pod shows Scheduled, then the kubelet's Pulling … Started events", async () => {
    const name = (
      await ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}")
    ).trim();
    const described = await ok("describe", "pod", name);
    const reasons = described
      .slice(described.indexOf("Events:"))
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[1])
      .filter((reason) => reason && !["Reason", "------"].includes(reason));
    expect(reasons).toEqual(["Scheduled", "Pulling", "Pulled", "Created", "Started"]);
    expect(described).toMatch(/Successfully assigned default\/\S+ to node-\d/);
  });

  it("expose: the Service's Endpoints and EndpointSlice list the ready pods' IPs on the target port", async () => {
    expect(await ok("expose", "deployment", "web", "--port=8080", "--target-port=80")).toBe(
      "service/web exposed\n",
    );
    // A cluster IP from the service CIDR (10.96.0.0/12), shown as kubectl shows a real cluster's.
    expect(await ok("get", "service", "web", "--no-headers")).toMatch(
      /^web\s+ClusterIP\s+10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+\s+<none>\s+8080\/TCP\s+\S+\n$/,
    );
    expect(await ok("get", "service", "kubernetes", "--no-headers")).toMatch(
      /^kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP\s+\S+\n$/,
    );
    const podIPs = (await ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}"))
      .trim()
      .split(" ")
      .sort();
    await expect
      .poll(
        async () =>
          (await ok("get", "endpoints", "web", "-o", "jsonpath={.subsets[*].addresses[*].ip}"))
            .trim()
            .split(" ")
            .sort(),
        { timeout: 10_000 },
      )
      .toEqual(podIPs);
    expect(await ok("get", "endpoints", "web", "-o", "jsonpath={.subsets[0].ports[0].port}")).toBe("80");
    const slices = JSON.parse(
      await ok("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "json"),
    );
    expect(slices.items).toHaveLength(1);
    expect(slices.items[0].metadata.labels["endpointslice.kubernetes.io/managed-by"]).toBe(
      "endpointslice-controller.k8s.io",
    );
    expect(slices.items[0].endpoints.map((e: { addresses: string[] }) => e.addresses[0]).sort()).toEqual(
      podIPs,
    );
  });

  it("cordon marks the node unschedulable, and the scheduler places new pods elsewhere", async () => {
    expect(await ok("cordon", "node-1")).toBe("node/node-1 cordoned\n");
    expect(await ok("get", "node", "node-1", "--no-headers")).toMatch(/^node-1\s+Ready,SchedulingDisabled/);
    // The node lifecycle controller mirrors spec.unschedulable as a taint.
    await eventually(async () =>
      /^Taints:\s+node\.kubernetes\.io\/unschedulable:NoSchedule$/m.test(
        await ok("describe", "node", "node-1"),
      ),
    );
    await ok("scale", "deployment/web", "--replicas=6");
    await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const nodes = (await ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"))
      .trim()
      .split(" ");
    expect(nodes.filter((node) => node === "node-1")).toHaveLength(1); // only the pod placed before the cordon
    expect(nodes).toHaveLength(6);
    expect(await ok("uncordon", "node-1")).toBe("node/node-1 uncordoned\n");
  });

  it("drain --ignore-daemonsets --delete-emptydir-data evicts a node's pods through pods/eviction; they come back elsewhere", async () => {
    const before = (await ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"))
      .trim()
      .split(" ");
    const onNode2 = before.filter((node) => node === "node-2").length;
    expect(onNode2).toBeGreaterThan(0);
    const drained = await kubectl(
      "drain",
      "node-2",
      "--ignore-daemonsets",
      "--delete-emptydir-data",
      "--timeout=20s",
    );
    expect(drained.code).toBe(0);
    const lines = drained.stdout.trim().split("\n");
    expect(lines[0]).toBe("node/node-2 cordoned");
    expect(lines.filter((line) => /^evicting pod default\/web-/.test(line))).toHaveLength(onNode2);
    expect(lines.filter((line) => /^pod\/web-\S+ evicted$/.test(line))).toHaveLength(onNode2);
    expect(lines.at(-1)).toBe("node/node-2 drained");
    expect(await ok("get", "node", "node-2", "--no-headers")).toMatch(/^node-2\s+Ready,SchedulingDisabled/);
    await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const after = (await ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}"))
      .trim()
      .split(" ");
    expect(after).toHaveLength(6);
    expect(after).not.toContain("node-2");
    expect(await ok("uncordon", "node-2")).toBe("node/node-2 uncordoned\n");
  });

  it("a PodDisruptionBudget holds drain back: the eviction is refused with 429 and retried until the timeout", async () => {
    await ok("create", "pdb", "web", "--selector=app=web", "--min-available=6");
    await eventually(
      async () =>
        (await ok("get", "pdb", "web", "-o=jsonpath={.status.currentHealthy}/{.status.desiredHealthy}")) ===
        "6/6",
    );
    expect(
      await ok("get", "pdb", "web", "-o=jsonpath={.status.disruptionsAllowed} {.status.expectedPods}"),
    ).toBe("0 6");
    const drained = await kubectl("drain", "node-3", "--ignore-daemonsets", "--timeout=3s");
    expect(drained.code).not.toBe(0);
    expect(drained.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(drained.stderr).toMatch(
      /error when evicting pods\/"web-\S+" -n "default" \(will retry after 5s\)/,
    );
    // Nothing was evicted: all six pods still run.
    expect(
      (await ok("get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "--no-headers"))
        .trim()
        .split("\n"),
    ).toHaveLength(6);
    await ok("uncordon", "node-3");
    await ok("delete", "pdb", "web");
  });

  it("every namespace gets the kube-root-ca.crt ConfigMap with the cluster's CA, and gets it back when deleted", async () => {
    const caOf = (namespace: string) =>
      kubectl("get", "configmap", "kube-root-ca.crt", "-n", namespace, "-o", "jsonpath={.data.ca\\.crt}");
    await eventually(async () => (await caOf("default")).stdout === rootCA);
    await ok("create", "namespace", "fresh");
    await eventually(async () => (await caOf("fresh")).stdout === rootCA);
    await ok("delete", "configmap", "kube-root-ca.crt", "-n", "fresh");
    await eventually(async () => (await caOf("fresh")).stdout === rootCA);
    await ok("delete", "namespace", "fresh", "--wait=false");
  });

  it("a ServiceAccount token Secret is filled with a token, the CA and the namespace (the docs' long-lived token)", async () => {
    await ok("create", "serviceaccount", "build-robot");
    await applyStdin(`apiVersion: v1
kind: Secret
metadata:
  name: build-robot-secret
  annotations:
    kubernetes.io/service-account.name: build-robot
type: kubernetes.io/service-account-token
`);
    const field = (path: string) =>
      kubectl("get", "secret", "build-robot-secret", "-o", `jsonpath={${path}}`);
    await eventually(async () => (await field(".data.token")).stdout !== "");
    const token = Buffer.from((await field(".data.token")).stdout, "base64").toString();
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims.sub).toBe("system:serviceaccount:default:build-robot");
    expect(Buffer.from((await field(".data.ca\\.crt")).stdout, "base64").toString()).toBe(rootCA);
    const described = await ok("describe", "secret", "build-robot-secret");
    expect(described).toMatch(/^Type:\s+kubernetes\.io\/service-account-token$/m);
    expect(described).toMatch(/^namespace:\s+7 bytes$/m);
    expect(described).toMatch(/^token:\s+ey/m);
    // Deleting the ServiceAccount deletes its token Secret.
    await ok("delete", "serviceaccount", "build-robot");
    await eventually(async () => (await kubectl("get", "secret", "build-robot-secret")).code === 1);
  });

  it("get --raw /metrics: the API server's request counts and latencies, and its stored objects", async () => {
    await ok("get", "pods");
    const metrics = await ok("get", "--raw", "/metrics");
    expect(metrics).toMatch(
      /^apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"\} [1-9]\d*$/m,
    );
    expect(metrics).toMatch(
      /^apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="pods",subresource="eviction",scope="resource",component="apiserver",code="201"\} [1-9]\d*$/m,
    );
    expect(metrics).toMatch(
      /^apiserver_request_duration_seconds_count\{verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",/m,
    );
    expect(metrics).toMatch(/^apiserver_storage_objects\{resource="nodes"\} 3$/m);
    expect(metrics).toMatch(/^apiserver_storage_objects\{resource="deployments.apps"\} 1$/m);
  });

  it("the controller manager's /healthz and /metrics answer, /metrics with the scheduler's families too", async () => {
    expect(await (await fetch(`${managerUrl}/healthz`)).text()).toBe("ok");
    const metrics = await (await fetch(`${managerUrl}/metrics`)).text();
    expect(metrics).toContain('leader_election_master_status{name="kube-controller-manager"} 1');
    expect(metrics).toMatch(/workqueue_adds_total\{name="endpoint"\} [1-9]/);
    expect(metrics).toMatch(/workqueue_adds_total\{name="endpoint_slice"\} [1-9]/);
    expect(metrics).toContain('node_collector_zone_size{zone=""} 3');
    expect(metrics).toContain('node_collector_zone_health{zone=""} 100');
    expect(metrics).toContain('node_collector_evictions_total{zone=""} 0');
    expect(metrics).toMatch(/^node_collector_update_all_nodes_health_duration_seconds_count [1-9]\d*$/m);
    expect(metrics).toContain("taint_eviction_controller_pod_deletions_total 0");
    expect(metrics).toMatch(
      /scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} [1-9]/,
    );
    expect(metrics).toMatch(/^kubelet_pod_start_sli_duration_seconds_count [1-9]\d*$/m);
    expect(metrics).toMatch(
      /^kubelet_pod_worker_duration_seconds_count\{operation_type="create"\} [1-9]\d*$/m,
    );
  });

  it("create job runs the command to completion: Complete 1/1, and logs job/hello prints hi", async () => {
    await ok("create", "job", "hello", "--image=busybox", "--", "echo", "hi");
    expect(await ok("wait", "--for=condition=complete", "job/hello", "--timeout=20s")).toBe(
      "job.batch/hello condition met\n",
    );
    expect(await ok("logs", "job/hello")).toBe("hi\n");
    const row = (await ok("get", "job", "hello", "--no-headers")).trim().split(/\s+/);
    expect(row.slice(0, 3)).toEqual(["hello", "Complete", "1/1"]);
    const pod = (await ok("get", "pods", "-l", "job-name=hello", "--no-headers")).trim().split(/\s+/);
    expect(pod.slice(1, 4)).toEqual(["0/1", "Completed", "0"]);
    const events = await ok(
      "get",
      "events",
      "--field-selector=involvedObject.name=hello",
      "-o=jsonpath={.items[*].reason}",
    );
    expect(events.split(" ")).toEqual(["SuccessfulCreate", "Completed"]);
  });

  it("run --restart=Never with a failing command ends Error with its exit code; an Indexed Job's pods know their index", async () => {
    await ok("run", "three", "--restart=Never", "--image=busybox", "--", "sh", "-c", "echo bye >&2; exit 3");
    await eventually(
      async () => (await ok("get", "pod", "three", "-o=jsonpath={.status.phase}")) === "Failed",
    );
    expect(
      await ok(
        "get",
        "pod",
        "three",
        "-o=jsonpath={.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}",
      ),
    ).toBe("3 Error");
    expect((await ok("get", "pod", "three", "--no-headers")).trim().split(/\s+/).slice(1, 3)).toEqual([
      "0/1",
      "Error",
    ]);
    expect(await ok("logs", "three")).toBe("bye\n");
    const manifest = JSON.stringify({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "indexed" },
      spec: {
        completions: 3,
        parallelism: 3,
        completionMode: "Indexed",
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [
              {
                name: "work",
                image: "busybox",
                command: ["sh", "-c", "echo index $JOB_COMPLETION_INDEX on $(hostname)"],
              },
            ],
          },
        },
      },
    });
    await applyStdin(manifest);
    await ok("wait", "--for=condition=complete", "job/indexed", "--timeout=20s");
    expect(
      await ok("get", "job", "indexed", "-o=jsonpath={.status.completedIndexes} {.status.succeeded}"),
    ).toBe("0-2 3");
    const logs = await ok("logs", "-l", "job-name=indexed", "--prefix=false");
    expect(logs.trim().split("\n").sort()).toEqual([
      "index 0 on indexed-0",
      "index 1 on indexed-1",
      "index 2 on indexed-2",
    ]);
  });

  it("a StatefulSet rolls out in ordinal order; set image, rollout history and undo work over its ControllerRevisions", async () => {
    await applyStdin(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: main, image: "nginx:1.27"}]}
`);
    expect(await ok("rollout", "status", "statefulset/db", "--timeout=20s")).toBe(
      "partitioned roll out complete: 2 new pods have been updated...\n",
    );
    const pods = await ok(
      "get",
      "pods",
      "-l",
      "app=db",
      "-o=jsonpath={range .items[*]}{.metadata.name} {.spec.hostname} {.spec.subdomain}{'\\n'}{end}",
    );
    expect(pods).toBe("db-0 db-0 db\ndb-1 db-1 db\n");
    await ok("set", "image", "statefulset/db", "main=nginx:1.28");
    await ok("rollout", "status", "statefulset/db", "--timeout=20s");
    await eventually(
      async () =>
        (await ok("get", "pods", "-l", "app=db", "-o=jsonpath={.items[*].spec.containers[0].image}")) ===
        "nginx:1.28 nginx:1.28",
    );
    expect(await ok("rollout", "history", "statefulset/db")).toBe(
      "statefulset.apps/db \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n",
    );
    expect(await ok("rollout", "history", "statefulset/db", "--revision=1")).toContain("Image:\tnginx:1.27");
    expect(await ok("rollout", "undo", "statefulset/db")).toBe("statefulset.apps/db rolled back\n");
    await eventually(
      async () =>
        (await ok("get", "pods", "-l", "app=db", "-o=jsonpath={.items[*].spec.containers[0].image}")) ===
        "nginx:1.27 nginx:1.27",
    );
    const revisions = await ok(
      "get",
      "controllerrevisions",
      "-l",
      "app=db",
      "--sort-by=.revision",
      "--no-headers",
    );
    expect(
      revisions
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/).slice(1, 3)),
    ).toEqual([
      ["statefulset.apps/db", "2"],
      ["statefulset.apps/db", "3"],
    ]);
    await ok("delete", "statefulset", "db");
  });

  it("a DaemonSet puts one pod on each node through the scheduler, and rolls a new image out node by node", async () => {
    await applyStdin(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: main, image: "nginx:1.27"}]}
`);
    expect(await ok("rollout", "status", "daemonset/agent", "--timeout=20s")).toContain(
      'daemon set "agent" successfully rolled out\n',
    );
    const nodesOf = async () =>
      (await ok("get", "pods", "-l", "app=agent", "-o=jsonpath={.items[*].spec.nodeName}"))
        .split(" ")
        .sort()
        .join(" ");
    expect(await nodesOf()).toBe("node-1 node-2 node-3");
    const row = (await ok("get", "daemonset", "agent", "--no-headers")).trim().split(/\s+/);
    expect(row.slice(0, 6)).toEqual(["agent", "3", "3", "3", "3", "3"]);
    await ok("set", "image", "daemonset/agent", "main=nginx:1.28");
    expect(await ok("rollout", "status", "daemonset/agent", "--timeout=20s")).toContain(
      'daemon set "agent" successfully rolled out\n',
    );
    await eventually(
      async () =>
        (await ok("get", "pods", "-l", "app=agent", "-o=jsonpath={.items[*].spec.containers[0].image}")) ===
        "nginx:1.28 nginx:1.28 nginx:1.28",
    );
    expect(await nodesOf()).toBe("node-1 node-2 node-3");
    expect(await ok("rollout", "history", "daemonset/agent")).toBe(
      "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n",
    );
    await ok("delete", "daemonset", "agent");
    await eventually(async () => (await ok("get", "pods", "-l", "app=agent", "-o=name")) === "");
  });

  it("top shows the nodes' and pods' usage, and autoscale makes an HPA that get hpa prints", async () => {
    await applyStdin(`apiVersion: apps/v1
kind: Deployment
metadata: {name: busy}
spec:
  replicas: 2
  selector: {matchLabels: {app: busy}}
  template:
    metadata:
      labels: {app: busy}
      annotations: {sim.reconcile.dev/cpu-load: "300m", sim.reconcile.dev/memory-usage: "32Mi"}
    spec: {containers: [{name: main, image: nginx, resources: {requests: {cpu: 100m}}}]}
`);
    await ok("rollout", "status", "deployment/busy", "--timeout=20s");
    const rows = (await ok("top", "pods", "-l", "app=busy", "--no-headers")).trim().split("\n");
    // The workload's 300m load shared by its 2 pods, plus each container's idle 1m.
    expect(rows.map((row) => row.trim().split(/\s+/).slice(1))).toEqual([
      ["151m", "32Mi"],
      ["151m", "32Mi"],
    ]);
    const nodes = (await ok("top", "nodes", "--no-headers")).trim().split("\n");
    expect(nodes.map((row) => row.split(/\s+/)[0])).toEqual(["node-1", "node-2", "node-3"]);
    expect(await ok("autoscale", "deployment", "busy", "--cpu-percent=50", "--max=5")).toBe(
      "horizontalpodautoscaler.autoscaling/busy autoscaled\n",
    );
    const hpa = (await ok("get", "hpa", "busy", "--no-headers")).trim().split(/\s{2,}/);
    expect(hpa[0]).toBe("busy");
    expect(hpa[1]).toBe("Deployment/busy");
    expect(hpa[2]).toMatch(/^cpu: (<unknown>|\d+%)\/50%$/);
    expect(hpa.slice(3, 5)).toEqual(["1", "5"]);
    await ok("delete", "hpa", "busy");
    await ok("delete", "deployment", "busy");
  });

  it("exec runs commands in a running container: output, exit codes, standard input", async () => {
    await ok("run", "box", "--image=busybox", "--", "sleep", "3600");
    await eventually(
      async () => (await ok("get", "pod", "box", "-o=jsonpath={.status.phase}")) === "Running",
    );
    expect(await ok("exec", "box", "--", "sh", "-c", "echo $HOSTNAME; cat /etc/hostname")).toBe("box\nbox\n");
    const failing = await kubectl("exec", "box", "--", "sh", "-c", "echo err >&2; exit 4");
    expect(failing).toEqual({ code: 4, stdout: "", stderr: "err\ncommand terminated with exit code 4\n" });
    const piped = await new Promise<Result>((resolve) => {
      const child = execFile(
        "kubectl",
        ["--request-timeout=20s", "exec", "-i", "box", "--", "sh"],
        { env: kubectlEnv, timeout: 30_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      );
      child.stdin?.end("x=41\necho $((x + 1))\nmkdir -p /data && echo kept > /data/f\n");
    });
    expect(piped).toEqual({ code: 0, stdout: "42\n", stderr: "" });
    expect(await ok("exec", "box", "--", "cat", "/data/f")).toBe("kept\n");
  });

  it("cp copies a binary file and a directory into a container and back, byte for byte", async () => {
    const local = await mkdtemp(join(tmpdir(), "reconcile-cp-"));
    try {
      const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));
      await writeFile(join(local, "blob.bin"), bytes);
      await mkdir(join(local, "tree", "sub"), { recursive: true });
      await writeFile(join(local, "tree", "a.txt"), "alpha\n");
      await writeFile(join(local, "tree", "sub", "b.txt"), "beta\n");
      await ok("cp", join(local, "blob.bin"), "box:/tmp/blob.bin");
      await ok("cp", join(local, "tree"), "box:/tmp/tree");
      expect(await ok("exec", "box", "--", "ls", "/tmp/tree", "/tmp/tree/sub")).toBe("a.txt\nsub\nb.txt\n");
      const back = await kubectl("cp", "box:/tmp/blob.bin", join(local, "back.bin"));
      // kubectl cp wires the remote tar's warning to its standard output, but returns once the
      // archive is read without waiting for that stream: the warning shows or not, by timing, as
      // on any cluster. kubectl exec waits for every stream, so the warning is checked there.
      expect(back.code).toBe(0);
      expect(back.stderr).toBe("");
      expect(["", "tar: removing leading '/' from member names\n"]).toContain(back.stdout);
      const tarred = await kubectl("exec", "box", "--", "tar", "cf", "-", "/tmp/tree/a.txt");
      expect(tarred.stderr).toBe("tar: removing leading '/' from member names\n");
      expect(Buffer.compare(await readFile(join(local, "back.bin")), bytes)).toBe(0);
      await ok("cp", "box:/tmp/tree", join(local, "tree-back"));
      expect(await readFile(join(local, "tree-back", "sub", "b.txt"), "utf8")).toBe("beta\n");
    } finally {
      await rm(local, { recursive: true, force: true });
    }
  });

  it("port-forward reaches a container port over the WebSocket tunnel, and reports a port nothing listens on", async () => {
    await ok("run", "web-pf", "--image=nginx", "--port=80");
    await eventually(
      async () => (await ok("get", "pod", "web-pf", "-o=jsonpath={.status.phase}")) === "Running",
    );
    const forward = async (ports: string, path: string) => {
      const child = spawn("kubectl", ["--request-timeout=20s", "port-forward", "pod/web-pf", ports], {
        env: kubectlEnv,
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      try {
        await eventually(async () => /Forwarding from 127\.0\.0\.1:\d+/.test(output));
        const port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output)![1];
        const answer = await fetch(`http://127.0.0.1:${port}${path}`).then(
          async (response) => `${response.status} ${await response.text()}`,
          (error: unknown) => `failed: ${String(error)}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { answer, output };
      } finally {
        child.kill();
      }
    };
    // nginx's image listens on 80 and serves its welcome page, as the real one does.
    const served = await forward(":80", "/");
    expect(served.answer).toMatch(/^200 <!DOCTYPE html>\n[\s\S]*<h1>Welcome to nginx!<\/h1>/);
    expect((await forward(":80", "/hello")).answer).toMatch(
      /^404 <html>\r\n<head><title>404 Not Found<\/title>/,
    );
    const refused = await forward(":81", "/");
    expect(refused.answer).toMatch(/^failed: /);
    expect(refused.output).toMatch(
      /an error occurred forwarding \d+ -> 81: error forwarding port 81 to pod [0-9a-f]{64}, uid : failed to execute portforward in network namespace .*connect: connection refused/,
    );
    await ok("delete", "pod", "web-pf", "--grace-period=0");
  });

  it("attach reaches a container's own shell: what is sent runs there, and its exit ends the container", async () => {
    await applyStdin(
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "console" },
        spec: { restartPolicy: "Never", containers: [{ name: "console", image: "busybox", stdin: true }] },
      }),
    );
    await eventually(
      async () => (await ok("get", "pod", "console", "-o=jsonpath={.status.phase}")) === "Running",
    );
    const attached = await new Promise<Result>((resolve) => {
      const child = execFile(
        "kubectl",
        ["--request-timeout=20s", "attach", "-i", "console"],
        { env: kubectlEnv, timeout: 30_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      );
      child.stdin?.write("echo attached to $(hostname)\n");
      setTimeout(() => child.stdin?.end("exit 0\n"), 500);
    });
    expect(attached.stdout).toBe("attached to console\n");
    expect(attached.code).toBe(0);
    await eventually(
      async () => (await ok("get", "pod", "console", "-o=jsonpath={.status.phase}")) === "Succeeded",
    );
    expect(await ok("logs", "console")).toBe("attached to console\n");
  });

  it("every namespace has its default ServiceAccount; delete ns shows Terminating while it drains, then it is gone", async () => {
    await ok("create", "namespace", "scratch");
    await ok("create", "configmap", "settings", "-n", "scratch", "--from-literal=color=red");
    await eventually(async () => (await kubectl("get", "sa", "default", "-n", "scratch")).code === 0);
    const accounts = (await ok("get", "sa", "-A", "--no-headers")).trim().split("\n");
    // kube-system also holds the ServiceAccount each controller runs as (--use-service-account-credentials).
    const controllers = [
      "certificate-controller",
      "cronjob-controller",
      "daemon-set-controller",
      "default",
      "deployment-controller",
      "disruption-controller",
      "endpoint-controller",
      "endpointslice-controller",
      "horizontal-pod-autoscaler",
      "job-controller",
      "namespace-controller",
      "node-controller",
      "persistent-volume-binder",
      "pod-garbage-collector",
      "pv-protection-controller",
      "pvc-protection-controller",
      "replicaset-controller",
      "resourcequota-controller",
      "root-ca-cert-publisher",
      "service-account-controller",
      "statefulset-controller",
      "ttl-after-finished-controller",
    ];
    expect(accounts.map((line) => line.split(/\s+/).slice(0, 2).join("/"))).toEqual([
      "default/default",
      "kube-node-lease/default",
      "kube-public/default",
      ...controllers.map((name) => `kube-system/${name}`),
      "scratch/default",
    ]);
    expect(await ok("delete", "namespace", "scratch", "--wait=false")).toBe('namespace "scratch" deleted\n');
    expect(await ok("get", "namespace", "scratch", "--no-headers")).toMatch(/^scratch\s+Terminating\s/);
    // The namespace controller looks 5 s after the delete, empties it, and removes its finalizer.
    await eventually(async () => (await kubectl("get", "namespace", "scratch")).code !== 0);
    expect((await kubectl("get", "namespace", "scratch")).stderr).toContain('namespaces "scratch" not found');
    expect((await kubectl("get", "configmaps", "-n", "scratch")).stderr).toContain(
      "No resources found in scratch namespace.",
    );
  });

  it("a claim a running pod uses stays Terminating until the pod is gone (StorageObjectInUseProtection)", async () => {
    await applyStdin(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: kept}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: keeper}
spec:
  containers: [{name: app, image: busybox, command: [sleep, "3600"], volumeMounts: [{name: data, mountPath: /data}]}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: kept}}]
`);
    expect(await ok("get", "pvc", "kept", "-o", "jsonpath={.metadata.finalizers}")).toBe(
      '["kubernetes.io/pvc-protection"]',
    );
    await eventually(async () => (await ok("get", "pod", "keeper", "--no-headers")).includes("Running"));
    expect(await ok("delete", "pvc", "kept", "--wait=false")).toBe('persistentvolumeclaim "kept" deleted\n');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await ok("get", "pvc", "kept", "--no-headers")).toMatch(/^kept\s+Terminating\s/);
    await ok("delete", "pod", "keeper", "--grace-period=0", "--force");
    await eventually(async () => (await kubectl("get", "pvc", "kept")).code !== 0);
  });

  it("pods that repel each other spread one per node; the one left over is Pending with upstream's reason", async () => {
    await applyStdin(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: apart
spec:
  replicas: 4
  selector:
    matchLabels: {app: apart}
  template:
    metadata:
      labels: {app: apart}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels: {app: apart}
      containers:
      - name: app
        image: nginx:1.27
`);
    const phases = async () =>
      (
        await ok(
          "get",
          "pods",
          "-l",
          "app=apart",
          "-o",
          "jsonpath={range .items[*]}{.status.phase} {.spec.nodeName}{'\\n'}{end}",
        )
      )
        .trim()
        .split("\n")
        .map((row) => row.trim())
        .sort();
    await eventually(async () => (await phases()).filter((row) => row.startsWith("Running")).length === 3);
    const rows = await phases();
    expect(rows).toEqual(["Pending", "Running node-1", "Running node-2", "Running node-3"]);
    const pending = (
      await ok("get", "pods", "-l", "app=apart", "--field-selector=status.phase=Pending", "-o", "name")
    ).trim();
    await eventually(async () => /FailedScheduling/.test(await ok("describe", pending)));
    expect(await ok("describe", pending)).toMatch(
      /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/3 nodes are available: 3 node\(s\) didn't match pod anti-affinity rules\. preemption: 0\/3 nodes are available: 3 No preemption victims found for incoming pod\./,
    );
    await ok("delete", "deployment", "apart");
  });

  it("a node whose kubelet stops heartbeating goes NotReady, with the conditions, taints and events of a real cluster", async () => {
    await cluster.stopNode("node-3");
    await eventually(async () =>
      /^node-3\s+NotReady\s/.test(await ok("get", "node", "node-3", "--no-headers")),
    );
    // The NoExecute taint follows on the next monitor pass, through the zone's rate-limited queue.
    const taintsOf = (text: string) =>
      (/^Taints:([\s\S]*?)^Unschedulable:/m.exec(text)?.[1] ?? "").trim().split(/\s+/).sort();
    await eventually(async () => taintsOf(await ok("describe", "node", "node-3")).length === 2);
    const described = await ok("describe", "node", "node-3");
    expect(taintsOf(described)).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
    ]);
    for (const type of ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]) {
      expect(described).toMatch(
        new RegExp(
          `^\\s+${type}\\s+Unknown\\s.*\\sNodeStatusUnknown\\s+Kubelet stopped posting node status\\.$`,
          "m",
        ),
      );
    }
    expect(described).toMatch(
      /Normal\s+NodeNotReady\s+.*node-controller\s+Node node-3 status is now: NodeNotReady/,
    );
    expect(described).toMatch(
      /Normal\s+RegisteredNode\s+.*node-controller\s+Node node-3 event: Registered Node node-3 in Controller/,
    );
  });
});

describe("the cluster's own components", () => {
  // Runs last (vitest runs files' describe blocks in order): after every scenario above.
  it("were never denied anything: each runs with exactly the permissions it needs", () => {
    expect(componentDenials).toEqual([]);
  });
});
