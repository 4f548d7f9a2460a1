import {
  isPodReady,
  type KubeObject,
  newBadRequest,
  newInternalError,
  nonEmptySelectorMatches,
  type Pod,
  type PodCondition,
  podDisruptionBudgets,
  StatusError,
} from "@reconcile/api";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import { copyJson, isJsonObject } from "../json.js";
import type { SubresourceDeleteOptions, SubresourceHandler, SubresourceStore } from "./definition.js";

/**
 * `POST pods/{name}/eviction` (kube-apiserver's `EvictionREST`): a policy/v1
 * (or v1beta1) Eviction deletes the pod with the Eviction's DeleteOptions,
 * if the PodDisruptionBudget selecting it allows one more disruption: then
 * its `disruptionsAllowed` is decremented and the pod noted in
 * `disruptedPods` in the same step, so concurrent evictions cannot both
 * pass. Otherwise the answer is upstream's 429 ("Cannot evict pod as it
 * would violate the pod's disruption budget."), which `kubectl drain`
 * retries. Pending, finished and terminating pods are deleted without a
 * budget check; a pod that is not ready passes when the budget is already
 * met (`IfHealthyBudget`) or its policy is `AlwaysAllow`. A running pod is
 * first marked `DisruptionTarget=True` (reason `EvictionByEvictionAPI`).
 */
export const podEvictionHandler: SubresourceHandler = {
  kind: { group: "policy", version: "v1", kind: "Eviction" },
  async create(store, namespace, name, body, options) {
    const deleteOptions = decodeEviction(body, name);
    if (deleteOptions.dryRun !== undefined && deleteOptions.dryRun !== (options.dryRun ?? undefined))
      throw newBadRequest("The eviction dryRun option must match the delete options' dryRun");
    const dryRun = options.dryRun;
    const pod = (await store.get(namespace, name)) as Pod;
    if (!skipsDisruptionTarget(pod)) {
      await checkDisruptionBudget(store, pod, dryRun);
      await store.update(namespace, name, (existing) => markDisruptionTarget(existing, store.now()), {
        dryRun,
      });
    }
    await store.delete(namespace, name, { ...deleteOptions, dryRun });
  },
};

/** Most pods a budget may hold as disrupted before the disruption controller confirms them (`MaxDisruptedPodSize`). */
const maxDisruptedPods = 2000;

/** Passes, or takes one disruption from the pod's budget, or throws upstream's refusal. */
async function checkDisruptionBudget(
  store: SubresourceStore,
  pod: Pod,
  dryRun: "All" | undefined,
): Promise<void> {
  const budgets = store.peer(podDisruptionBudgets);
  if (budgets === undefined) return;
  const namespace = pod.metadata?.namespace;
  const matching = ((await budgets.list(namespace)) as PodDisruptionBudget[]).filter((pdb) =>
    nonEmptySelectorMatches(pdb.spec?.selector, pod.metadata?.labels),
  );
  if (matching.length === 0) return;
  if (matching.length > 1)
    throw newInternalError(
      new Error(
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
      ),
    );
  const pdb = matching[0] as PodDisruptionBudget;
  const status = pdb.status;
  if (!isPodReady(pod)) {
    if (pdb.spec?.unhealthyPodEvictionPolicy === "AlwaysAllow") return;
    if ((status?.currentHealthy ?? 0) >= (status?.desiredHealthy ?? 0) && (status?.desiredHealthy ?? 0) > 0)
      return;
  }
  const pdbName = pdb.metadata?.name ?? "";
  await budgets.updateAs(
    "status",
    namespace,
    pdbName,
    pdb.metadata?.resourceVersion,
    (existing) => {
      const current = copyJson(existing) as PodDisruptionBudget;
      takeDisruption(current, pod.metadata?.name ?? "", store.now());
      return current as KubeObject;
    },
    { dryRun },
  );
}

