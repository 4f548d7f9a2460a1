import type { DeepReadonly, Job, Pod, PodTemplateSpec } from "@reconcile/api";

// The pods of a Job: the template with the tracking finalizer, and for an
// Indexed Job its completion index (annotation, label, hostname and the
// JOB_COMPLETION_INDEX variable), as upstream's job controller builds them.

/** Keeps a finished pod until the Job controller has counted it (`batch.kubernetes.io/job-tracking`). */
export const jobTrackingFinalizer = "batch.kubernetes.io/job-tracking";
/** The completion index of an Indexed Job's pod: an annotation and a label. */
export const jobCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
/** On a replacement pod of an index: how many times that index has failed (`backoffLimitPerIndex`). */
export const jobIndexFailureCountAnnotation = "batch.kubernetes.io/job-index-failure-count";
/** The variable every container of an Indexed Job's pod reads its index from. */
export const jobCompletionIndexEnvName = "JOB_COMPLETION_INDEX";

/** The template a Job's pod is created from; `index` for Indexed Jobs. */
export function podTemplateFor(
  job: DeepReadonly<Job>,
  index: number | undefined,
  indexFailures?: number | undefined,
): PodTemplateSpec {
  const template = structuredClone(job.spec?.template ?? {}) as PodTemplateSpec;
  const meta = (template.metadata ??= {});
  meta.finalizers = [...(meta.finalizers ?? []), jobTrackingFinalizer];
  if (index === undefined) return template;
  meta.annotations = { ...meta.annotations, [jobCompletionIndexAnnotation]: String(index) };
  if (indexFailures !== undefined) meta.annotations[jobIndexFailureCountAnnotation] = String(indexFailures);
  meta.labels = { ...meta.labels, [jobCompletionIndexAnnotation]: String(index) };
  const spec = (template.spec ??= { containers: [] });
  // A headless Service named like subdomain resolves `<job>-<index>.<subdomain>`.
  if (!spec.hostname) spec.hostname = `${job.metadata?.name ?? ""}-${index}`;
  const indexVar = {
    name: jobCompletionIndexEnvName,
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${jobCompletionIndexAnnotation}']` } },
  };
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    if (!(container.env ?? []).some((e) => e.name === jobCompletionIndexEnvName))
      container.env = [...(container.env ?? []), indexVar];
  }
  return template;
}

/** An Indexed Job pod's completion index, if it has a valid one below `completions`. */
export function podIndex(pod: DeepReadonly<Pod>, completions: number): number | undefined {
  const text = pod.metadata?.annotations?.[jobCompletionIndexAnnotation];
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const index = Number(text);
  return index < completions ? index : undefined;
}

export function hasTrackingFinalizer(pod: DeepReadonly<Pod>): boolean {
  return pod.metadata?.finalizers?.includes(jobTrackingFinalizer) ?? false;
}

/**
 * Whether a pod has finished for the Job's accounting: Succeeded or Failed,
 * or being deleted before it finished (a deleted pod counts as failed),
 * unless only failed pods count (`onlyFailed`): then it has finished once
 * its phase says so (upstream `isPodFailed` with onlyReplaceFailedPods).
 */
export function isFinished(pod: DeepReadonly<Pod>, onlyFailed = false): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return true;
  return !onlyFailed && pod.metadata?.deletionTimestamp != null;
}

/** When a finished pod finished: its last container's finishedAt, else its deletion or now. */
export function finishTime(pod: DeepReadonly<Pod>, now: number): number {
  let latest = 0;
  for (const status of pod.status?.containerStatuses ?? []) {
    const finishedAt = status.state?.terminated?.finishedAt;
    if (finishedAt !== undefined) latest = Math.max(latest, Date.parse(finishedAt));
  }
  if (latest > 0) return latest;
  const deleted = pod.metadata?.deletionTimestamp;
  return deleted != null ? Date.parse(deleted) : now;
}
