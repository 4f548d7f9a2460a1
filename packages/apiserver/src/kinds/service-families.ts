import { type IPFamily, ipFamilyOf, newInvalid, type Service } from "@reconcile/api";
import { FieldErrors } from "../registry/field-errors.js";
import { goStrings } from "../registry/go-syntax.js";

// A Service's IP family fields as its REST storage settles them before it
// allocates (upstream pkg/registry/core/service/storage/alloc.go
// `initIPFamilyFields`, after `ValidateServiceClusterIPsRelatedFields`), for
// the families the cluster's service ranges serve: the policy inferred when
// unset (or kept from the stored Service), the families inferred from
// requested cluster IPs, the second family added where dual-stack is asked
// for and served, an update's downgrade to one family, and a 422 for what
// this cluster cannot give. A headless Service without a selector is the
// exception upstream makes: it may name both families on any cluster, and
// unless single-stack it is given both.

const supportedFamilies = ["IPv4", "IPv6"];
const supportedPolicies = ["PreferDualStack", "RequireDualStack", "SingleStack"];

/**
 * Sets `ipFamilyPolicy` and `ipFamilies` of a Service being created (or
 * updated from `old`) on a cluster serving `clusterFamilies` (the primary
 * first; IPv4 alone for a server without Service IP allocators), or throws
 * the 422 upstream answers. An ExternalName Service has neither.
 */
export function initIPFamilyFields(
  service: Service,
  old: Service | undefined,
  clusterFamilies: readonly IPFamily[] = ["IPv4"],
): void {
  const spec = service.spec;
  if (spec === undefined || spec.type === "ExternalName") return;
  // A create that names only the singular field gets the plural (upstream's `normalizeClusterIPs`).
  if (old === undefined && spec.clusterIP && (spec.clusterIPs ?? []).length === 0)
    spec.clusterIPs = [spec.clusterIP];
  // A PreferDualStack Service is not moved between one and two families unless the client asks.
  if (old !== undefined && isMatchingPreferDualStack(service, old)) return;
  const headlessWithoutSelector = spec.clusterIP === "None" && Object.keys(spec.selector ?? {}).length === 0;
  spec.ipFamilyPolicy ??=
    old?.spec?.ipFamilyPolicy ?? (headlessWithoutSelector ? "RequireDualStack" : "SingleStack");
  const policy = spec.ipFamilyPolicy;
  const name = service.metadata?.name ?? "";
  const relatedFieldErrors = validateRelatedFields(service);
  if (!relatedFieldErrors.empty)
    throw newInvalid({ group: "", kind: "Service" }, name, relatedFieldErrors.list);

  const errors = new FieldErrors();
  if (old?.spec !== undefined) prepareUpdateFamilies(service, old, errors);
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
    const family = ipFamilyOf(ip) ?? "IPv4";
    if (clusterFamilies.includes(family)) families.push(family);
    else
      errors.invalid(
        `spec.clusterIPs[${i}]`,
        goStrings(clusterIPs),
        `${family} is not configured on this cluster`,
      );
  }
  if (!errors.empty) throw newInvalid({ group: "", kind: "Service" }, name, errors.list);

  if (headlessWithoutSelector) {
    if (families.length === 0) families.push(clusterFamilies[0]!);
    if (families.length < 2 && policy !== "SingleStack") families.push(otherFamily(families[0]!));
    spec.ipFamilies = families;
    return;
  }
  if (policy === "RequireDualStack" && clusterFamilies.length < 2)
    errors.invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services");
  for (const [i, family] of families.entries())
    if (!clusterFamilies.includes(family as IPFamily))
      errors.invalid(`spec.ipFamilies[${i}]`, family, "not configured on this cluster");
  if (!errors.empty) throw newInvalid({ group: "", kind: "Service" }, name, errors.list);
  if (families.length === 0) families.push(clusterFamilies[0]!);
  if (policy !== "SingleStack" && families.length === 1 && clusterFamilies.length === 2)
    families.push(otherFamily(families[0]!));
  spec.ipFamilies = families;
}

/**
 * `clusterIP` and `clusterIPs` kept in step on update (upstream's
 * `NormalizeClusterIPs`): a client that sends only the singular field gets
 * the plural from it, and one that clears the singular clears both.
 */
