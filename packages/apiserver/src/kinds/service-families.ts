import { isIPv6 } from "node:net";
import { newInvalid, type Service } from "@reconcile/api";
import { FieldErrors } from "../registry/field-errors.js";

// A Service's IP family fields as its REST storage settles them before it
// allocates (upstream pkg/registry/core/service/storage/alloc.go
// `initIPFamilyFields`, after `ValidateServiceClusterIPsRelatedFields`), on a
// cluster whose Service range is IPv4 only: the policy inferred when unset,
// the families inferred from requested cluster IPs, and a 422 for what this
// cluster cannot give (`RequireDualStack`, an IPv6 family or address). A
// headless Service without a selector is the exception upstream makes: it
// may name both families, and unless single-stack it is given both.

/** The families this cluster's Service range serves, the default first. */
const clusterFamilies: readonly string[] = ["IPv4"];
const supportedFamilies = ["IPv4", "IPv6"];
const supportedPolicies = ["PreferDualStack", "RequireDualStack", "SingleStack"];

/**
 * Sets `ipFamilyPolicy` and `ipFamilies` of a Service being created (or
 * updated from `old`), or throws the 422 upstream answers. An ExternalName
 * Service has neither.
 */
export function initIPFamilyFields(service: Service, old?: Service): void {
  const spec = service.spec;
  if (spec === undefined || spec.type === "ExternalName") return;
  // A create that names only the singular field gets the plural (upstream's `normalizeClusterIPs`).
  if (old === undefined && spec.clusterIP && (spec.clusterIPs ?? []).length === 0)
    spec.clusterIPs = [spec.clusterIP];
  const headlessWithoutSelector = spec.clusterIP === "None" && Object.keys(spec.selector ?? {}).length === 0;
  spec.ipFamilyPolicy ??=
    old?.spec?.ipFamilyPolicy ?? (headlessWithoutSelector ? "RequireDualStack" : "SingleStack");
  const policy = spec.ipFamilyPolicy;
  const name = service.metadata?.name ?? "";
  const relatedFieldErrors = validateRelatedFields(service);
  if (!relatedFieldErrors.empty)
    throw newInvalid({ group: "", kind: "Service" }, name, relatedFieldErrors.list);

  const errors = new FieldErrors();
  const families = [...(spec.ipFamilies ?? [])];
  const clusterIPs = spec.clusterIPs ?? [];
  if (policy === "SingleStack") {
    if (clusterIPs.length === 2)
      errors.invalid(
        "spec.ipFamilyPolicy",
        policy,
        "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
      );
    if (families.length === 2)
      errors.invalid(
        "spec.ipFamilyPolicy",
        policy,
        "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
      );
  }
  // The families of requested cluster IPs, where none is named for them.
  for (const [i, ip] of clusterIPs.entries()) {
    if (ip === "None") break;
    if (i < families.length) continue;
    const family = familyOf(ip);
    if (clusterFamilies.includes(family)) families.push(family);
    else errors.invalid(`spec.clusterIPs[${i}]`, clusterIPs, `${family} is not configured on this cluster`);
  }
  if (!errors.empty) throw newInvalid({ group: "", kind: "Service" }, name, errors.list);

  if (headlessWithoutSelector) {
    if (families.length === 0) families.push(clusterFamilies[0]!);
    if (families.length < 2 && policy !== "SingleStack")
      families.push(families[0] === "IPv4" ? "IPv6" : "IPv4");
    spec.ipFamilies = families;
    return;
  }
  if (policy === "RequireDualStack" && clusterFamilies.length < 2)
    errors.invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services");
  for (const [i, family] of families.entries())
    if (!clusterFamilies.includes(family))
      errors.invalid(`spec.ipFamilies[${i}]`, family, "not configured on this cluster");
  if (!errors.empty) throw newInvalid({ group: "", kind: "Service" }, name, errors.list);
  spec.ipFamilies = families.length === 0 ? [clusterFamilies[0]!] : families;
}

/** The parts of upstream's `ValidateServiceClusterIPsRelatedFields` the allocation relies on. */
function validateRelatedFields(service: Service): FieldErrors {
  const spec = service.spec!;
  const errors = new FieldErrors();
  const clusterIPs = spec.clusterIPs ?? [];
  if (spec.clusterIP) {
    if (clusterIPs.length === 0) errors.required("spec.clusterIPs");
    else if (clusterIPs[0] !== spec.clusterIP)
      errors.invalid("spec.clusterIPs", clusterIPs, "first value must match `clusterIP`");
  } else if (clusterIPs.length > 0) {
    errors.invalid("spec.clusterIPs", clusterIPs, "must be empty when `clusterIP` is not specified");
  }
  const seen = new Set<string>();
  for (const [i, family] of (spec.ipFamilies ?? []).entries()) {
    if (!supportedFamilies.includes(family))
      errors.notSupported(`spec.ipFamilies[${i}]`, family, supportedFamilies);
    if (seen.has(family)) errors.duplicate(`spec.ipFamilies[${i}]`, family);
    seen.add(family);
  }
  if (spec.ipFamilyPolicy !== undefined && !supportedPolicies.includes(spec.ipFamilyPolicy))
    errors.notSupported("spec.ipFamilyPolicy", spec.ipFamilyPolicy, supportedPolicies);
  return errors;
}

function familyOf(ip: string): string {
  return isIPv6(ip) ? "IPv6" : "IPv4";
}
