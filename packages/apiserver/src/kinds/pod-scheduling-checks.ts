import { isValidPortNum, type PodSpec } from "@reconcile/api";
import type { Container, NodeSelectorTerm, Probe, Taint } from "kubernetes-types/core/v1.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goToleration } from "../registry/go-syntax.js";
import { validateLabels } from "../registry/meta-validation.js";

// More of upstream's `ValidatePodSpec` (pkg/apis/core/validation): node
// selection, tolerations, DNS, the pod's user, probes, host ports and
// resource names — and the taints of a Node.

const taintEffects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const selectorOperators = new Set(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]);
const standardContainerResources = new Set(["cpu", "memory", "ephemeral-storage"]);
const standardResources = new Set([
  ...standardContainerResources,
  "storage",
  "pods",
  "services",
  "replicationcontrollers",
  "resourcequotas",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "services.nodeports",
  "services.loadbalancers",
]);

function nonNegative(errors: FieldErrors, field: string, value: number | undefined): void {
  if (value !== undefined && value < 0) errors.invalid(field, value, "must be greater than or equal to 0");
}

/** Upstream `ValidateNodeSelectorTerm`'s operator check, for required node affinity. */
function checkTerms(errors: FieldErrors, path: string, terms: readonly NodeSelectorTerm[]): void {
  terms.forEach((term, i) => {
    (term.matchExpressions ?? []).forEach((expression, j) => {
      if (!selectorOperators.has(expression.operator))
        errors.invalid(
          `${path}[${i}].matchExpressions[${j}].operator`,
          expression.operator,
          "not a valid selector operator",
        );
    });
  });
}

function checkProbe(errors: FieldErrors, path: string, probe: Probe | undefined): void {
  if (probe === undefined) return;
  nonNegative(errors, `${path}.initialDelaySeconds`, probe.initialDelaySeconds);
  nonNegative(errors, `${path}.timeoutSeconds`, probe.timeoutSeconds);
  nonNegative(errors, `${path}.periodSeconds`, probe.periodSeconds);
  nonNegative(errors, `${path}.successThreshold`, probe.successThreshold);
  nonNegative(errors, `${path}.failureThreshold`, probe.failureThreshold);
}

/** Upstream `validateContainerResourceName`, after `validateResourceName`. */
function resourceNameProblem(name: string): string | undefined {
  if (name.includes("/")) return undefined;
  if (!standardResources.has(name) && !name.startsWith("hugepages-"))
    return "must be a standard resource type or fully qualified";
  if (!standardContainerResources.has(name) && !name.startsWith("hugepages-"))
    return "must be a standard resource for containers";
  return undefined;
}

/** A container's probes, host ports and resource names. */
export function checkContainerScheduling(errors: FieldErrors, at: string, container: Container): void {
  (container.ports ?? []).forEach((port, j) => {
    const hostPort = port.hostPort;
    if (hostPort !== undefined && hostPort !== 0)
      for (const problem of isValidPortNum(hostPort))
        errors.invalid(`${at}.ports[${j}].hostPort`, hostPort, problem);
  });
  checkProbe(errors, `${at}.livenessProbe`, container.livenessProbe);
  checkProbe(errors, `${at}.readinessProbe`, container.readinessProbe);
  checkProbe(errors, `${at}.startupProbe`, container.startupProbe);
  for (const kind of ["limits", "requests"] as const)
    for (const name in container.resources?.[kind] ?? {}) {
      const problem = resourceNameProblem(name);
      if (problem !== undefined) errors.invalid(`${at}.resources.${kind}[${name}]`, name, problem);
    }
}

/** Node selection, tolerations, DNS and the pod's user. */
export function checkPodScheduling(errors: FieldErrors, path: string, spec: PodSpec): void {
  validateLabels(spec.nodeSelector, `${path}.nodeSelector`, errors);
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required != null)
    checkTerms(
      errors,
      `${path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`,
      required.nodeSelectorTerms ?? [],
    );
  (spec.tolerations ?? []).forEach((toleration, i) => {
    const at = `${path}.tolerations[${i}]`;
    if (toleration.operator === "Exists" && toleration.value)
      errors.invalid(
        `${at}.operator`,
        goToleration(toleration),
        "value must be empty when `operator` is 'Exists'",
      );
    else if (
      toleration.operator !== undefined &&
      toleration.operator !== "Equal" &&
      toleration.operator !== "Exists"
    )
      errors.notSupported(`${at}.operator`, toleration.operator, ["Equal", "Exists"]);
    if (toleration.effect && !taintEffects.includes(toleration.effect))
      errors.notSupported(`${at}.effect`, toleration.effect, taintEffects);
  });
  if (spec.dnsPolicy === "None" && spec.dnsConfig == null)
    errors.required(`${path}.dnsConfig`, "must provide `dnsConfig` when `dnsPolicy` is None");
  const user = spec.securityContext?.runAsUser;
  if (user !== undefined && !(user >= 0 && user <= 2147483647))
    errors.invalid(`${path}.securityContext.runAsUser`, user, "must be between 0 and 2147483647, inclusive");
}

/** A Node's taints: each with a supported effect (upstream `validateNodeTaints`). */
export function checkNodeTaints(errors: FieldErrors, taints: readonly Taint[]): void {
  taints.forEach((taint, i) => {
    const at = `spec.taints[${i}]`;
    if (!taint.effect) errors.required(`${at}.effect`);
    else if (!taintEffects.includes(taint.effect))
      errors.notSupported(`${at}.effect`, taint.effect, taintEffects);
  });
}
