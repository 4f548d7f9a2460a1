import type { Deployment, LabelSelector, PodTemplateSpec, ReplicaSet } from "@reconcile/api";
import {
  deployments,
  InvalidLabelSelectorError,
  labelSelectorAsSelector,
  replicaSets,
  selectableFieldsOf,
} from "@reconcile/api";
import { deploymentPrinter, replicaSetPrinter } from "../http/printers.js";
import { copyJson, jsonEqual, type Mutable } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { validateLabels } from "../registry/meta-validation.js";
import { deploymentSchema, replicaSetSchema } from "../registry/schema.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { applyPodSpecDefaults, validatePodSpec } from "./pod.js";

const strategyTypes = ["Recreate", "RollingUpdate"];

const deploymentStrategy: Strategy = {
  prepareForCreate(object) {
    (object as Mutable<Deployment>).status = {};
  },
  applyDefaults(object) {
    const deployment = object as Deployment;
    const spec = (deployment.spec ??= { selector: {}, template: {} });
    spec.replicas ??= 1;
    spec.strategy ??= {};
    spec.strategy.type ??= "RollingUpdate";
    if (spec.strategy.type === "RollingUpdate") {
      spec.strategy.rollingUpdate ??= {};
      spec.strategy.rollingUpdate.maxUnavailable ??= "25%";
      spec.strategy.rollingUpdate.maxSurge ??= "25%";
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    if (spec.template?.spec) applyPodSpecDefaults(spec.template.spec);
  },
  validate(object, errors) {
    const spec = (object as Deployment).spec;
    if (spec === undefined) return errors.required("spec");
    validateReplicas(spec.replicas, errors);
    validateSelectorAndTemplate(spec.selector, spec.template, errors);
    nonNegative(spec.minReadySeconds, "spec.minReadySeconds", errors);
    nonNegative(spec.revisionHistoryLimit, "spec.revisionHistoryLimit", errors);
    const strategy = spec.strategy ?? {};
    if (strategy.type !== undefined && !strategyTypes.includes(strategy.type)) {
      errors.notSupported("spec.strategy.type", strategy.type, strategyTypes);
    } else if (strategy.type === "Recreate" && strategy.rollingUpdate !== undefined) {
      errors.forbidden(
        "spec.strategy.rollingUpdate",
        "may not be specified when strategy `type` is 'Recreate'",
      );
    } else if (strategy.type === "RollingUpdate" && strategy.rollingUpdate) {
      const { maxSurge, maxUnavailable } = strategy.rollingUpdate;
      validateIntOrPercent(maxSurge, "spec.strategy.rollingUpdate.maxSurge", errors);
      validateIntOrPercent(maxUnavailable, "spec.strategy.rollingUpdate.maxUnavailable", errors);
      if (typeof maxUnavailable === "string" && Number.parseInt(maxUnavailable, 10) > 100)
        errors.invalid(
          "spec.strategy.rollingUpdate.maxUnavailable",
          maxUnavailable,
          "must not be greater than 100%",
        );
      if (isZero(maxSurge) && isZero(maxUnavailable))
        errors.invalid(
          "spec.strategy.rollingUpdate.maxUnavailable",
          maxUnavailable,
          "may not be 0 when `maxSurge` is 0",
        );
    }
    if (spec.progressDeadlineSeconds !== undefined) {
      if (spec.progressDeadlineSeconds <= 0)
        errors.invalid(
          "spec.progressDeadlineSeconds",
          spec.progressDeadlineSeconds,
          "must be greater than 0",
        );
      else if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0))
        errors.invalid(
          "spec.progressDeadlineSeconds",
          spec.progressDeadlineSeconds,
          "must be greater than minReadySeconds",
        );
    }
  },
  validateUpdate(object, old, errors) {
    immutableSelector((object as Deployment).spec?.selector, (old as Deployment).spec?.selector, errors);
  },
  // kube's deploymentStatusStrategy resets only spec and labels: the controller
  // records the revision annotation with its status writes.
  prepareForStatusUpdate(object, old) {
    const deployment = object as Mutable<Deployment>;
    const previous = old as Deployment;
    if (previous.spec === undefined) delete deployment.spec;
    else deployment.spec = copyJson(previous.spec);
    const meta = (deployment.metadata ??= {});
    if (previous.metadata?.labels === undefined) delete meta.labels;
    else meta.labels = copyJson(previous.metadata.labels);
  },
  scale: replicasScale(),
};

