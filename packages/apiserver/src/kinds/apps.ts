import type { Deployment, PodTemplateSpec, ReplicaSet } from "@reconcile/api";
import { deployments, replicaSets, selectableFieldsOf } from "@reconcile/api";
import { copyJson, type Mutable } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { validateLabels } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import {
  intOrPercentValue,
  intOrStringValue,
  notMoreThan100Percent,
  validatePositiveIntOrPercent,
} from "./int-or-percent.js";
import { applyPodSpecDefaults, validatePodSpec } from "./pod.js";
import { deploymentPrinter, replicaSetPrinter } from "./printers/index.js";
import {
  immutableSelector,
  nonNegative,
  replicasScale,
  validateSelectorAndTemplate,
} from "./workload-spec.js";

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
    nonNegative(spec.replicas, "spec.replicas", errors);
    validateTemplate(validateSelectorAndTemplate(spec.selector, spec.template, errors, "deployment"), errors);
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
      // upstream's ValidateRollingUpdateDeployment, in its order.
      const { maxSurge, maxUnavailable } = strategy.rollingUpdate;
      const unavailableField = "spec.strategy.rollingUpdate.maxUnavailable";
      validatePositiveIntOrPercent(maxUnavailable, unavailableField, errors);
      validatePositiveIntOrPercent(maxSurge, "spec.strategy.rollingUpdate.maxSurge", errors);
      if (intOrPercentValue(maxUnavailable) === 0 && intOrPercentValue(maxSurge) === 0)
        errors.invalid(
          unavailableField,
          intOrStringValue(maxUnavailable ?? 0),
          "may not be 0 when `maxSurge` is 0",
        );
      notMoreThan100Percent(maxUnavailable, unavailableField, errors);
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
    immutableSelector(object, old, errors);
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
    nonNegative(spec.replicas, "spec.replicas", errors);
    nonNegative(spec.minReadySeconds, "spec.minReadySeconds", errors);
    validateTemplate(validateSelectorAndTemplate(spec.selector, spec.template, errors, "deployment"), errors);
  },
  validateUpdate: immutableSelector,
  scale: replicasScale(),
};

export const deploymentDefinition = defineKind({
  descriptor: deployments,
  strategy: deploymentStrategy,
  printer: deploymentPrinter,
  protobufMessage: "Deployment",
});

export const replicaSetDefinition = defineKind({
  descriptor: replicaSets,
  strategy: replicaSetStrategy,
  selectableFields: selectableFieldsOf(replicaSets),
  printer: replicaSetPrinter,
});

/** What Deployments and ReplicaSets check of their template beyond the selector (`ValidatePodTemplateSpecForReplicaSet`). */
function validateTemplate(template: PodTemplateSpec | undefined, errors: FieldErrors): void {
  if (template === undefined) return;
  validateLabels(template.metadata?.labels, "spec.template.metadata.labels", errors);
  validatePodSpec(template.spec, "spec.template.spec", errors);
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy !== undefined && restartPolicy !== "Always")
    errors.notSupported("spec.template.spec.restartPolicy", restartPolicy, ["Always"]);
}
