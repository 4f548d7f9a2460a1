import { isDNS1123Subdomain, type Job, jobs } from "@reconcile/api";
import { jsonEqual } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { defineKind } from "./definition.js";
import { applyPodSpecDefaults } from "./pod.js";
import { jobPrinter } from "./printers/index.js";
import { nonNegative, validateSelectorAndTemplate } from "./workload-spec.js";

// Jobs as kube-apiserver serves them: SetDefaults_Job, the selector and
// labels generated from the Job's uid unless `manualSelector`, and the
// checks of ValidateJob / ValidateJobUpdate that clients meet first.

/** The labels a generated selector uses: the uid one selects; the name one is for people. */
export const jobControllerUidLabel = "batch.kubernetes.io/controller-uid";
export const jobNameLabel = "batch.kubernetes.io/job-name";
const legacyControllerUidLabel = "controller-uid";
const legacyJobNameLabel = "job-name";
const maxInt32 = 2_147_483_647;

export const jobDefinition = defineKind({
  descriptor: jobs,
  printer: jobPrinter,
  protobufMessage: "Job",
  strategy: {
    prepareForCreate(object) {
      delete (object as { status?: unknown }).status;
    },
    applyDefaults(object) {
      const spec = ((object as Job).spec ??= { template: {} });
      if (spec.completions == null && spec.parallelism == null) spec.completions = 1;
      spec.parallelism ??= 1;
      spec.backoffLimit ??= spec.backoffLimitPerIndex != null ? maxInt32 : 6;
      spec.completionMode ??= "NonIndexed";
      spec.suspend ??= false;
      spec.podReplacementPolicy ??= spec.podFailurePolicy != null ? "Failed" : "TerminatingOrFailed";
      if (spec.template?.spec !== undefined) applyPodSpecDefaults(spec.template.spec);
    },
    completeCreate(object) {
      const job = object as Job;
      if (job.spec?.manualSelector !== true) generateSelector(job);
      // SetDefaults_Job: a Job without labels takes its template's.
      const meta = (job.metadata ??= {});
      const labels = job.spec?.template?.metadata?.labels;
      if ((meta.labels === undefined || Object.keys(meta.labels).length === 0) && labels !== undefined)
        meta.labels = { ...labels };
    },
    validate(object, errors) {
      validateJobSpec(object as Job, errors);
    },
    validateUpdate(object, old, errors) {
      const [spec, oldSpec] = [(object as Job).spec, (old as Job).spec];
      for (const field of [
        "selector",
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
      ] as const) {
        if (!jsonEqual(spec?.[field], oldSpec?.[field]))
          errors.invalid(`spec.${field}`, spec?.[field] ?? null, "field is immutable");
      }
      // Indexed Jobs may change completions along with parallelism (elastic Indexed Jobs).
      const elastic = spec?.completionMode === "Indexed" && spec.completions === spec.parallelism;
      if (!elastic && spec?.completions !== oldSpec?.completions)
        errors.invalid("spec.completions", spec?.completions ?? null, "field is immutable");
      // A suspended Job that never started may change where its pods run; nothing else of the template.
      const template = stripSchedulingDirectives(spec?.template, oldSpec?.suspend === true);
      const oldTemplate = stripSchedulingDirectives(oldSpec?.template, oldSpec?.suspend === true);
      if (!jsonEqual(template, oldTemplate))
        errors.invalid("spec.template", spec?.template ?? null, "field is immutable");
    },
  },
});

