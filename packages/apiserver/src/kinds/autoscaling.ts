import { defineResource, horizontalPodAutoscalers, type KubeObject } from "@reconcile/api";
import type {
  HorizontalPodAutoscalerBehavior,
  HPAScalingRules,
  MetricSpec,
  MetricStatus,
  HorizontalPodAutoscaler as V2,
} from "kubernetes-types/autoscaling/v2.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { defineKind } from "./definition.js";
import { horizontalPodAutoscalerPrinter } from "./printers/index.js";

// HorizontalPodAutoscalers at autoscaling/v2 (stored) and autoscaling/v1 (what
// `kubectl autoscale` writes), with upstream's defaults, validation and the
// v1 conversion, whose v2-only fields travel in annotations.

/** autoscaling/v1: one CPU target, the other metrics in annotations (upstream's conversion). */
export const horizontalPodAutoscalersV1 = defineResource({
  group: "autoscaling",
  version: "v1",
  kind: "HorizontalPodAutoscaler",
  plural: "horizontalpodautoscalers",
  namespaced: true,
  shortNames: ["hpa"],
  categories: ["all"],
  subresources: ["status"],
});

const metricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics";
const currentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics";
const conditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions";
const behaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior";

/** The CPU utilization target `kubectl autoscale` and v1 mean when no metric is given. */
const defaultCPUUtilization = 80;

const cpuTarget = (percent: number): MetricSpec => ({
  type: "Resource",
  resource: { name: "cpu", target: { type: "Utilization", averageUtilization: percent } },
});

// SetDefaults_HorizontalPodAutoscalerBehavior's rules, filled in where a given behavior leaves gaps.
const defaultScaleUp: HPAScalingRules = {
  stabilizationWindowSeconds: 0,
  selectPolicy: "Max",
  policies: [
    { type: "Pods", value: 4, periodSeconds: 15 },
    { type: "Percent", value: 100, periodSeconds: 15 },
  ],
};
const defaultScaleDown: HPAScalingRules = {
  selectPolicy: "Max",
  policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
};

function withDefaults(rules: HPAScalingRules | undefined, defaults: HPAScalingRules): HPAScalingRules {
  if (rules === undefined) return structuredClone(defaults);
  const filled: HPAScalingRules = { ...rules };
  if (filled.stabilizationWindowSeconds === undefined && defaults.stabilizationWindowSeconds !== undefined)
    filled.stabilizationWindowSeconds = defaults.stabilizationWindowSeconds;
  if (filled.selectPolicy === undefined && defaults.selectPolicy !== undefined)
    filled.selectPolicy = defaults.selectPolicy;
  if ((filled.policies === undefined || filled.policies.length === 0) && defaults.policies !== undefined)
    filled.policies = structuredClone(defaults.policies);
  return filled;
}

/** `SetDefaults_HorizontalPodAutoscaler` (v2): minReplicas 1, 80% CPU without metrics, a given behavior filled in. */
export function applyHPADefaults(hpa: V2): void {
  const spec = hpa.spec;
  if (spec === undefined) return;
  spec.minReplicas ??= 1;
  if (spec.metrics === undefined || spec.metrics.length === 0)
    spec.metrics = [cpuTarget(defaultCPUUtilization)];
  if (spec.behavior !== undefined) {
    spec.behavior = {
      ...spec.behavior,
      scaleUp: withDefaults(spec.behavior.scaleUp, defaultScaleUp),
      scaleDown: withDefaults(spec.behavior.scaleDown, defaultScaleDown),
    };
  }
}

function validateHPA(spec: V2["spec"] | undefined, errors: FieldErrors): void {
  if (spec === undefined) {
    errors.required("spec");
    return;
  }
  if (!spec.scaleTargetRef?.kind) errors.required("spec.scaleTargetRef.kind");
  if (!spec.scaleTargetRef?.name) errors.required("spec.scaleTargetRef.name");
  if (spec.minReplicas !== undefined && spec.minReplicas < 1)
    errors.invalid("spec.minReplicas", spec.minReplicas, "must be greater than or equal to 1");
  if (spec.maxReplicas < 1) errors.invalid("spec.maxReplicas", spec.maxReplicas, "must be greater than 0");
  else if (spec.minReplicas !== undefined && spec.maxReplicas < spec.minReplicas)
    errors.invalid("spec.maxReplicas", spec.maxReplicas, "must be greater than or equal to `minReplicas`");
  (spec.metrics ?? []).forEach((metric, i) => {
    validateMetricSpec(metric, `spec.metrics[${i}]`, errors);
  });
}

