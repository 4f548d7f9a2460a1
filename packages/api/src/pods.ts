import type { DeepReadonly, Pod, PodCondition } from "./types.js";

type AnyPod = Pod | DeepReadonly<Pod>;

/**
 * Whether the pod still counts toward its controller's replicas: not
 * Succeeded, not Failed, and not being deleted (`controller.IsPodActive`).
 */
export function isPodActive(pod: AnyPod): boolean {
  const phase = pod.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed" && !pod.metadata?.deletionTimestamp;
}

/** Whether the pod is being deleted but has not finished (`controller.IsPodTerminating`). */
export function isPodTerminating(pod: AnyPod): boolean {
  const phase = pod.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed" && !!pod.metadata?.deletionTimestamp;
}

/** The pod's `Ready` condition, if it has one (`podutil.GetPodReadyCondition`). */
export function getPodReadyCondition(pod: Pod): PodCondition | undefined;
export function getPodReadyCondition(pod: DeepReadonly<Pod>): DeepReadonly<PodCondition> | undefined;
export function getPodReadyCondition(pod: AnyPod): DeepReadonly<PodCondition> | undefined;
export function getPodReadyCondition(pod: AnyPod): DeepReadonly<PodCondition> | undefined {
  const conditions = pod.status?.conditions;
  if (!conditions) return undefined;
  for (const condition of conditions) if (condition.type === "Ready") return condition;
  return undefined;
}

/** Whether the pod's `Ready` condition is `True` (`podutil.IsPodReady`). */
export function isPodReady(pod: AnyPod): boolean {
  return getPodReadyCondition(pod as DeepReadonly<Pod>)?.status === "True";
}

/**
 * Whether the pod is available (`podutil.IsPodAvailable`): ready, and with
 * `minReadySeconds > 0` ready for longer than that: the Ready condition's
 * `lastTransitionTime + minReadySeconds` is strictly before `nowMs`. A ready
 * pod without a (parsable) `lastTransitionTime` is available only when
 * `minReadySeconds` is 0.
 */
export function isPodAvailable(pod: AnyPod, minReadySeconds: number, nowMs: number): boolean {
  const ready = getPodReadyCondition(pod as DeepReadonly<Pod>);
  if (ready?.status !== "True") return false;
  if (minReadySeconds === 0) return true;
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : Number.NaN;
  if (Number.isNaN(since)) return false;
  return since + minReadySeconds * 1000 < nowMs;
}

/** A pod's `namespace/name`, as expectations and work queues key pods (upstream `controller.PodKey`). */
export function podKey(pod: AnyPod): string {
  return `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;
}
