import type { DeepReadonly, Job, Pod } from "@reconcile/api";
import type { PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement } from "kubernetes-types/batch/v1.js";
import type { ContainerStatus } from "kubernetes-types/core/v1.js";
import { parseIndexes } from "./indexes.js";

// A Job's podFailurePolicy, successPolicy and podReplacementPolicy, as
// upstream's job controller reads them (pod_failure_policy.go,
// success_policy.go, and onlyReplaceFailedPods).

export type PodFailurePolicyAction = "FailJob" | "FailIndex" | "Ignore" | "Count";

/** What a failed pod means under the policy: whether it counts, and a Job failure message for FailJob. */
export interface PolicyMatch {
  action: PodFailurePolicyAction | undefined;
  /** Counted toward backoffLimit (false for Ignore). */
  count: boolean;
  /** Set for a FailJob match: why the Job fails. */
  failJobMessage: string | undefined;
}

/**
 * Matches a failed pod against the rules in order (upstream
 * `matchPodFailurePolicy`): a container that terminated with a non-zero exit
 * code the rule names (init containers after the others), or a pod
 * condition the rule names; the first matching rule decides. FailIndex
 * applies only with `backoffLimitPerIndex`.
 */
export function matchPodFailurePolicy(
  policy: DeepReadonly<PodFailurePolicy> | undefined,
  pod: DeepReadonly<Pod>,
  perIndex: boolean,
): PolicyMatch {
  const none: PolicyMatch = { action: undefined, count: true, failJobMessage: undefined };
  if (policy === undefined) return none;
  const namespaced = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  for (const [index, rule] of (policy.rules ?? []).entries()) {
    let matched: string | undefined;
    if (rule.onExitCodes != null) {
      const container =
        matchingContainer(pod.status?.containerStatuses, rule.onExitCodes) ??
        matchingContainer(pod.status?.initContainerStatuses, rule.onExitCodes);
      if (container !== undefined)
        matched = `Container ${container.name} for pod ${namespaced} failed with exit code ${container.state?.terminated?.exitCode} matching ${rule.action} rule at index ${index}`;
    } else if (rule.onPodConditions != null) {
      const condition = (pod.status?.conditions ?? []).find((c) =>
        rule.onPodConditions!.some(
          (pattern) => pattern.type === c.type && (pattern.status ?? "True") === c.status,
        ),
      );
      if (condition !== undefined)
        matched = `Pod ${namespaced} has condition ${condition.type} matching ${rule.action} rule at index ${index}`;
    }
    if (matched === undefined) continue;
    switch (rule.action) {
      case "Ignore":
        return { action: "Ignore", count: false, failJobMessage: undefined };
      case "Count":
        return { action: "Count", count: true, failJobMessage: undefined };
      case "FailJob":
        return { action: "FailJob", count: true, failJobMessage: matched };
      case "FailIndex":
        if (perIndex) return { action: "FailIndex", count: true, failJobMessage: undefined };
        break;
    }
  }
  return none;
}

function matchingContainer(
  statuses: readonly DeepReadonly<ContainerStatus>[] | undefined,
  requirement: DeepReadonly<PodFailurePolicyOnExitCodesRequirement>,
): DeepReadonly<ContainerStatus> | undefined {
  return (statuses ?? []).find((status) => {
    const terminated = status.state?.terminated;
    if (terminated === undefined || terminated.exitCode === 0) return false;
    if (requirement.containerName != null && requirement.containerName !== status.name) return false;
    const listed = requirement.values.includes(terminated.exitCode);
    return requirement.operator === "In" ? listed : requirement.operator === "NotIn" ? !listed : false;
  });
}

/** The message of the first failed pod a FailJob rule matches (upstream `getFailJobMessage`). */
export function failJobMessage(
  job: DeepReadonly<Job>,
  pods: readonly DeepReadonly<Pod>[],
): string | undefined {
  const policy = job.spec?.podFailurePolicy;
  if (policy == null) return undefined;
  for (const pod of pods) {
    if (pod.status?.phase !== "Failed") continue;
    const message = matchPodFailurePolicy(policy, pod, job.spec?.backoffLimitPerIndex != null).failJobMessage;
    if (message !== undefined) return message;
  }
  return undefined;
}

/**
 * Whether a pod is replaced only once it has failed, not while it is still
 * terminating (upstream `onlyReplaceFailedPods`): with
 * `podReplacementPolicy: Failed`, and always with a podFailurePolicy.
 */
export function onlyReplaceFailedPods(job: DeepReadonly<Job>): boolean {
  return job.spec?.podReplacementPolicy === "Failed" || job.spec?.podFailurePolicy != null;
}

/**
 * The message of the first successPolicy rule the succeeded indexes meet
 * (upstream `matchSuccessPolicy`), `Matched rules at index N`; undefined if none.
 */
export function matchSuccessPolicy(
  job: DeepReadonly<Job>,
  succeeded: ReadonlySet<number>,
): string | undefined {
  const rules = job.spec?.successPolicy?.rules;
  if (rules == null || succeeded.size === 0) return undefined;
  const completions = job.spec?.completions ?? 0;
  for (const [index, rule] of rules.entries()) {
    const count = rule.succeededCount ?? undefined;
    if (rule.succeededIndexes != null) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.size === 0) continue;
      const met = [...required].filter((i) => succeeded.has(i)).length;
      if (count !== undefined ? met >= count : met === required.size)
        return `Matched rules at index ${index}`;
    } else if (count !== undefined && succeeded.size >= count) {
      return `Matched rules at index ${index}`;
    }
  }
  return undefined;
}
