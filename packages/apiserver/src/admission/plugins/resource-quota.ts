import {
  amountsOf,
  formatAmounts,
  type Pod,
  podQuotaConstraints,
  quotaResourcesFor,
  quotaScopesMatch,
  quotaUsage,
  type ResourceAmounts,
  resourceQuotas,
} from "@reconcile/api";
import type { ResourceQuota } from "kubernetes-types/core/v1.js";
import type { AdmissionAttributes } from "../../registry/admission.js";
import { StorageError } from "../../storage/storage.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden, knownEmpty } from "../plugin.js";

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
  const states: QuotaStates = new Map();
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
      if (knownEmpty(quotas)) return;
      return charge(a, context, quotas, states);
    },
  };
}

/** Charges `a` to the namespace's quotas (`listed` first, read again after a conflict), writing their usage. */
async function charge(
  a: AdmissionAttributes,
  context: AdmissionContext,
  listed: readonly ResourceQuota[] | Promise<readonly ResourceQuota[]>,
  states: QuotaStates,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const quotas = attempt === 0 ? await listed : await context.list(resourceQuotas, a.namespace);
    if (quotas.length === 0) return;
    const charged = chargeQuotas(a, quotas, context.clock.now(), states);
    if (charged.length === 0 || a.dryRun) return;
    try {
      for (const { quota, state, used } of charged) {
        const written = await context.replace(resourceQuotas, quota);
        // The written quota is what the list cache holds now: its amounts are known, not parsed again.
        remember(states, written, {
          ...state,
          resourceVersion: written.metadata?.resourceVersion ?? "",
          used,
        });
      }
      return;
    } catch (error) {
      // Another write charged a quota first: count again against what it left.
      if (!StorageError.is(error, "Conflict") || attempt >= conflictAttempts) throw error;
    }
  }
}

/** A quota charged for a write, with its new usage as amounts. */
interface Charged {
  quota: ResourceQuota;
  state: QuotaState;
  used: ResourceAmounts;
}

/** What a stored quota's lists parse to, kept while its resourceVersion is the one read. */
interface QuotaState {
  readonly resourceVersion: string;
  readonly hard: ResourceAmounts;
  readonly used: ResourceAmounts;
  /** The quota's hard names that restrict each resource (`group/plural`), worked out on first use. */
  readonly restricting: Map<string, readonly string[]>;
}

/** Quota states by namespace and name. */
type QuotaStates = Map<string, QuotaState>;

/** How many quotas' states are kept before the oldest are forgotten. */
const maxStates = 10_000;

/** The parsed state of `quota` as read (parsed again only when its resourceVersion moved). */
function stateOf(states: QuotaStates, quota: ResourceQuota): QuotaState {
  const meta = quota.metadata ?? {};
  const state = states.get(`${meta.namespace}/${meta.name}`);
  if (state !== undefined && state.resourceVersion === meta.resourceVersion) return state;
  const parsed: QuotaState = {
    resourceVersion: meta.resourceVersion ?? "",
    hard: amountsOf(quota.status?.hard ?? {}),
    used: amountsOf(quota.status?.used ?? {}),
    restricting: new Map(),
  };
  remember(states, quota, parsed);
  return parsed;
}

function remember(states: QuotaStates, quota: ResourceQuota, state: QuotaState): void {
  const key = `${quota.metadata?.namespace}/${quota.metadata?.name}`;
  if (states.size >= maxStates && !states.has(key)) states.delete(states.keys().next().value!);
  states.set(key, state);
}

/** The hard names of `state` that restrict `a`'s resource. */
function restrictingNames(state: QuotaState, a: AdmissionAttributes): readonly string[] {
  const key = `${a.resource.group}/${a.resource.plural}`;
  let names = state.restricting.get(key);
  if (names === undefined) {
    names = quotaResourcesFor(a.resource, state.hard.keys());
    state.restricting.set(key, names);
  }
  return names;
}

/** The quotas `a` is charged to, with their new usage; throws the 403 of the first it would exceed. */
function chargeQuotas(
  a: AdmissionAttributes,
  quotas: readonly ResourceQuota[],
  nowMs: number,
  states: QuotaStates,
): Charged[] {
  const object = a.object!;
  const relevant: [ResourceQuota, QuotaState, readonly string[]][] = [];
  for (const quota of quotas) {
    const state = stateOf(states, quota);
    const restricted = restrictingNames(state, a);
    if (restricted.length === 0 || !quotaScopesMatch(quota, a.resource, object)) continue;
    const name = quota.metadata?.name ?? "";
    if (a.resource.group === "" && a.resource.plural === "pods") {
      const missing = podQuotaConstraints(object as Pod, restricted);
      if (missing !== undefined) throw forbidden(a, `failed quota: ${name}: ${missing}`);
    }
    const unknown = restricted.filter((r) => !state.used.has(r));
    if (unknown.length > 0)
      throw forbidden(a, `status unknown for quota: ${name}, resources: ${unknown.sort().join(",")}`);
    relevant.push([quota, state, restricted]);
  }
  if (relevant.length === 0) return [];
  const asked = relevant.length === 1 ? relevant[0]![2] : [...new Set(relevant.flatMap(([, , r]) => r))];
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
  for (const [quota, state, restricted] of relevant) {
    const { hard, used } = state;
    const requested: ResourceAmounts = new Map();
    for (const name of restricted) if (delta.has(name)) requested.set(name, delta.get(name)!);
    if (requested.size === 0) continue;
    const exceeded: string[] = [];
    const next = new Map(used);
    // Only what this write changes is written anew: the rest is stored canonical already.
    const changed: Record<string, string> = {};
    for (const [name, q] of requested) {
      const had = used.get(name);
      const total = had === undefined ? q : had.add(q);
      next.set(name, total);
      changed[name] = total.toString();
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
    charged.push({
      quota: withUsed(quota, Object.assign({}, quota.status?.used, changed)),
      state,
      used: next,
    });
  }
  return charged;
}

/** `quota` with `status.used` replaced, its other members as they are. */
function withUsed(quota: ResourceQuota, used: Record<string, string>): ResourceQuota {
  return Object.assign({}, quota, { status: Object.assign({}, quota.status, { used }) });
}
