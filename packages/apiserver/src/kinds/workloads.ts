import {
  CronSchedule,
  CronScheduleError,
  controllerRevisions,
  cronJobs,
  daemonSets,
  isValidTimeZone,
  type KubeObject,
  podDisruptionBudgets,
  podTemplates,
  replicationControllers,
  statefulSets,
} from "@reconcile/api";
import type { ControllerRevision, DaemonSet, StatefulSet } from "kubernetes-types/apps/v1.js";
import type { CronJob } from "kubernetes-types/batch/v1.js";
import type { PodTemplate, PodTemplateSpec, ReplicationController } from "kubernetes-types/core/v1.js";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import { jsonEqual } from "../json.js";
import { type FieldErrors, GoSyntax } from "../registry/field-errors.js";
import { goPointer, goStringMap, goStruct } from "../registry/go-syntax.js";
import { validateLabelSelector, validateLabels } from "../registry/meta-validation.js";
import { autoscalingDefinitions } from "./autoscaling.js";
import { defineKind } from "./definition.js";
import {
  intOrPercentValue,
  intOrStringValue,
  notMoreThan100Percent,
  validatePositiveIntOrPercent,
} from "./int-or-percent.js";
import { applyPodSpecDefaults, validatePodSpec } from "./pod.js";
import {
  controllerRevisionPrinter,
  cronJobPrinter,
  daemonSetPrinter,
  podDisruptionBudgetPrinter,
  podTemplatePrinter,
  replicationControllerPrinter,
  statefulSetPrinter,
} from "./printers/index.js";
import {
  immutableSelector,
  nonNegative,
  replicasScale,
  validateSelectorAndTemplate,
} from "./workload-spec.js";

// Workload kinds served with kube-apiserver's defaults and the checks every client relies on; their
// controllers live in packages of their own.

export const daemonSetDefinition = defineKind({
  descriptor: daemonSets,
  printer: daemonSetPrinter,
  strategy: {
    // apps/v1 keeps the internal spec.templateGeneration in this annotation: 1 on create, one more
    // each time the pod template changes (the DaemonSet strategy's PrepareForCreate/PrepareForUpdate).
    prepareForCreate(object) {
      clearStatus(object);
      const generation = Number(object.metadata?.annotations?.[templateGenerationAnnotation]);
      if (!(generation >= 1)) setTemplateGeneration(object, 1);
    },
    prepareForUpdate(object, old) {
      const previous = Number(old.metadata?.annotations?.[templateGenerationAnnotation]) || 0;
      const template = structuredClone((object as DaemonSet).spec?.template);
      templateDefaults(template);
      if (!jsonEqual(template, (old as DaemonSet).spec?.template))
        setTemplateGeneration(object, previous + 1);
      else if (previous > 0) setTemplateGeneration(object, previous);
    },
    applyDefaults(object) {
      const spec = ((object as DaemonSet).spec ??= { selector: {}, template: {} });
      const strategy = (spec.updateStrategy ??= {});
      strategy.type ??= "RollingUpdate";
      if (strategy.type === "RollingUpdate") {
        strategy.rollingUpdate ??= {};
        strategy.rollingUpdate.maxUnavailable ??= 1;
        strategy.rollingUpdate.maxSurge ??= 0;
      }
      spec.revisionHistoryLimit ??= 10;
      templateDefaults(spec.template);
    },
    validate(object, errors) {
      const spec = (object as DaemonSet).spec;
      validateSelectorAndTemplate(spec?.selector, spec?.template, errors, "daemonset");
      // ValidateDaemonSetUpdateStrategy names the whole strategy.
      const strategy = spec?.updateStrategy;
      if (strategy?.type !== undefined && strategy.type !== "RollingUpdate" && strategy.type !== "OnDelete")
        errors.notSupported(
          "spec.updateStrategy",
          goUpdateStrategy("apps.DaemonSetUpdateStrategy", "*apps.RollingUpdateDaemonSet", strategy),
          ["RollingUpdate", "OnDelete"],
        );
      else if (strategy?.type === "RollingUpdate" && strategy.rollingUpdate !== undefined) {
        // upstream's ValidateRollingUpdateDaemonSet: exactly one of the two is not zero.
        const { maxUnavailable, maxSurge } = strategy.rollingUpdate;
        const field = "spec.updateStrategy.rollingUpdate";
        validatePositiveIntOrPercent(maxUnavailable, `${field}.maxUnavailable`, errors);
        validatePositiveIntOrPercent(maxSurge, `${field}.maxSurge`, errors);
        notMoreThan100Percent(maxUnavailable, `${field}.maxUnavailable`, errors);
        notMoreThan100Percent(maxSurge, `${field}.maxSurge`, errors);
        const hasUnavailable = intOrPercentValue(maxUnavailable) !== 0;
        const hasSurge = intOrPercentValue(maxSurge) !== 0;
        if (hasUnavailable && hasSurge)
          errors.invalid(
            `${field}.maxSurge`,
            intOrStringValue(maxSurge ?? 0),
            "may not be set when maxUnavailable is non-zero",
          );
        else if (!hasUnavailable && !hasSurge)
          errors.required(`${field}.maxUnavailable`, "cannot be 0 when maxSurge is 0");
      }
    },
    validateUpdate: immutableSelector,
  },
});

