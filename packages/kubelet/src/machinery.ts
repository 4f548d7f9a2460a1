import type { Kubelet } from "./kubelet.js";
import type { PodWorkerView } from "./pod-workers/index.js";

/** A kubelet as a debugging view shows it (its `kubelet` introspection source). */
export interface KubeletView {
  node: string;
  /** Pods the kubelet has been given (from its pod source, static pods included). */
  pods: number;
  /** Every pod worker: its work type (`sync`, `terminating`, `terminated`) and times. */
  podWorkers: PodWorkerView[];
  /** The PLEG's last relist (clock ms; absent before the first), its period, and why it is unhealthy, if it is. */
  pleg: { lastRelistAt?: number; relistPeriodMs: number; unhealthy?: string };
}

/** What `kubelet` runs now: its pods, its pod workers' states and its PLEG. */
export function kubeletView(kubelet: Kubelet): KubeletView {
  const last = kubelet.pleg.lastRelistTime();
  const unhealthy = kubelet.pleg.unhealthy();
  return {
    node: kubelet.nodeName,
    pods: kubelet.getPods().length,
    podWorkers: kubelet.podWorkers.workerViews(),
    pleg: {
      ...(Number.isFinite(last) ? { lastRelistAt: last } : {}),
      relistPeriodMs: kubelet.pleg.relistPeriodMs,
      ...(unhealthy === undefined ? {} : { unhealthy }),
    },
  };
}
