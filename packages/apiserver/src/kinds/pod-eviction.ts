import { type KubeObject, newBadRequest, type Pod, type PodCondition } from "@reconcile/api";
import { copyJson, isJsonObject } from "../json.js";
import type { SubresourceDeleteOptions, SubresourceHandler } from "./definition.js";

/**
 * `POST pods/{name}/eviction` (kube-apiserver's `EvictionREST`): a policy/v1
 * (or v1beta1) Eviction deletes the pod with the Eviction's DeleteOptions.
 * No PodDisruptionBudget kind is served, so no budget can forbid it: every
 * eviction proceeds as upstream's does for a pod no budget selects. A running
 * pod is first marked `DisruptionTarget=True` (reason `EvictionByEvictionAPI`),
 * as upstream does before the delete.
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
      await store.update(namespace, name, (existing) => markDisruptionTarget(existing, store.now()), {
        dryRun,
      });
    }
    await store.delete(namespace, name, { ...deleteOptions, dryRun });
  },
};

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