export const statefulSetDefinition = defineKind({
  descriptor: statefulSets,
  printer: statefulSetPrinter,
  strategy: {
    prepareForCreate: clearStatus,
    applyDefaults(object) {
      const spec = ((object as StatefulSet).spec ??= { selector: {}, template: {}, serviceName: "" });
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= "OrderedReady";
      const strategy = (spec.updateStrategy ??= {});
      strategy.type ??= "RollingUpdate";
      if (strategy.type === "RollingUpdate") (strategy.rollingUpdate ??= {}).partition ??= 0;
      spec.revisionHistoryLimit ??= 10;
      const retention = (spec.persistentVolumeClaimRetentionPolicy ??= {});
      retention.whenDeleted ??= "Retain";
      retention.whenScaled ??= "Retain";
      templateDefaults(spec.template);
    },
    validate(object, errors) {
      const spec = (object as StatefulSet).spec;
      const policy = spec?.podManagementPolicy;
      if (policy !== undefined && policy !== "OrderedReady" && policy !== "Parallel")
        errors.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'");
      const strategy = spec?.updateStrategy;
      if (strategy?.type !== undefined && strategy.type !== "RollingUpdate" && strategy.type !== "OnDelete")
        errors.invalid(
          "spec.updateStrategy",
          goUpdateStrategy(
            "apps.StatefulSetUpdateStrategy",
            "*apps.RollingUpdateStatefulSetStrategy",
            strategy,
          ),
          "must be 'RollingUpdate' or 'OnDelete'",
        );
      nonNegative(spec?.replicas, "spec.replicas", errors);
      validateSelectorAndTemplate(spec?.selector, spec?.template, errors, "statefulset");
    },
    validateUpdate(object, old, errors) {
      // ValidateStatefulSetUpdate: only these fields of the spec may change.
      const changeable = [
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
      ];
      const rest = (spec: StatefulSet["spec"]) =>
        Object.fromEntries(Object.entries(spec ?? {}).filter(([field]) => !changeable.includes(field)));
      if (!jsonEqual(rest((object as StatefulSet).spec), rest((old as StatefulSet).spec)))
        errors.forbidden(
          "spec",
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        );
    },
    scale: replicasScale(),
  },
});

