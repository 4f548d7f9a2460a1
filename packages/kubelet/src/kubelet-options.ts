import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder, Logger } from "@reconcile/controller";
import type { NodeResources } from "./node-status.js";
import type { PodWorkersMetrics } from "./pod-workers/index.js";
import type { ContainerRuntime } from "./runtime/runtime.js";

export interface KubeletOptions {
  /** The node's name (`--hostname-override`). Required. */
  nodeName: string;
  /** Where the kubelet reads pods and writes nodes, leases, statuses and events. Required. */
  client: Client;
  /** The container runtime. Default: a {@link SimulatedRuntime} for this node. */
  runtime?: ContainerRuntime | undefined;
  /**
   * The node's pod CIDR: pods' IPs come from it. Two of different families,
   * comma-separated, make a dual-stack node whose pods have an IP of each.
   * Default "10.244.0.0/24".
   */
  podCIDR?: string | undefined;
  /** The node's InternalIP. Default "10.0.0.2". */
  nodeIP?: string | undefined;
  /** Capacity reported (allocatable memory is 100Mi less, as the default hard eviction threshold leaves). Default 4 cpu, 16Gi, 110 pods, 100Gi. */
  resources?: Partial<NodeResources> | undefined;
  /** `--node-labels`, over the kubelet's own labels. Default: none. */
  labels?: Readonly<Record<string, string>> | undefined;
  /**
   * `informer` watches pods with `spec.nodeName=<node>` itself; `external`
   * leaves feeding pods to the caller, through {@link Kubelet.podHandler}
   * (a NodeSimulator shares one informer among many kubelets). Default `informer`.
   */
  podSource?: "informer" | "external" | undefined;
  /** `kubeletVersion` in nodeInfo. Default: the API server's version, "v1.32.0". */
  kubeletVersion?: string | undefined;
  /** Resync period of a healthy pod (`syncFrequency`). Default 60,000 ms. */
  syncFrequencyMs?: number | undefined;
  /** PLEG relist period. Default 1,000 ms. */
  plegRelistPeriodMs?: number | undefined;
  /** `nodeStatusUpdateFrequency`. Default 10,000 ms. */
  nodeStatusUpdateFrequencyMs?: number | undefined;
  /** `nodeStatusReportFrequency`. Default 300,000 ms. */
  nodeStatusReportFrequencyMs?: number | undefined;
  /** `nodeLeaseDurationSeconds`. Default 40. */
  nodeLeaseDurationSeconds?: number | undefined;
  /** Where events go. Default: core/v1 Events through `client`, as component `kubelet`. */
  recorder?: EventRecorder | undefined;
  logger?: Logger | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
  /** Where the kubelet's metrics go (see {@link KubeletMetrics}). Default: recorded nowhere. */
  metrics?: KubeletMetrics | undefined;
  /**
   * A directory of static pod manifests (`staticPodPath`): YAML or JSON pods the
   * kubelet runs on its own and mirrors to the API server. Default: none.
   */
  staticPodPath?: string | undefined;
  /** How often the manifest directory is read (`fileCheckFrequency`). Default 20,000 ms. */
  staticPodCheckFrequencyMs?: number | undefined;
  /**
   * A URL to read static pods from (`staticPodURL`, `--manifest-url`): one pod
   * or a PodList, YAML or JSON, run as the directory's pods are. Default: none.
   */
  staticPodURL?: string | undefined;
  /** Headers sent with each read of `staticPodURL` (`staticPodURLHeader`). */
  staticPodURLHeader?: Readonly<Record<string, readonly string[]>> | undefined;
  /** How often `staticPodURL` is read (`httpCheckFrequency`). Default 20,000 ms. */
  httpCheckFrequencyMs?: number | undefined;
}

/**
 * The kubelet's metrics seam, with upstream's names for an adapter to use:
 * the pod workers' `kubelet_pod_worker_duration_seconds{operation_type}` and
 * `kubelet_pod_start_sli_duration_seconds`.
 */
export interface KubeletMetrics extends PodWorkersMetrics {
  /**
   * Seconds from a pod's `creationTimestamp` until the kubelet first saw all
   * of its containers running (upstream's pod startup latency tracker), once per pod.
   */
  observePodStartSLIDuration?(seconds: number): void;
}