/** `spec.managedBy`: a domain-prefixed path (`ValidateDomainPrefixedPath`) of at most 63 characters. */
function validateManagedBy(managedBy: string, errors: FieldErrors): void {
  const field = "spec.managedBy";
  if (managedBy === "") {
    errors.required(field);
    return;
  }
  const slash = managedBy.indexOf("/");
  const [host, path] =
    slash === -1 ? [managedBy, ""] : [managedBy.slice(0, slash), managedBy.slice(slash + 1)];
  if (slash === -1 || host === "" || path === "")
    errors.invalid(field, managedBy, 'must be a domain-prefixed path (such as "acme.io/foo")');
  else {
    for (const problem of isDNS1123Subdomain(host)) errors.invalid(field, host, problem);
    const pathPattern = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
    if (!/^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(path))
      errors.invalid(field, path, `Invalid path (regex used for validation is '${pathPattern}')`);
  }
  if (managedBy.length > 63) errors.tooLong(field, 63);
}

function generateSelector(job: Job): void {
  const uid = job.metadata?.uid ?? "";
  const name = job.metadata?.name ?? "";
  const spec = (job.spec ??= { template: {} });
  const template = (spec.template ??= {});
  const labels = ((template.metadata ??= {}).labels ??= {});
  labels[jobControllerUidLabel] ??= uid;
  labels[jobNameLabel] ??= name;
  labels[legacyControllerUidLabel] ??= uid;
  labels[legacyJobNameLabel] ??= name;
  const selector = (spec.selector ??= {});
  const matchLabels = (selector.matchLabels ??= {});
  matchLabels[jobControllerUidLabel] ??= uid;
}

function validateJobSpec(job: Job, errors: FieldErrors): void {
  const spec = job.spec;
  if (spec === undefined) {
    errors.required("spec");
    return;
  }
  nonNegative(spec.parallelism, "spec.parallelism", errors);
  nonNegative(spec.completions ?? undefined, "spec.completions", errors);
  nonNegative(spec.backoffLimit, "spec.backoffLimit", errors);
  if (spec.activeDeadlineSeconds != null && spec.activeDeadlineSeconds <= 0)
    errors.invalid("spec.activeDeadlineSeconds", spec.activeDeadlineSeconds, "must be greater than 0");
  nonNegative(spec.ttlSecondsAfterFinished, "spec.ttlSecondsAfterFinished", errors);
  if (spec.managedBy != null) validateManagedBy(spec.managedBy, errors);
  if (spec.completionMode !== undefined && !["NonIndexed", "Indexed"].includes(spec.completionMode))
    errors.notSupported("spec.completionMode", spec.completionMode, ["NonIndexed", "Indexed"]);
  if (spec.completionMode === "Indexed") {
    if (spec.completions == null) errors.required("spec.completions", "when completion mode is Indexed");
    else if (spec.parallelism !== undefined && spec.parallelism > 100_000)
      errors.invalid(
        "spec.parallelism",
        spec.parallelism,
        "must be less than or equal to 100000 when completion mode is Indexed",
      );
  }
  const template = validateSelectorAndTemplate(spec.selector, spec.template, errors, "job");
  const restartPolicy = template?.spec?.restartPolicy;
  if (template !== undefined && restartPolicy !== "OnFailure" && restartPolicy !== "Never")
    errors.notSupported("spec.template.spec.restartPolicy", restartPolicy ?? "", ["OnFailure", "Never"]);
  else if (spec.podFailurePolicy != null && restartPolicy !== "Never")
    errors.invalid(
      "spec.template.spec.restartPolicy",
      restartPolicy ?? "",
      'only "Never" is supported when podFailurePolicy is specified',
    );
  if (spec.podFailurePolicy != null && spec.podReplacementPolicy === "TerminatingOrFailed")
    errors.notSupported("spec.podReplacementPolicy", spec.podReplacementPolicy, ["Failed"]);
}

function stripSchedulingDirectives(template: unknown, suspended: boolean): unknown {
  if (!suspended || template === undefined) return template;
  const copy = structuredClone(template) as {
    spec?: Record<string, unknown>;
    metadata?: Record<string, unknown>;
  };
  for (const field of ["nodeSelector", "tolerations", "affinity", "schedulingGates"])
    delete copy.spec?.[field];
  delete copy.metadata?.labels;
  delete copy.metadata?.annotations;
  return copy;
}