export const replicationControllerDefinition = defineKind({
  descriptor: replicationControllers,
  printer: replicationControllerPrinter,
  strategy: {
    prepareForCreate: clearStatus,
    applyDefaults(object) {
      const spec = ((object as ReplicationController).spec ??= {});
      spec.replicas ??= 1;
      // SetDefaults_ReplicationController: the selector and the labels default to the template's labels.
      const labels = spec.template?.metadata?.labels;
      if (labels !== undefined) {
        if (spec.selector === undefined || Object.keys(spec.selector).length === 0)
          spec.selector = { ...labels };
        const meta = (object.metadata ??= {});
        if (meta.labels === undefined || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
      }
      templateDefaults(spec.template);
    },
    validate(object, errors) {
      const spec = (object as ReplicationController).spec;
      nonNegative(spec?.replicas, "spec.replicas", errors);
      const selector = spec?.selector ?? {};
      if (Object.keys(selector).length === 0) errors.required("spec.selector");
      if (spec?.template === undefined) return errors.required("spec.template");
      const labels = spec.template.metadata?.labels ?? {};
      if (Object.entries(selector).some(([key, value]) => labels[key] !== value))
        errors.invalid(
          "spec.template.metadata.labels",
          goStringMap(spec.template.metadata?.labels),
          "`selector` does not match template `labels`",
        );
    },
    scale: replicasScale((object) => {
      const selector = (object as ReplicationController).spec?.selector;
      return selector === undefined ? undefined : { matchLabels: selector };
    }),
  },
});

const concurrencyPolicies = ["Allow", "Forbid", "Replace"];

export const cronJobDefinition = defineKind({
  descriptor: cronJobs,
  printer: cronJobPrinter,
  protobufMessage: "CronJob",
  strategy: {
    prepareForCreate: clearStatus,
    applyDefaults(object) {
      const spec = ((object as CronJob).spec ??= { schedule: "", jobTemplate: {} });
      spec.concurrencyPolicy ??= "Allow";
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      const podSpec = spec.jobTemplate?.spec?.template?.spec;
      if (podSpec !== undefined) applyPodSpecDefaults(podSpec);
    },
    validate(object, errors) {
      const spec = (object as CronJob).spec;
      if (spec === undefined) return errors.required("spec");
      validateCronJobSchedule(spec.schedule, spec.timeZone, errors);
      if (spec.concurrencyPolicy !== undefined && !concurrencyPolicies.includes(spec.concurrencyPolicy))
        errors.notSupported("spec.concurrencyPolicy", spec.concurrencyPolicy, concurrencyPolicies);
      nonNegative(spec.successfulJobsHistoryLimit, "spec.successfulJobsHistoryLimit", errors);
      nonNegative(spec.failedJobsHistoryLimit, "spec.failedJobsHistoryLimit", errors);
      if (spec.jobTemplate?.spec?.template === undefined) errors.required("spec.jobTemplate.spec.template");
    },
  },
});

const unhealthyPodEvictionPolicies = ["AlwaysAllow", "IfHealthyBudget"];

export const podDisruptionBudgetDefinition = defineKind({
  descriptor: podDisruptionBudgets,
  protobufMessage: "PodDisruptionBudget",
  printer: podDisruptionBudgetPrinter,
  strategy: {
    prepareForCreate: clearStatus,
    // upstream's ValidatePodDisruptionBudgetSpec.
    validate(object, errors) {
      const spec = (object as PodDisruptionBudget).spec ?? {};
      if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
        errors.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set");
      for (const key of ["minAvailable", "maxUnavailable"] as const) {
        validatePositiveIntOrPercent(spec[key], `spec.${key}`, errors);
        notMoreThan100Percent(spec[key], `spec.${key}`, errors);
      }
      if (spec.selector !== undefined) validateLabelSelector(spec.selector, "spec.selector", errors);
      const policy = spec.unhealthyPodEvictionPolicy;
      if (policy !== undefined && !unhealthyPodEvictionPolicies.includes(policy))
        errors.notSupported("spec.unhealthyPodEvictionPolicy", policy, unhealthyPodEvictionPolicies);
    },
  },
});

/**
 * ControllerRevisions (upstream's `pkg/registry/apps/controllerrevision`): `data`
 * is required and never changes, `revision` is not negative.
 */
export const controllerRevisionDefinition = defineKind({
  descriptor: controllerRevisions,
  printer: controllerRevisionPrinter,
  strategy: {
    validate(object, errors) {
      const revision = object as ControllerRevision;
      if (revision.data === undefined || revision.data === null) errors.required("data", "data is mandatory");
      nonNegative(revision.revision, "revision", errors);
    },
    validateUpdate(object, old, errors) {
      const data = (object as ControllerRevision).data;
      if (!jsonEqual(data, (old as ControllerRevision).data))
        errors.invalid("data", goRawObject(data), "field is immutable");
    },
  },
});

/**
 * PodTemplates (upstream's `pkg/registry/core/podtemplate`): the template is
 * defaulted and validated as every workload's (`ValidatePodTemplateSpec` at
 * `template`), and `metadata.generation` counts changes of the template.
 */
export const podTemplateDefinition = defineKind({
  descriptor: podTemplates,
  printer: podTemplatePrinter,
  generationFollows: "template",
  strategy: {
    applyDefaults(object) {
      templateDefaults((object as PodTemplate).template);
    },
    validate(object, errors) {
      const template = (object as PodTemplate).template ?? {};
      validateLabels(template.metadata?.labels, "template.metadata.labels", errors);
      validatePodSpec(template.spec ?? { containers: [] }, "template.spec", errors);
      if ((template.spec?.ephemeralContainers ?? []).length > 0)
        errors.forbidden(
          "template.spec.ephemeralContainers",
          "ephemeral containers not allowed in pod template",
        );
    },
  },
});

/** The workload kinds, in discovery order. */
export const workloadDefinitions = [
  podTemplateDefinition,
  replicationControllerDefinition,
  daemonSetDefinition,
  statefulSetDefinition,
  controllerRevisionDefinition,
  cronJobDefinition,
  ...autoscalingDefinitions,
  podDisruptionBudgetDefinition,
];

/** `validateScheduleFormat` and `validateTimeZone` of upstream's CronJob validation. */
function validateCronJobSchedule(
  schedule: string | undefined,
  timeZone: string | undefined,
  errors: FieldErrors,
): void {
  if (!schedule) errors.required("spec.schedule");
  else if (/\b(?:CRON_)?TZ=/.test(schedule))
    errors.invalid(
      "spec.schedule",
      schedule,
      "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
    );
  else {
    try {
      CronSchedule.parse(schedule);
    } catch (error) {
      if (!(error instanceof CronScheduleError)) throw error;
      errors.invalid("spec.schedule", schedule, error.message);
    }
  }
  if (timeZone == null) return;
  if (timeZone.length === 0) errors.invalid("spec.timeZone", timeZone, "unknown time zone");
  else if (timeZone.includes(" ") || !isValidTimeZone(timeZone))
    errors.invalid("spec.timeZone", timeZone, `unknown time zone ${timeZone}`);
}

/** Where apps/v1 keeps a DaemonSet's template generation. */
export const templateGenerationAnnotation = "deprecated.daemonset.template.generation";

function setTemplateGeneration(object: KubeObject, generation: number): void {
  const meta = (object.metadata ??= {});
  meta.annotations = { ...meta.annotations, [templateGenerationAnnotation]: String(generation) };
}

function clearStatus(object: KubeObject): void {
  delete (object as { status?: unknown }).status;
}

function templateDefaults(template: PodTemplateSpec | undefined): void {
  if (template?.spec !== undefined) applyPodSpecDefaults(template.spec);
}

/**
 * An update strategy as upstream's errors print it; a rolling update that is
 * set is a pointer, whose address Go prints and which stands as "…" here.
 */
function goUpdateStrategy(
  type: string,
  rollingType: string,
  strategy: { type?: string | undefined; rollingUpdate?: unknown },
): GoSyntax {
  return goStruct(type, [
    ["Type", strategy.type ?? ""],
    [
      "RollingUpdate",
      goPointer(rollingType, strategy.rollingUpdate === undefined ? undefined : new GoSyntax("…")),
    ],
  ]);
}

/**
 * A ControllerRevision's `data` as upstream validates it: the internal type's
 * `runtime.Object`, which JSON decodes to a `*runtime.Unknown` holding the
 * raw bytes (here the data's compact JSON), printed by `%#v`; nil when unset.
 */
function goRawObject(data: unknown): GoSyntax | null {
  if (data === undefined || data === null) return null;
  const bytes = [...Buffer.from(JSON.stringify(data))].map((byte) => `0x${byte.toString(16)}`);
  return goStruct("runtime.Unknown", [
    [
      "TypeMeta",
      goStruct("runtime.TypeMeta", [
        ["APIVersion", ""],
        ["Kind", ""],
      ]),
    ],
    ["Raw", new GoSyntax(`[]uint8{${bytes.join(", ")}}`)],
    ["ContentEncoding", ""],
    ["ContentType", "application/json"],
  ]);
}
