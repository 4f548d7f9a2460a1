import { type APIService, apiServices } from "@reconcile/api";
import { pathSegmentProblems } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { ageColumn, ageOf, column, nameColumn, nameOf, type Printer } from "./printers/columns.js";

// apiregistration.k8s.io/v1 APIServices, as kube-aggregator serves them: one
// per group-version the server serves (kept by the registration in
// `api-service-registration.ts`), and any a user registers.

/** upstream's `ValidateAPIService`: the name is `<version>.<group>`; priorities in range. */
const apiServiceStrategy: Strategy = {
  // Any path segment (`v1.` for the core group); the name must match the spec, checked below.
  nameRule: pathSegmentProblems,
  validate(object, errors) {
    const service = object as APIService;
    const spec = service.spec;
    const name = service.metadata?.name ?? "";
    if (spec === undefined) return;
    const required = `${spec.version ?? ""}.${spec.group ?? ""}`;
    if (name !== required) errors.invalid("metadata.name", name, `must be ${required}`);
    if (!spec.version) errors.required("spec.version", "");
    if (spec.groupPriorityMinimum <= 0 || spec.groupPriorityMinimum > 20000)
      errors.invalid(
        "spec.groupPriorityMinimum",
        spec.groupPriorityMinimum,
        "must be positive and less than 20000",
      );
    if (spec.versionPriority <= 0 || spec.versionPriority > 1000)
      errors.invalid("spec.versionPriority", spec.versionPriority, "must be positive and less than 1000");
    if (spec.service === undefined) {
      if (spec.insecureSkipTLSVerify)
        errors.invalid("spec.insecureSkipTLSVerify", true, "must not be set for Local services");
      if (spec.caBundle) errors.invalid("spec.caBundle", spec.caBundle, "must not be set for Local services");
      return;
    }
    const ref = spec.service;
    if (!ref.namespace) errors.required("spec.service.namespace", "");
    if (!ref.name) errors.required("spec.service.name", "");
    const port = ref.port ?? 443;
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      errors.invalid("spec.service.port", port, "port is not valid: must be between 1 and 65535, inclusive");
    if (spec.insecureSkipTLSVerify && spec.caBundle)
      errors.invalid("spec.insecureSkipTLSVerify", true, "may not be true if caBundle is present");
  },
  // SetDefaults_ServiceReference: an aggregated server listens on 443 unless told otherwise.
  applyDefaults(object) {
    const service = (object as APIService).spec?.service;
    if (service !== undefined) service.port ??= 443;
  },
};

/** kube-aggregator's table: where the API is served and whether it is available. */
const apiServicePrinter: Printer = {
  columns: [
    nameColumn,
    column("Service", "string", "The reference to the service that hosts this API endpoint."),
    column("Available", "string", "Whether this service is available."),
    ageColumn,
  ],
  cells(object: APIService, now) {
    const service = object.spec?.service;
    const where = service === undefined ? "Local" : `${service.namespace ?? ""}/${service.name ?? ""}`;
    const available = object.status?.conditions?.find((c) => c.type === "Available");
    let status = "Unknown";
    if (available?.status === "True") status = "True";
    else if (available !== undefined)
      status = available.reason ? `${available.status} (${available.reason})` : available.status;
    return [nameOf(object), where, status, ageOf(object, now)];
  },
};

export const apiServiceDefinition = defineKind({
  descriptor: apiServices,
  strategy: apiServiceStrategy,
  printer: apiServicePrinter,
});
