import {
  type DeepReadonly,
  type NodeMetrics,
  type Pod,
  type PodMetrics,
  Quantity,
  rfc3339,
} from "@reconcile/api";
import type { Kubelet } from "./kubelet.js";
import type { KubeletOptions } from "./kubelet-options.js";
import { defaultNodeResources } from "./node-status.js";
import { goDuration } from "./runtime-manager.js";

// What a kubelet's HTTP server (port 10250) answers for the API server's
// `nodes/{name}/proxy/…`: `/healthz`, `/pods`, `/configz`, the Summary API
// (`/stats/summary`) and the resource metrics metrics-server scrapes
// (`/metrics/resource`), from the simulated node's own state and usage.

/** One answer of the kubelet's server. */
export interface KubeletHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the answers are computed from besides the kubelet: its usage now, and when it started. */
export interface KubeletServerState {
  readonly kubelet: Kubelet;
  /** What the kubelet was made with, for `/configz`. */
  readonly options: KubeletOptions;
  readonly now: number;
  readonly startedAt: number;
  /** The node's and its pods' usage now (`collectResourceMetrics`). */
  readonly usage: () => { node: NodeMetrics | undefined; pods: PodMetrics[] };
}

/** A usage quantity as a number, not rounded (`51m` is 0.051 cores). */
const amount = (quantity: string) => Quantity.parse(quantity).asApproximateFloat64();

const json = (value: unknown): KubeletHttpAnswer => ({
  status: 200,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(value),
});
const text = (status: number, body: string): KubeletHttpAnswer => ({
  status,
  headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" },
  body,
});

/** The kubelet's answer to `method path`; the 404 of Go's mux for anything it does not serve. */
export function kubeletHttpAnswer(
  state: KubeletServerState,
  method: string,
  path: string,
): KubeletHttpAnswer {
  if (method !== "GET" && method !== "HEAD") return text(405, "Method Not Allowed\n");
  switch (path.replace(/\?.*$/, "")) {
    case "/healthz":
      return text(200, "ok");
    case "/pods":
    case "/pods/":
      return json({
        kind: "PodList",
        apiVersion: "v1",
        metadata: {},
        items: state.kubelet.getPods(),
      });
    case "/configz":
      return json({ kubeletconfig: kubeletConfiguration(state.options) });
    case "/stats/summary":
    case "/stats/summary/":
      return json(summary(state));
    case "/metrics/resource":
      return {
        status: 200,
        headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" },
        body: resourceMetricsText(state),
      };
    default:
      return text(404, "404 page not found\n");
  }
}

/**
 * The kubelet's configuration as `/configz` shows it (`KubeletConfiguration`,
 * kubelet.config.k8s.io/v1beta1): what this kubelet was given, and kubeadm's
 * defaults for what a simulated node has no say in.
 */
export function kubeletConfiguration(options: KubeletOptions): Record<string, unknown> {
  const maxPods = Number(options.resources?.pods ?? defaultNodeResources.pods);
  return {
    kind: "KubeletConfiguration",
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    enableServer: true,
    ...(options.staticPodPath === undefined ? {} : { staticPodPath: options.staticPodPath }),
    podLogsDir: "/var/log/pods",
    syncFrequency: goDuration(options.syncFrequencyMs ?? 60_000),
    fileCheckFrequency: goDuration(options.staticPodCheckFrequencyMs ?? 20_000),
    httpCheckFrequency: goDuration(options.httpCheckFrequencyMs ?? 20_000),
    ...(options.staticPodURL === undefined ? {} : { staticPodURL: options.staticPodURL }),
    address: "0.0.0.0",
    port: 10250,
    authentication: {
      x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" },
      webhook: { enabled: true, cacheTTL: "2m0s" },
      anonymous: { enabled: false },
    },
    authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "5m0s", cacheUnauthorizedTTL: "30s" } },
    healthzPort: 10248,
    healthzBindAddress: "127.0.0.1",
    clusterDomain: "cluster.local",
    clusterDNS: ["10.96.0.10"],
    nodeStatusUpdateFrequency: goDuration(options.nodeStatusUpdateFrequencyMs ?? 10_000),
    nodeStatusReportFrequency: goDuration(options.nodeStatusReportFrequencyMs ?? 300_000),
    cgroupDriver: "systemd",
    maxPods,
    podPidsLimit: -1,
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "10%",
      "imagefs.available": "15%",
      "nodefs.inodesFree": "5%",
    },
    nodeLeaseDurationSeconds: options.nodeLeaseDurationSeconds ?? 40,
    containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
  };
}

/** CPU in cores and memory in bytes. */
interface Usage {
  cores: number;
  bytes: number;
}

/** One running pod of the node: when it started, its containers' usage and its own (their sum). */
interface PodUsage extends Usage {
  pod: DeepReadonly<Pod>;
  start: number;
  containers: (Usage & { name: string })[];
}

const usageOf = (metrics: { cpu?: string; memory?: string } | undefined): Usage => ({
  cores: amount(metrics?.cpu ?? "0"),
  bytes: amount(metrics?.memory ?? "0"),
});

/** The node's usage, and each of its running pods' (those both the usage and the kubelet know). */
function nodeUsage(state: KubeletServerState): { node: Usage; pods: PodUsage[] } {
  const usage = state.usage();
  const byKey = new Map(
    state.kubelet.getPods().map((pod) => [`${pod.metadata?.namespace}/${pod.metadata?.name}`, pod]),
  );
  const pods: PodUsage[] = [];
  for (const metrics of usage.pods) {
    const pod = byKey.get(`${metrics.metadata?.namespace}/${metrics.metadata?.name}`);
    if (pod === undefined) continue;
    const started = Date.parse(pod.status?.startTime ?? "");
    const containers = metrics.containers.map((c) => ({ name: c.name, ...usageOf(c.usage) }));
    pods.push({
      pod,
      start: Number.isNaN(started) ? state.startedAt : started,
      containers,
      cores: containers.reduce((sum, c) => sum + c.cores, 0),
      bytes: containers.reduce((sum, c) => sum + c.bytes, 0),
    });
  }
  return { node: usageOf(usage.node?.usage), pods };
}