/** The source field of each metric type. */
const metricSources: Readonly<Record<string, keyof MetricSpec>> = {
  ContainerResource: "containerResource",
  External: "external",
  Object: "object",
  Pods: "pods",
  Resource: "resource",
};

/** Upstream's `validateMetricSpec`: a known type, its source and no other, and a valid target. */
function validateMetricSpec(metric: MetricSpec, path: string, errors: FieldErrors): void {
  const type = metric.type ?? "";
  if (type === "") errors.required(`${path}.type`, "must specify a metric source type");
  const expected = metricSources[type];
  if (expected === undefined) errors.notSupported(`${path}.type`, type, Object.keys(metricSources));
  else if (metric[expected] === undefined)
    errors.required(`${path}.${expected}`, "must populate information for the given metric source");
  const present = Object.values(metricSources).filter((field) => metric[field] !== undefined);
  if (present.length > 1)
    for (const field of present)
      if (field !== expected)
        errors.forbidden(`${path}.${field}`, "must populate the given metric source only");
  const source = present.length === 1 ? present[0]! : expected;
  if (source === undefined) return;
  const value = metric[source] as { name?: string; target?: ResourceTarget } | undefined;
  if (value === undefined) return;
  if ((source === "resource" || source === "containerResource") && !value.name)
    errors.required(`${path}.${source}.name`, "must specify a resource name");
  validateMetricTarget(
    value.target,
    `${path}.${source}.target`,
    errors,
    source === "resource" || source === "containerResource",
  );
}

/** Upstream's `validateMetricTarget`, with the resource sources' rule that a target is a utilization or an average value. */
function validateMetricTarget(
  target: ResourceTarget | undefined,
  path: string,
  errors: FieldErrors,
  resource: boolean,
): void {
  const type = target?.type ?? "";
  if (type === "") errors.required(`${path}.type`, "must specify a metric target type");
  if (type !== "Utilization" && type !== "Value" && type !== "AverageValue")
    errors.invalid(`${path}.type`, type, "must be either Utilization, Value, or AverageValue");
  if (target?.averageUtilization !== undefined && target.averageUtilization < 1)
    errors.invalid(`${path}.averageUtilization`, target.averageUtilization, "must be greater than 0");
  if (!resource) return;
  if (target?.averageUtilization === undefined && target?.averageValue === undefined)
    errors.required(
      `${path}.averageUtilization`,
      "must set either a target raw value or a target utilization",
    );
  if (target?.averageUtilization !== undefined && target.averageValue !== undefined)
    errors.forbidden(`${path}.averageValue`, "may not set both a target raw value and a target utilization");
}

type ResourceTarget = NonNullable<MetricSpec["resource"]>["target"];

export const horizontalPodAutoscalerDefinition = defineKind({
  descriptor: horizontalPodAutoscalers,
  printer: horizontalPodAutoscalerPrinter,
  strategy: {
    prepareForCreate: clearStatus,
    applyDefaults: (object) => applyHPADefaults(object as V2),
    validate: (object, errors) => validateHPA((object as V2).spec, errors),
  },
});

/** The v1 view of a stored v2 autoscaler (upstream `Convert_autoscaling_HorizontalPodAutoscaler_To_v1_…`). */
export function hpaToV1(stored: KubeObject): KubeObject {
  const hpa = stored as V2;
  const metrics = hpa.spec?.metrics ?? [];
  const isCPU = (m: MetricSpec) =>
    m.type === "Resource" && m.resource?.name === "cpu" && m.resource.target?.type === "Utilization";
  const cpu = metrics.find(isCPU);
  const others = metrics.filter((m) => !isCPU(m));
  const current: MetricStatus[] = hpa.status?.currentMetrics ?? [];
  const currentCPU = current.find((m) => m.type === "Resource" && m.resource?.name === "cpu");
  const otherCurrent = current.filter((m) => m !== currentCPU);
  const annotations: Record<string, string> = { ...hpa.metadata?.annotations };
  if (others.length > 0) annotations[metricsAnnotation] = JSON.stringify(others);
  if (otherCurrent.length > 0) annotations[currentMetricsAnnotation] = JSON.stringify(otherCurrent);
  if ((hpa.status?.conditions ?? []).length > 0)
    annotations[conditionsAnnotation] = JSON.stringify(hpa.status!.conditions);
  if (hpa.spec?.behavior !== undefined) annotations[behaviorAnnotation] = JSON.stringify(hpa.spec.behavior);
  const { spec, status, ...rest } = hpa;
  const v1: Record<string, unknown> = {
    ...rest,
    apiVersion: "autoscaling/v1",
    metadata: { ...hpa.metadata, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    spec: {
      scaleTargetRef: spec?.scaleTargetRef,
      ...(spec?.minReplicas !== undefined ? { minReplicas: spec.minReplicas } : {}),
      maxReplicas: spec?.maxReplicas,
      ...(cpu?.resource?.target?.averageUtilization !== undefined
        ? { targetCPUUtilizationPercentage: cpu.resource.target.averageUtilization }
        : {}),
    },
  };
  if (status !== undefined) {
    v1.status = {
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status.lastScaleTime !== undefined ? { lastScaleTime: status.lastScaleTime } : {}),
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas,
      ...(currentCPU?.resource?.current?.averageUtilization !== undefined
        ? { currentCPUUtilizationPercentage: currentCPU.resource.current.averageUtilization }
        : {}),
    };
  }
  return v1 as KubeObject;
}

