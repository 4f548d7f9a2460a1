import type { Clock } from "@reconcile/clock";
import type { PodStatus } from "kubernetes-types/core/v1.js";
import type { KubeletMetrics } from "./kubelet-options.js";
import type { ConfigPod } from "./pod-workers/index.js";

/**
 * The pod start SLI (upstream's pod_startup_latency_tracker.go): the seconds
 * from a pod's `creationTimestamp` until the kubelet first saw all of its
 * containers running, reported once per pod.
 */
export class PodStartupLatencyTracker {
  readonly #clock: Clock;
  readonly #metrics: KubeletMetrics | undefined;
  /** Pods whose start has been reported. */
  readonly #observed = new Set<string>();

  constructor(clock: Clock, metrics: KubeletMetrics | undefined) {
    this.#clock = clock;
    this.#metrics = metrics;
  }

  /** Reports the pod's start once every container of it is running. */
  observe(pod: ConfigPod, status: PodStatus): void {
    const observe = this.#metrics?.observePodStartSLIDuration;
    const uid = pod.metadata?.uid ?? "";
    if (observe === undefined || this.#observed.has(uid)) return;
    const containers = status.containerStatuses ?? [];
    const created = Date.parse(pod.metadata?.creationTimestamp ?? "");
    if (containers.length === 0 || Number.isNaN(created)) return;
    if (!containers.every((container) => container.state?.running !== undefined)) return;
    this.#observed.add(uid);
    observe.call(this.#metrics, Math.max(0, (this.#clock.now() - created) / 1000));
  }

  /** Forgets the pods `gone` says are gone (housekeeping). */
  forget(gone: (uid: string) => boolean): void {
    for (const uid of this.#observed) if (gone(uid)) this.#observed.delete(uid);
  }
}