const replicaSetStrategy: Strategy = {
  prepareForCreate(object) {
    (object as Mutable<ReplicaSet>).status = { replicas: 0 };
  },
  applyDefaults(object) {
    const spec = ((object as ReplicaSet).spec ??= { selector: {} });
    spec.replicas ??= 1;
    if (spec.template?.spec) applyPodSpecDefaults(spec.template.spec);
  },
  validate(object, errors) {
    const spec = (object as ReplicaSet).spec;
    if (spec === undefined) return errors.required("spec");
    validateReplicas(spec.replicas, errors);
    nonNegative(spec.minReadySeconds, "spec.minReadySeconds", errors);
    validateSelectorAndTemplate(spec.selector, spec.template, errors);
  },
  validateUpdate(object, old, errors) {
    immutableSelector((object as ReplicaSet).spec?.selector, (old as ReplicaSet).spec?.selector, errors);
  },
  scale: replicasScale(),
};

export const deploymentDefinition = defineKind({
  descriptor: deployments,
  strategy: deploymentStrategy,
  schema: deploymentSchema,
  printer: deploymentPrinter,
  protobufMessage: "Deployment",
});

export const replicaSetDefinition = defineKind({
  descriptor: replicaSets,
  strategy: replicaSetStrategy,
  schema: replicaSetSchema,
  selectableFields: selectableFieldsOf(replicaSets),
  printer: replicaSetPrinter,
});

function replicasScale(): NonNullable<Strategy["scale"]> {
  type Scalable = { spec?: { replicas?: number; selector?: LabelSelector }; status?: { replicas?: number } };
  return {
    replicas: (object) => (object as Scalable).spec?.replicas ?? 0,
    setReplicas: (object, replicas) => {
      const scalable = object as Scalable;
      scalable.spec ??= {};
      scalable.spec.replicas = replicas;
    },
    statusReplicas: (object) => (object as Scalable).status?.replicas ?? 0,
    selector: (object) => {
      try {
        return labelSelectorAsSelector((object as Scalable).spec?.selector).toString();
      } catch {
        return "";
      }
    },
  };
}

function validateReplicas(replicas: number | undefined, errors: FieldErrors): void {
  nonNegative(replicas, "spec.replicas", errors);
}

function nonNegative(value: number | undefined, field: string, errors: FieldErrors): void {
  if (value !== undefined && value < 0) errors.invalid(field, value, "must be greater than or equal to 0");
}

/** The selector is required, non-empty, valid, and must select the template's labels. */
function validateSelectorAndTemplate(
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  errors: FieldErrors,
): void {
  const empty =
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0);
  if (empty) {
    errors.required("spec.selector");
    errors.invalid("spec.selector", selector ?? null, "empty selector is invalid for deployment");
  }
  if (template === undefined) {
    errors.required("spec.template");
    return;
  }
  validateLabels(template.metadata?.labels, "spec.template.metadata.labels", errors);
  if (!empty) {
    try {
      const parsed = labelSelectorAsSelector(selector);
      if (!parsed.matches(template.metadata?.labels ?? {}))
        errors.invalid(
          "spec.template.metadata.labels",
          template.metadata?.labels ?? {},
          "`selector` does not match template `labels`",
        );
    } catch (error) {
      if (!(error instanceof InvalidLabelSelectorError)) throw error;
      errors.invalid("spec.selector", selector, error.message);
    }
  }
  validatePodSpec(template.spec, "spec.template.spec", errors);
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy !== undefined && restartPolicy !== "Always")
    errors.notSupported("spec.template.spec.restartPolicy", restartPolicy, ["Always"]);
}

function immutableSelector(
  selector: LabelSelector | undefined,
  old: LabelSelector | undefined,
  errors: FieldErrors,
): void {
  if (!jsonEqual(selector, old)) errors.invalid("spec.selector", selector ?? null, "field is immutable");
}

function validateIntOrPercent(value: number | string | undefined, field: string, errors: FieldErrors): void {
  if (value === undefined) return;
  if (typeof value === "number") {
    if (value < 0) errors.invalid(field, value, "must be greater than or equal to 0");
    return;
  }
  if (!/^[0-9]+%$/.test(value))
    errors.invalid(
      field,
      value,
      "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    );
}

function isZero(value: number | string | undefined): boolean {
  return value === 0 || value === "0%" || value === "0";
}