export function normalizeClusterIPs(service: Service, old: Service): void {
  const spec = service.spec;
  const oldSpec = old.spec;
  if (spec === undefined || oldSpec === undefined) return;
  if ((oldSpec.clusterIPs ?? []).length > 0 && (spec.clusterIPs ?? []).length === 0) {
    if (oldSpec.clusterIP === spec.clusterIP && oldSpec.clusterIPs !== undefined)
      spec.clusterIPs = oldSpec.clusterIPs;
  }
  if (oldSpec.clusterIP === spec.clusterIP) return;
  const sameList = sameStrings(oldSpec.clusterIPs, spec.clusterIPs);
  if (oldSpec.clusterIP && !spec.clusterIP && sameList) delete spec.clusterIPs;
  else if (sameList && spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
}

/**
 * An update's preparation (upstream's "update-only prep work"): a policy set
 * to SingleStack with the lists as they were keeps only the primary IP and
 * family; any other policy may not shorten them.
 */
function prepareUpdateFamilies(service: Service, old: Service, errors: FieldErrors): void {
  const spec = service.spec!;
  const oldSpec = old.spec!;
  const policy = spec.ipFamilyPolicy;
  if (policy === "SingleStack") {
    if (sameStrings(oldSpec.clusterIPs, spec.clusterIPs) && (spec.clusterIPs ?? []).length > 1)
      spec.clusterIPs = spec.clusterIPs!.slice(0, 1);
    if (sameStrings(oldSpec.ipFamilies, spec.ipFamilies) && (spec.ipFamilies ?? []).length > 1)
      spec.ipFamilies = spec.ipFamilies!.slice(0, 1);
    return;
  }
  const shorter = (now: string[] | undefined, before: string[] | undefined) =>
    (now ?? []).length > 0 && (now ?? []).length < (before ?? []).length;
  if (shorter(spec.clusterIPs, oldSpec.clusterIPs))
    errors.invalid(
      "spec.ipFamilyPolicy",
      policy,
      "must be 'SingleStack' to release the secondary cluster IP",
    );
  if (shorter(spec.ipFamilies, oldSpec.ipFamilies))
    errors.invalid("spec.ipFamilyPolicy", policy, "must be 'SingleStack' to release the secondary IP family");
}

/**
 * Upstream's `isMatchingPreferDualStackClusterIPFields`: an update of a
 * PreferDualStack Service that keeps its type (one with cluster IPs), policy,
 * IPs and families is left as it is, whatever the cluster now serves.
 */
function isMatchingPreferDualStack(service: Service, old: Service): boolean {
  const spec = service.spec!;
  const oldSpec = old.spec;
  if (oldSpec === undefined || spec.ipFamilyPolicy === undefined) return false;
  if (oldSpec.type !== spec.type) return false;
  if (spec.type !== "ClusterIP" && spec.type !== "NodePort" && spec.type !== "LoadBalancer") return false;
  if (spec.ipFamilyPolicy !== "PreferDualStack") return false;
  if (oldSpec.ipFamilyPolicy !== undefined && oldSpec.ipFamilyPolicy !== "PreferDualStack") return false;
  return sameStrings(oldSpec.clusterIPs, spec.clusterIPs) && sameStrings(oldSpec.ipFamilies, spec.ipFamilies);
}

function otherFamily(family: string): IPFamily {
  return family === "IPv4" ? "IPv6" : "IPv4";
}

export function sameStrings(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

/** The parts of upstream's `ValidateServiceClusterIPsRelatedFields` the allocation relies on. */
function validateRelatedFields(service: Service): FieldErrors {
  const spec = service.spec!;
  const errors = new FieldErrors();
  const clusterIPs = spec.clusterIPs ?? [];
  if (spec.clusterIP) {
    if (clusterIPs.length === 0) errors.required("spec.clusterIPs");
    else if (clusterIPs[0] !== spec.clusterIP)
      errors.invalid("spec.clusterIPs", goStrings(clusterIPs), "first value must match `clusterIP`");
  } else if (clusterIPs.length > 0) {
    errors.invalid(
      "spec.clusterIPs",
      goStrings(clusterIPs),
      "must be empty when `clusterIP` is not specified",
    );
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
  let invalidIPs = false;
  for (const [i, ip] of clusterIPs.entries()) {
    if (i === 0 && ip === "None") {
      if (clusterIPs.length > 1) {
        invalidIPs = true;
        errors.invalid("spec.clusterIPs", goStrings(clusterIPs), "'None' must be the first and only value");
      }
      continue;
    }
    if (ipFamilyOf(ip) === undefined) {
      invalidIPs = true;
      errors.invalid(
        `spec.clusterIPs[${i}]`,
        ip,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
      );
    }
  }
  if (clusterIPs.length > 2)
    errors.invalid("spec.clusterIPs", goStrings(clusterIPs), "may only hold up to 2 values");
  if (invalidIPs) return errors;
  if (clusterIPs.length > 1 && ipFamilyOf(clusterIPs[0]!) === ipFamilyOf(clusterIPs[1]!))
    errors.invalid(
      "spec.clusterIPs",
      goStrings(clusterIPs),
      "may specify no more than one IP for each IP family",
    );
  const families = spec.ipFamilies ?? [];
  if (!(clusterIPs.length === 1 && clusterIPs[0] === "None"))
    for (const [i, ip] of clusterIPs.entries()) {
      if (i >= families.length) break;
      const family = ipFamilyOf(ip);
      if (families[i] === "IPv4" && family === "IPv6")
        errors.invalid(
          `spec.clusterIPs[${i}]`,
          ip,
          `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``,
        );
      if (families[i] === "IPv6" && family !== "IPv6")
        errors.invalid(
          `spec.clusterIPs[${i}]`,
          ip,
          `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``,
        );
    }
  return errors;
}
