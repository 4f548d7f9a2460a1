import {
  InvalidLabelSelectorError,
  type KubeObject,
  type LabelSelector,
  labelSelectorAsSelector,
} from "@reconcile/api";
import type { PodTemplateSpec } from "kubernetes-types/core/v1.js";
import { jsonEqual } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goLabelSelector, goStringMap } from "../registry/go-syntax.js";
import type { Strategy } from "../registry/strategy.js";

/**
 * Which upstream rule a workload's selector follows: `deployment`
 * (Deployments and ReplicaSets, whose empty-selector message upstream also
 * says "deployment"), `statefulset`, or `daemonset` (no Required: a missing
 * selector selects nothing, so the template fails to match).
 */
export type WorkloadSelectorRule = "deployment" | "statefulset" | "daemonset" | "job";

/**
 * The selector half of upstream's `Validate{Deployment,ReplicaSet,StatefulSet,DaemonSet}Spec`:
 * a missing selector is Required (not for a DaemonSet), an empty one is
 * Invalid ("empty selector is invalid for <kind>"), an invalid one names its
 * problem, and any other selector — a missing one selects nothing — must
 * select the template's labels ("`selector` does not match template
 * `labels`"). A missing template is Required. Returns the template when
 * there is one, for the kind's own checks of it.
 */
export function validateSelectorAndTemplate(
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  errors: FieldErrors,
  rule: WorkloadSelectorRule,
): PodTemplateSpec | undefined {
  const empty =
    selector !== undefined &&
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0;
  if (selector === undefined && rule !== "daemonset") errors.required("spec.selector");
  if (empty)
    errors.invalid("spec.selector", goLabelSelector(selector), `empty selector is invalid for ${rule}`);
  if (template === undefined) {
    errors.required("spec.template");
    return undefined;
  }
  // An empty selector selects everything; a missing one selects nothing, so the template fails to
  // match it too (upstream's `labels.Nothing()` is not Empty).
  if (empty) return template;
  try {
    if (!labelSelectorAsSelector(selector).matches(template.metadata?.labels ?? {})) {
      errors.invalid(
        "spec.template.metadata.labels",
        goStringMap(template.metadata?.labels),
        "`selector` does not match template `labels`",
      );
    }
  } catch (error) {
    if (!(error instanceof InvalidLabelSelectorError)) throw error;
    errors.invalid("spec.selector", goLabelSelector(selector!), error.message);
  }
  return template;
}

/** A count that must not be negative (`ValidateNonnegativeField`). */
export function nonNegative(value: number | undefined, field: string, errors: FieldErrors): void {
  if (value !== undefined && value < 0) errors.invalid(field, value, "must be greater than or equal to 0");
}

type WithSelector = { spec?: { selector?: LabelSelector } };

/** `spec.selector` cannot change once set (apps/v1 workloads): a `validateUpdate`. */
export function immutableSelector(object: KubeObject, old: KubeObject, errors: FieldErrors): void {
  const selector = (object as WithSelector).spec?.selector;
  if (!jsonEqual(selector, (old as WithSelector).spec?.selector)) {
    errors.invalid(
      "spec.selector",
      selector === undefined ? null : goLabelSelector(selector),
      "field is immutable",
    );
  }
}

/**
 * The scale subresource of a workload with `spec.replicas` and
 * `status.replicas`; `selectorOf` gives its label selector (default
 * `spec.selector`), written in `status.selector` as a string.
 */
export function replicasScale(
  selectorOf: (object: KubeObject) => LabelSelector | undefined = (object) =>
    (object as { spec?: { selector?: LabelSelector } }).spec?.selector,
): NonNullable<Strategy["scale"]> {
  type Scalable = { spec?: { replicas?: number }; status?: { replicas?: number } };
  return {
    replicas: (object) => (object as Scalable).spec?.replicas ?? 0,
    setReplicas: (object, replicas) => {
      ((object as Scalable).spec ??= {}).replicas = replicas;
    },
    statusReplicas: (object) => (object as Scalable).status?.replicas ?? 0,
    selector: (object) => {
      try {
        return labelSelectorAsSelector(selectorOf(object)).toString();
      } catch {
        return "";
      }
    },
  };
}
