// The kubelet's Node: registration (`registerWithAPIServer`), the status
// setters (addresses, capacity and allocatable, nodeInfo, daemon endpoints,
// images, the MemoryPressure / DiskPressure / PIDPressure / Ready
// conditions) and the periodic update, which patches `nodes/<n>/status`
// only when something other than heartbeat times changed, or every report
// period (5 min) otherwise. Liveness comes from the Lease (node-lease.ts).
import { type DeepReadonly, isAlreadyExists, isNotFound, nodes, parseQuantity } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder, Logger } from "@reconcile/controller";
import type { Node, NodeCondition, NodeStatus } from "kubernetes-types/core/v1.js";
import { registerCSINode } from "./csi-node.js";
import { seconds } from "./pod-status.js";
import { wholeUnits } from "./quantity.js";
import type { ContainerRuntime } from "./runtime/runtime.js";
import { mergePatchDiff } from "./status-manager.js";

/** What the kubelet reports about its machine. */
export interface NodeResources {
  /** Cores, e.g. "4". */
  cpu: string;
  /** e.g. "16Gi". */
  memory: string;
  /** maxPods. */
  pods: string;
  /** Root filesystem size, e.g. "100Gi". */
  ephemeralStorage: string;
}

export const defaultNodeResources: Readonly<NodeResources> = Object.freeze({
  cpu: "4",
  memory: "16Gi",
  pods: "110",
  ephemeralStorage: "100Gi",
});

export interface NodeStatusOptions {
  client: Client;
  nodeName: string;
  nodeIP: string;
  resources: NodeResources;
  /** `--node-labels`, laid over the kubelet's own. */
  labels: Readonly<Record<string, string>>;
  podCIDR: string | undefined;
  runtime: ContainerRuntime;
  kubeletVersion: string;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** Reported health of the runtime for the Ready condition: undefined = healthy, else the error text. */
  runtimeProblem: () => string | undefined;
  /** `nodeStatusReportFrequency`. */
  reportFrequencyMs: number;
}

const hardEvictionMemory = 100 * 2 ** 20;

const pressureConditions = [
  {
    type: "MemoryPressure",
    reason: "KubeletHasSufficientMemory",
    message: "kubelet has sufficient memory available",
    event: "NodeHasSufficientMemory",
  },
  {
    type: "DiskPressure",
    reason: "KubeletHasNoDiskPressure",
    message: "kubelet has no disk pressure",
    event: "NodeHasNoDiskPressure",
  },
  {
    type: "PIDPressure",
    reason: "KubeletHasSufficientPID",
    message: "kubelet has sufficient PID available",
    event: "NodeHasSufficientPID",
  },
] as const;

/** See the file comment. */
export class NodeStatusManager {
  /** Status patches sent, for benchmarks. */
  writes = 0;
  readonly #o: NodeStatusOptions;
  #registered = false;
  #csiNodeRegistered = false;
  #lastReport = Number.NEGATIVE_INFINITY;
  #node: DeepReadonly<Node> | undefined;
  #labels: Readonly<Record<string, string>> | undefined;

  constructor(options: NodeStatusOptions) {
    this.#o = options;
  }

  get registered(): boolean {
    return this.#registered;
  }

  /** The Node as last read or written. */
  get node(): DeepReadonly<Node> | undefined {
    return this.#node;
  }

  /** The allocatable resources admission checks against (capacity minus the hard eviction threshold). */
  allocatable(): { milliCpu: number; memory: number; pods: number } {
    const r = this.#o.resources;
    return {
      milliCpu: Math.round(Number(r.cpu) * 1000) || wholeUnits(r.cpu) * 1000,
      memory: Math.max(0, wholeUnits(r.memory) - hardEvictionMemory),
      pods: wholeUnits(r.pods),
    };
  }