/** `checkAndDecrement`: one disruption fewer, the pod noted, or why not. */
function takeDisruption(pdb: PodDisruptionBudget, podName: string, now: string): void {
  const status = (pdb.status ??= {
    currentHealthy: 0,
    desiredHealthy: 0,
    disruptionsAllowed: 0,
    expectedPods: 0,
  });
  const name = pdb.metadata?.name ?? "";
  if ((status.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0))
    throw budgetRefusal(`The disruption budget ${name} is still being processed by the server.`);
  if (status.disruptionsAllowed < 0) throw newForbidden("pdb disruptions allowed is negative");
  if (Object.keys(status.disruptedPods ?? {}).length > maxDisruptedPods)
    throw newForbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller");
  if (status.disruptionsAllowed === 0)
    throw budgetRefusal(
      `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
    );
  status.disruptionsAllowed--;
  status.disruptedPods = { ...status.disruptedPods, [podName]: now };
  if (status.disruptionsAllowed === 0) {
    const conditions = (status.conditions ??= []);
    const condition = {
      type: "DisruptionAllowed",
      status: "False",
      reason: "InsufficientPods",
      message: "",
      lastTransitionTime: now,
      observedGeneration: status.observedGeneration ?? 0,
    };
    const at = conditions.findIndex((c) => c.type === "DisruptionAllowed");
    if (at === -1) conditions.push(condition);
    else if (conditions[at]?.status !== "False") conditions[at] = condition;
  }
}

function budgetRefusal(cause: string): StatusError {
  return new StatusError({
    code: 429,
    reason: "TooManyRequests",
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    details: { causes: [{ reason: "DisruptionBudget", message: cause }] },
  });
}

function newForbidden(message: string): StatusError {
  return new StatusError({ code: 403, reason: "Forbidden", message });
}

const evictionKinds = new Set(["policy/v1", "policy/v1beta1"]);

/**
 * Reads an Eviction (upstream `EvictionREST.Create`): its name must be the
 * URL's (400, upstream's message), and its `deleteOptions`, if any, an object
 * with a numeric grace period, a string propagation policy and string
 * preconditions.
 */
export function decodeEviction(body: unknown, urlName: string): SubresourceDeleteOptions {
  if (!isJsonObject(body)) throw newBadRequest("the request body is not an Eviction object");
  if (body.kind !== undefined && body.kind !== "Eviction")
    throw newBadRequest(`expected an Eviction object, got kind ${JSON.stringify(body.kind)}`);
  if (body.apiVersion !== undefined && !evictionKinds.has(String(body.apiVersion)))
    throw newBadRequest(
      `Eviction apiVersion ${JSON.stringify(body.apiVersion)} is not policy/v1 or policy/v1beta1`,
    );
  const meta = isJsonObject(body.metadata) ? body.metadata : {};
  if ((typeof meta.name === "string" ? meta.name : "") !== urlName)
    throw newBadRequest("name in URL does not match name in Eviction object");
  const given = body.deleteOptions;
  if (given === undefined || given === null) return {};
  if (!isJsonObject(given)) throw newBadRequest("deleteOptions must be an object");
  const options: SubresourceDeleteOptions = {};
  const grace = given.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== "number" || !Number.isInteger(grace))
      throw newBadRequest(
        `deleteOptions.gracePeriodSeconds: Invalid value: ${JSON.stringify(grace)}: must be an integer`,
      );
    options.gracePeriodSeconds = grace;
  }
  const policy = given.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== "string") throw newBadRequest("deleteOptions.propagationPolicy must be a string");
    options.propagationPolicy = policy;
  }
  const preconditions = given.preconditions;
  if (preconditions !== undefined && preconditions !== null) {
    if (!isJsonObject(preconditions)) throw newBadRequest("deleteOptions.preconditions must be an object");
    const { uid, resourceVersion } = preconditions;
    if (
      (uid !== undefined && uid !== null && typeof uid !== "string") ||
      (resourceVersion !== undefined && resourceVersion !== null && typeof resourceVersion !== "string")
    )
      throw newBadRequest("deleteOptions.preconditions.uid and resourceVersion must be strings");
    options.preconditions = {
      ...(typeof uid === "string" ? { uid } : {}),
      ...(typeof resourceVersion === "string" ? { resourceVersion } : {}),
    };
  }
  const dryRun = given.dryRun;
  if (Array.isArray(dryRun) && dryRun.includes("All")) options.dryRun = "All";
  return options;
}

/** Upstream deletes pending, finished and terminating pods at once, without touching their conditions. */
function skipsDisruptionTarget(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return (
    phase === "Pending" ||
    phase === "Succeeded" ||
    phase === "Failed" ||
    pod.metadata?.deletionTimestamp !== undefined
  );
}

/** The pod with `DisruptionTarget=True` (reason `EvictionByEvictionAPI`, message `Eviction API: evicting`). */
export function markDisruptionTarget(existing: KubeObject, now: string): KubeObject {
  const pod = copyJson(existing) as { status?: { conditions?: PodCondition[] } };
  const conditions = ((pod.status ??= {}).conditions ??= []);
  const condition: PodCondition = {
    type: "DisruptionTarget",
    status: "True",
    reason: "EvictionByEvictionAPI",
    message: "Eviction API: evicting",
    lastTransitionTime: now,
  };
  const at = conditions.findIndex((c) => c.type === "DisruptionTarget");
  if (at === -1) conditions.push(condition);
  else if (conditions[at]?.status !== "True") conditions[at] = condition;
  return pod as KubeObject;
}