/** Usage as the Summary API writes it: nanocores and bytes, with the CPU time of `seconds` at that rate. */
function stats({ cores, bytes }: Usage, time: string, seconds: number) {
  const nanoCores = Math.round(cores * 1e9);
  const roundBytes = Math.round(bytes);
  return {
    cpu: { time, usageNanoCores: nanoCores, usageCoreNanoSeconds: Math.round(nanoCores * seconds) },
    memory: {
      time,
      usageBytes: roundBytes,
      workingSetBytes: roundBytes,
      rssBytes: roundBytes,
      pageFaults: 0,
      majorPageFaults: 0,
    },
  };
}

/** The Summary API (`stats/v1alpha1.Summary`): the node's and each running pod's CPU and memory. */
function summary(state: KubeletServerState) {
  const { kubelet, now, startedAt } = state;
  const time = rfc3339(now);
  const usage = nodeUsage(state);
  const node = stats(usage.node, time, (now - startedAt) / 1000);
  const available = Math.max(0, kubelet.nodeStatus.allocatable().memory - node.memory.workingSetBytes);
  const pods = usage.pods.map(({ pod, start, containers, ...total }) => {
    const seconds = (now - start) / 1000;
    return {
      podRef: { name: pod.metadata?.name, namespace: pod.metadata?.namespace, uid: pod.metadata?.uid },
      startTime: rfc3339(start),
      containers: containers.map((c) => ({
        name: c.name,
        startTime: rfc3339(start),
        ...stats(c, time, seconds),
      })),
      ...stats(total, time, seconds),
    };
  });
  return {
    node: {
      nodeName: kubelet.nodeName,
      startTime: rfc3339(startedAt),
      cpu: node.cpu,
      memory: { ...node.memory, availableBytes: available },
    },
    pods,
  };
}

/**
 * Go's `strconv.FormatFloat(v, 'g', -1, 64)`, as the Prometheus text encoder
 * writes values: the shortest digits, with an exponent (`4.194304e+06`) when
 * it is below -4 or at least 6.
 */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value === 0) return "0";
  const [mantissa, power] = value.toExponential().split("e") as [string, string];
  const exponent = Number(power);
  if (exponent < -4 || exponent >= 6)
    return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  return String(value);
}

const stable = (help: string) => `[STABLE] ${help}`;

/** The kubelet's `/metrics/resource` in Prometheus' text format, families sorted by name. */
function resourceMetricsText(state: KubeletServerState): string {
  const { now, startedAt } = state;
  const usage = nodeUsage(state);
  const families: [string, string, string, string[]][] = [];
  const containerCpu: string[] = [];
  const containerMemory: string[] = [];
  const containerStart: string[] = [];
  const podCpu: string[] = [];
  const podMemory: string[] = [];
  for (const { pod, start, containers, cores, bytes } of usage.pods) {
    const seconds = (now - start) / 1000;
    const podLabels = `namespace="${pod.metadata?.namespace}",pod="${pod.metadata?.name}"`;
    for (const c of containers) {
      const labels = `{container="${c.name}",${podLabels}}`;
      containerCpu.push(`container_cpu_usage_seconds_total${labels} ${goFloat(c.cores * seconds)} ${now}`);
      containerMemory.push(`container_memory_working_set_bytes${labels} ${goFloat(c.bytes)} ${now}`);
      containerStart.push(`container_start_time_seconds${labels} ${goFloat(start / 1000)} ${now}`);
    }
    podCpu.push(`pod_cpu_usage_seconds_total{${podLabels}} ${goFloat(cores * seconds)} ${now}`);
    podMemory.push(`pod_memory_working_set_bytes{${podLabels}} ${goFloat(bytes)} ${now}`);
  }
  const { cores: nodeCores, bytes: nodeBytes } = usage.node;
  families.push(
    [
      "container_cpu_usage_seconds_total",
      "counter",
      "Cumulative cpu time consumed by the container in core-seconds",
      containerCpu,
    ],
    [
      "container_memory_working_set_bytes",
      "gauge",
      "Current working set of the container in bytes",
      containerMemory,
    ],
    [
      "container_start_time_seconds",
      "gauge",
      "Start time of the container since unix epoch in seconds",
      containerStart,
    ],
    [
      "node_cpu_usage_seconds_total",
      "counter",
      "Cumulative cpu time consumed by the node in core-seconds",
      [`node_cpu_usage_seconds_total ${goFloat((nodeCores * (now - startedAt)) / 1000)} ${now}`],
    ],
    [
      "node_memory_working_set_bytes",
      "gauge",
      "Current working set of the node in bytes",
      [`node_memory_working_set_bytes ${goFloat(nodeBytes)} ${now}`],
    ],
    [
      "pod_cpu_usage_seconds_total",
      "counter",
      "Cumulative cpu time consumed by the pod in core-seconds",
      podCpu,
    ],
    ["pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes", podMemory],
    [
      "resource_scrape_error",
      "gauge",
      "1 if there was an error while getting container metrics, 0 otherwise",
      ["resource_scrape_error 0"],
    ],
  );
  return families
    .flatMap(([name, type, help, samples]) => [
      `# HELP ${name} ${stable(help)}`,
      `# TYPE ${name} ${type}`,
      ...samples,
    ])
    .map((line) => `${line}\n`)
    .join("");
}
