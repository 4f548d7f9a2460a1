import {
  amountsOf,
  formatAmounts,
  type Pod,
  podQuotaConstraints,
  quotaResourcesFor,
  quotaScopesMatch,
  quotaUsage,
  type ResourceAmounts,
  resourceListOf,
  resourceQuotas,
} from "@reconcile/api";
import type { ResourceQuota } from "kubernetes-types/core/v1.js";
import type { AdmissionAttributes } from "../../registry/admission.js";
import { StorageError } from "../../storage/storage.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden } from "../plugin.js";

/** How many times a quota's usage is re-read after another write to it came first. */
const conflictAttempts = 100;

/**
 * ResourceQuota: a write that would take a namespace's usage over any of its
 * quotas' hard limits is refused with upstream's `exceeded quota` text; one
 * admitted adds its usage to each quota's `status.used` at once (the quota
 * controller recounts later). Only what the quota controller has put in
 * `status.hard` is enforced; a quota that tracks cpu or memory makes every
 * container state it. Creates count; updates count for claims and Services.
 */
export function resourceQuotaPlugin(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "ResourceQuota",
    validate(a) {
      if (a.namespace === "" || a.subresource !== "" || a.object === undefined) return;
      const resource = a.resource;
      const updates =
        resource.group === "" &&
        (resource.plural === "persistentvolumeclaims" || resource.plural === "services");
      if (a.operation !== "CREATE" && !(a.operation === "UPDATE" && updates)) return;
      const quotas = context.list(resourceQuotas, a.namespace);
      // No quota in the namespace: nothing to wait for.
      if (!(quotas instanceof Promise) && quotas.length === 0) return;
      return charge(a, context, quotas);
    },
  };
}

/** Charges `a` to the namespace's quotas (`listed` first, read again after a conflict), writing their usage. */
async function charge(
  a: AdmissionAttributes,
  context: AdmissionContext,
  listed: readonly ResourceQuota[] | Promise<readonly ResourceQuota[]>,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const quotas = attempt === 0 ? await listed : await context.list(resourceQuotas, a.namespace);
    if (quotas.length === 0) return;
    const charged = chargeQuotas(a, quotas, context.clock.now());
    if (charged.length === 0 || a.dryRun) return;
    try {
      for (const { quota, hard, used } of charged) {
        const written = await context.replace(resourceQuotas, quota);
        // The written quota is what the list cache holds now: its amounts are known, not parsed again.
        rememberAmounts(written.status?.hard, hard);
        rememberAmounts(written.status?.used, used);
      }
      return;
    } catch (error) {
      // Another write charged a quota first: count again against what it left.
      if (!StorageError.is(error, "Conflict") || attempt >= conflictAttempts) throw error;
    }
  }
}

/** A quota charged for a write, with its hard limits and its new usage as amounts. */
interface Charged {
  quota: ResourceQuota;
  hard: ResourceAmounts;
  used: ResourceAmounts;
}

/** The quotas `a` is charged to, with their new usage; throws the 403 of the first it would exceed. */
function chargeQuotas(a: AdmissionAttributes, quotas: readonly ResourceQuota[], nowMs: number): Charged[] {
  const object = a.object!;
  const relevant: [ResourceQuota, string[]][] = [];
  for (const quota of quotas) {
    const restricted = quotaResourcesFor(a.resource, Object.keys(quota.status?.hard ?? {}));
    if (restricted.length === 0 || !quotaScopesMatch(quota, a.resource, object)) continue;
    const name = quota.metadata?.name ?? "";
    if (a.resource.group === "" && a.resource.plural === "pods") {
      const missing = podQuotaConstraints(object as Pod, restricted);
      if (missing !== undefined) throw forbidden(a, `failed quota: ${name}: ${missing}`);
    }
    const used = quota.status?.used ?? {};
    const unknown = restricted.filter((r) => used[r] === undefined);
    if (unknown.length > 0)
      throw forbidden(a, `status unknown for quota: ${name}, resources: ${unknown.sort().join(",")}`);
    relevant.push([quota, restricted]);
  }
  if (relevant.length === 0) return [];
  const asked = relevant.length === 1 ? relevant[0]![1] : [...new Set(relevant.flatMap(([, r]) => r))];
  const delta = quotaUsage(a.resource, object, nowMs, asked);
  if (a.operation === "UPDATE" && a.oldObject !== undefined) {
    for (const [name, q] of quotaUsage(a.resource, a.oldObject, nowMs, asked)) {
      const now = delta.get(name);
      delta.set(name, now === undefined ? q.neg() : now.sub(q));
    }
  }
  for (const [name, q] of delta) if (q.isZero()) delta.delete(name);
  if (delta.size === 0) return [];
  const charged: Charged[] = [];
  for (const [quota, restricted] of relevant) {
    const hard = amountsOfList(quota.status?.hard);
    const used = amountsOfList(quota.status?.used);
    const requested: ResourceAmounts = new Map();
    for (const name of restricted) if (delta.has(name)) requested.set(name, delta.get(name)!);
    if (requested.size === 0) continue;
    const exceeded: string[] = [];
    const next = new Map(used);
    for (const [name, q] of requested) {
      const had = used.get(name);
      const total = had === undefined ? q : had.add(q);
      next.set(name, total);
      if (total.cmp(hard.get(name)!) > 0) exceeded.push(name);
    }
    if (exceeded.length > 0) {
      const pick = (amounts: ResourceAmounts) =>
        new Map(exceeded.filter((n) => amounts.has(n)).map((n) => [n, amounts.get(n)!]));
      throw forbidden(
        a,
        `exceeded quota: ${quota.metadata?.name}, requested: ${formatAmounts(pick(requested))}, used: ${formatAmounts(pick(used))}, limited: ${formatAmounts(pick(hard))}`,
      );
    }
    // Only what this write changes is written anew: the rest is stored canonical already.
    const changed = resourceListOf(new Map([...requested.keys()].map((name) => [name, next.get(name)!])));
    charged.push({
      quota: withUsed(quota, Object.assign({}, quota.status?.used, changed)),
      hard,
      used: next,
    });
  }
  return charged;
}

/** The amounts of a stored ResourceList (read-only, as the list cache shares it), parsed once per list. */
function amountsOfList(list: Record<string, string> | undefined): ResourceAmounts {
  if (list === undefined) return new Map();
  let amounts = parsedLists.get(list);
  if (amounts === undefined) {
    amounts = amountsOf(list);
    parsedLists.set(list, amounts);
  }
  return amounts;
}

const parsedLists = new WeakMap<object, ResourceAmounts>();

/** Notes `amounts` as what `list` parses to (a list written from them). */
function rememberAmounts(list: Record<string, string> | undefined, amounts: ResourceAmounts): void {
  if (list !== undefined && typeof list === "object") parsedLists.set(list, amounts);
}

/** `quota` with `status.used` replaced, its other members as they are. */
function withUsed(quota: ResourceQuota, used: Record<string, string>): ResourceQuota {
  return Object.assign({}, quota, { status: Object.assign({}, quota.status, { used }) });
}