  /** The labels the kubelet gives its Node, for admission's nodeSelector check. */
  initialNodeLabels(): Readonly<Record<string, string>> {
    return (this.#labels ??= this.initialNode(undefined, false).metadata?.labels ?? {});
  }

  /**
   * Runs `syncNodeStatus` every `periodMs` (`nodeStatusUpdateFrequency`,
   * jittered by 4 %) until `signal` aborts; a failure is logged and retried
   * at the next period.
   */
  async run({
    signal,
    periodMs,
    random = Math.random,
  }: {
    signal: AbortSignal;
    periodMs: number;
    random?: (() => number) | undefined;
  }): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.syncNodeStatus(signal);
      } catch (error) {
        if (!signal.aborted)
          this.#o.logger.error({ err: error, node: this.#o.nodeName }, "unable to update node status");
      }
      try {
        await this.#o.clock.sleep(periodMs + random() * 0.04 * periodMs, { signal });
      } catch {
        return;
      }
    }
  }

  /** One run of `syncNodeStatus`: register if not yet registered, then update the status. */
  async syncNodeStatus(signal: AbortSignal): Promise<void> {
    if (!this.#registered) {
      await this.#register(signal);
      if (!this.#registered) return;
    }
    if (!this.#csiNodeRegistered && this.#node !== undefined) await this.#registerCSINode(this.#node, signal);
    await this.#updateNodeStatus(signal);
  }

  /** The node's CSINode, once; a failure is logged and tried again at the next sync. */
  async #registerCSINode(node: DeepReadonly<Node>, signal: AbortSignal): Promise<void> {
    try {
      await registerCSINode(this.#o.client, node, signal);
      this.#csiNodeRegistered = true;
    } catch (error) {
      this.#o.logger.error({ err: error, node: this.#o.nodeName }, "unable to create the node's CSINode");
    }
  }

  async #register(signal: AbortSignal): Promise<void> {
    const node = this.initialNode(undefined);
    const client = this.#o.client.resource(nodes);
    try {
      this.#node = await client.create(node, { signal });
      this.writes++;
      this.#registered = true;
      this.#lastReport = this.#o.clock.now();
      return;
    } catch (error) {
      if (!isAlreadyExists(error)) {
        this.#o.logger.error({ err: error, node: this.#o.nodeName }, "unable to register node");
        return;
      }
    }
    // The Node exists (a restart): reconcile default labels and capacity, never user labels or taints.
    const existing = await client.get(this.#o.nodeName, { signal });
    const labels = { ...existing.metadata?.labels };
    let changed = false;
    for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
      if (labels[key] !== value) {
        labels[key] = value;
        changed = true;
      }
    }
    this.#node = changed
      ? await client.patch(this.#o.nodeName, { metadata: { labels } }, { type: "merge", signal })
      : existing;
    this.#registered = true;
  }

  async #updateNodeStatus(signal: AbortSignal): Promise<void> {
    const client = this.#o.client.resource(nodes);
    let current: DeepReadonly<Node>;
    try {
      current = await client.get(this.#o.nodeName, { signal });
    } catch (error) {
      if (isNotFound(error)) this.#registered = false; // deleted: register again next time
      throw error;
    }
    const next = this.initialNode(current);
    const old = (current.status ?? {}) as NodeStatus;
    const status = next.status as NodeStatus;
    const changed = nodeStatusHasChanged(old, status);
    const now = this.#o.clock.now();
    if (!changed && now - this.#lastReport < this.#o.reportFrequencyMs) {
      this.#node = current;
      return;
    }
    const diff = mergePatchDiff(old, status);
    if (diff === undefined) return;
    // Lists are sent whole: a merge patch replaces them.
    this.#node = await client.patch(
      this.#o.nodeName,
      { status: diff },
      { type: "merge", subresource: "status", signal },
    );
    this.writes++;
    this.#lastReport = now;
  }

  /** The whole Node the kubelet would write, from `existing`'s status (`initialNode` + setters). */
  initialNode(existing: DeepReadonly<Node> | undefined, recordEvents = true): Node {
    const o = this.#o;
    const now = seconds(o.clock.now());
    const r = o.resources;
    const allocatable = this.allocatable();
    const capacity = {
      cpu: r.cpu,
      memory: r.memory,
      pods: r.pods,
      "ephemeral-storage": r.ephemeralStorage,
      "hugepages-1Gi": "0",
      "hugepages-2Mi": "0",
    };
    const allocatableMemoryKi = Math.floor(allocatable.memory / 1024);
    const conditions: NodeCondition[] = [];
    const previous = (type: string) => existing?.status?.conditions?.find((c) => c.type === type);
    for (const pressure of pressureConditions) {
      const before = previous(pressure.type);
      if (recordEvents && before?.status !== "False")
        o.recorder.event(
          nodeRef(o.nodeName),
          "Normal",
          pressure.event,
          `Node ${o.nodeName} status is now: ${pressure.event}`,
        );
      conditions.push({
        type: pressure.type,
        status: "False",
        reason: pressure.reason,
        message: pressure.message,
        lastHeartbeatTime: now,
        lastTransitionTime: before?.status === "False" ? (before.lastTransitionTime ?? now) : now,
      });
    }
    const problem = o.runtimeProblem();
    const readyBefore = previous("Ready");
    const readyStatus = problem === undefined ? "True" : "False";
    if (recordEvents && readyBefore !== undefined && readyBefore.status !== readyStatus) {
      const event = readyStatus === "True" ? "NodeReady" : "NodeNotReady";
      o.recorder.event(nodeRef(o.nodeName), "Normal", event, `Node ${o.nodeName} status is now: ${event}`);
    }
    conditions.push({
      type: "Ready",
      status: readyStatus,
      reason: problem === undefined ? "KubeletReady" : "KubeletNotReady",
      message: problem ?? "kubelet is posting ready status",
      lastHeartbeatTime: now,
      lastTransitionTime: readyBefore?.status === readyStatus ? (readyBefore.lastTransitionTime ?? now) : now,
    });
    const images = [...o.runtime.listImages()]
      .sort((a, b) => b.size - a.size)
      .slice(0, 50)
      .map((image) => ({
        names: [...image.repoDigests, ...image.repoTags].slice(0, 5),
        sizeBytes: image.size,
      }));
    const status: NodeStatus = {
      capacity: canonicalQuantities(capacity),
      allocatable: canonicalQuantities({
        cpu: r.cpu,
        memory: `${allocatableMemoryKi}Ki`,
        pods: r.pods,
        "ephemeral-storage": String(Math.floor(wholeUnits(r.ephemeralStorage) * 0.9)),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
      }),
      conditions,
      addresses: [
        { type: "InternalIP", address: o.nodeIP },
        { type: "Hostname", address: o.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: machineId(o.nodeName),
        systemUUID: machineId(`${o.nodeName}/uuid`).replace(
          /^(.{8})(.{4})(.{4})(.{4})(.{12})$/,
          "$1-$2-$3-$4-$5",
        ),
        bootID: machineId(`${o.nodeName}/boot`).replace(
          /^(.{8})(.{4})(.{4})(.{4})(.{12})$/,
          "$1-$2-$3-$4-$5",
        ),
        kernelVersion: "6.8.0-reconcile",
        osImage: "reconcile simulated node",
        containerRuntimeVersion: `${o.runtime.runtimeName}://${o.runtime.runtimeVersion}`,
        kubeletVersion: o.kubeletVersion,
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: "amd64",
      },
      ...(images.length > 0 ? { images } : {}),
    };
    return {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: o.nodeName,
        labels: {
          "beta.kubernetes.io/arch": "amd64",
          "beta.kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          "kubernetes.io/hostname": o.nodeName,
          "kubernetes.io/os": "linux",
          ...o.labels,
        },
        annotations: { "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
      },
      spec: o.podCIDR !== undefined ? podCIDRSpec(o.podCIDR) : {},
      status,
    };
  }
}

/** `nodeStatusHasChanged`: conditions compared without heartbeat times, the rest as is. */
function nodeStatusHasChanged(old: DeepReadonly<NodeStatus>, next: DeepReadonly<NodeStatus>): boolean {
  const strip = (s: DeepReadonly<NodeStatus>) => ({
    ...s,
    conditions: [...(s.conditions ?? [])]
      .map((c) => ({ ...c, lastHeartbeatTime: undefined }))
      .sort((a, b) => (a.type < b.type ? -1 : 1)),
  });
  return mergePatchDiff(strip(old), strip(next)) !== undefined;
}

/** The involved object of node events: kubelets name the node's UID as its name. */
export function nodeRef(nodeName: string) {
  return { kind: "Node", apiVersion: "v1", name: nodeName, uid: nodeName };
}

function machineId(text: string): string {
  // A stable 32-hex identifier per node name.
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  let out = "";
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < text.length; i++) {
      h1 = Math.imul(h1 ^ text.charCodeAt(i), 0x01000193) >>> 0;
      h2 = Math.imul(h2 ^ (text.charCodeAt(i) + round), 0x5bd1e995) >>> 0;
    }
    out += ((h1 ^ h2) >>> 0).toString(16).padStart(8, "0");
  }
  return out;
}

/**
 * Each quantity in the canonical form the API server stores it in (`16674816Ki` is `16284Mi`), so
 * that the status read back compares equal to the one written.
 */
function canonicalQuantities(list: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(list)) out[name] = parseQuantity(value).toString();
  return out;
}

/** The node's pod CIDRs (comma-separated, a dual-stack node's two families): the first is `podCIDR`. */
function podCIDRSpec(cidrs: string): { podCIDR: string; podCIDRs: string[] } {
  const podCIDRs = cidrs.split(",").map((cidr) => cidr.trim());
  return { podCIDR: podCIDRs[0]!, podCIDRs };
}