/** The stored v2 form of a v1 autoscaler, the annotations' v2-only fields restored (upstream `Convert_v1_…_To_autoscaling_…`). */
export function hpaFromV1(object: KubeObject): KubeObject {
  const v1 = object as KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
  const annotations: Record<string, string> = { ...v1.metadata?.annotations };
  const parsed = <T>(key: string): T | undefined => {
    const text = annotations[key];
    delete annotations[key];
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as T;
    } catch {
      return undefined;
    }
  };
  const others = parsed<MetricSpec[]>(metricsAnnotation) ?? [];
  const otherCurrent = parsed<MetricStatus[]>(currentMetricsAnnotation) ?? [];
  const conditions = parsed<NonNullable<V2["status"]>["conditions"]>(conditionsAnnotation);
  const behavior = parsed<HorizontalPodAutoscalerBehavior>(behaviorAnnotation);
  const spec = v1.spec ?? {};
  const target = spec.targetCPUUtilizationPercentage as number | undefined;
  const metrics = [...(target !== undefined ? [cpuTarget(target)] : []), ...others];
  const { targetCPUUtilizationPercentage: _, ...specRest } = spec;
  const v2: Record<string, unknown> = {
    ...v1,
    apiVersion: "autoscaling/v2",
    metadata: { ...v1.metadata },
    spec: {
      ...specRest,
      metrics: metrics.length > 0 ? metrics : [cpuTarget(defaultCPUUtilization)],
      ...(behavior !== undefined ? { behavior } : {}),
    },
  };
  const meta = v2.metadata as { annotations?: Record<string, string> };
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  if (v1.status !== undefined) {
    const { currentCPUUtilizationPercentage: cpu, ...statusRest } = v1.status;
    const currentMetrics: MetricStatus[] = [
      ...(typeof cpu === "number"
        ? [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: cpu } } }]
        : []),
      ...otherCurrent,
    ];
    v2.status = {
      ...statusRest,
      ...(currentMetrics.length > 0 ? { currentMetrics } : {}),
      ...(conditions !== undefined ? { conditions } : {}),
    };
  }
  return v2 as KubeObject;
}

export const horizontalPodAutoscalerV1Definition = defineKind({
  descriptor: horizontalPodAutoscalersV1,
  printer: horizontalPodAutoscalerPrinter,
  protobufMessage: "HorizontalPodAutoscalerV1",
  storageVersion: "v2",
  conversion: { toStorage: hpaFromV1, fromStorage: hpaToV1 },
  strategy: {
    prepareForCreate: clearStatus,
    applyDefaults(object) {
      const spec = (object as { spec?: { minReplicas?: number } }).spec;
      if (spec !== undefined) spec.minReplicas ??= 1;
    },
    validate(object, errors) {
      const spec = (object as { spec?: V2["spec"] & { targetCPUUtilizationPercentage?: number } }).spec;
      validateHPA(spec, errors);
      const cpu = spec?.targetCPUUtilizationPercentage;
      if (cpu !== undefined && cpu < 1)
        errors.invalid("spec.targetCPUUtilizationPercentage", cpu, "must be greater than 0");
    },
  },
});

export const autoscalingDefinitions = [
  horizontalPodAutoscalerDefinition,
  horizontalPodAutoscalerV1Definition,
];

function clearStatus(object: KubeObject): void {
  delete (object as { status?: unknown }).status;
}
