import {
  type KubeObject,
  newBadRequest,
  newConflict,
  newInvalid,
  newNotFound,
  type ObjectList,
  rfc3339,
  StatusError,
} from "@reconcile/api";
import { copyJson, jsonEqual } from "../../json.js";
import { StorageError } from "../../storage/storage.js";
import { toStatusError } from "../../storage/storage-errors.js";
import { admissionOf, mutate, validateAdmission } from "./admit.js";
import type { MutableMeta } from "./common.js";
import type { RegistryDeleteOptions, StoreCore } from "./context.js";
import { objectKey } from "./keys.js";
import { listObjects } from "./reads.js";
import { updateAttempts } from "./update.js";
import { writerFor } from "./writer.js";

/** The finalizers the garbage collector acts on. */
export const orphanFinalizer = "orphan";
export const foregroundFinalizer = "foregroundDeletion";

const propagationPolicies = ["Background", "Foreground", "Orphan"];

/**
 * DELETE, telling whether the object left storage (200) or was only marked
 * for graceful deletion or finalizers (202), from the write itself rather
 * than a second read (genericregistry.Store's `deleted`). A dry run deletes nothing.
 */
export async function deleteObject(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  options: RegistryDeleteOptions,
): Promise<{ object: KubeObject; deleted: boolean }> {
  const { resource, gr, context } = store;
  const policy = options.propagationPolicy;
  if (policy !== undefined && !propagationPolicies.includes(policy))
    throw newBadRequest(
      `propagationPolicy: Unsupported value: "${policy}": supported values: "Background", "Foreground", "Orphan"`,
    );
  const grace = options.gracePeriodSeconds;
  if (grace !== undefined && !Number.isInteger(grace))
    throw newBadRequest(`gracePeriodSeconds: Invalid value: ${grace}: must be an integer`);
  const key = objectKey(resource, namespace, name);
  const strategy = store.definition.strategy;
  const writer = writerFor(store, options);
  // Mutating admission of a delete sees only the name (upstream passes no object); validation sees the stored one.
  const admission = admissionOf(store, "DELETE", { namespace, name }, options);
  const mutating = mutate(store, admission);
  if (mutating !== undefined) await mutating;
  for (let attempt = 0; ; attempt++) {
    const existing = await context.storage.get(key);
    if (existing === undefined) throw newNotFound(gr, name);
    const meta = existing.metadata ?? {};
    checkPreconditions(store, name, meta, options.preconditions ?? {});
    if (admission !== undefined) {
      const validating = validateAdmission(store, admission.with({ oldObject: existing }));
      if (validating !== undefined) await validating;
    }
    const revision = Number(meta.resourceVersion);
    const finalizers = new Set(meta.finalizers ?? []);
    if (meta.deletionTimestamp === undefined)
      for (const finalizer of strategy.deletionFinalizers ?? []) finalizers.add(finalizer);
    if (policy === "Orphan") {
      finalizers.add(orphanFinalizer);
      finalizers.delete(foregroundFinalizer);
    } else if (policy === "Foreground") {
      finalizers.add(foregroundFinalizer);
      finalizers.delete(orphanFinalizer);
    } else if (policy === "Background") {
      finalizers.delete(orphanFinalizer);
      finalizers.delete(foregroundFinalizer);
    }
    const period = strategy.gracePeriodSeconds?.(existing, grace) ?? 0;
    const pending = finalizers.size > 0 || strategy.holdsDeletion?.(existing) === true;
    try {
      if (!pending && period === 0) return await writer.remove(key, revision, existing);
      // Graceful deletion (BeforeDelete): mark the object; it stays until its grace runs out
      // (a delete with grace 0) and its finalizers are cleared.
      const updated = copyJson(existing);
      const updatedMeta = (updated.metadata ??= {}) as MutableMeta;
      const now = context.clock.now();
      if (!(now + period * 1000 <= latestTimestampMs)) throw gracePeriodTooLong(period);
      if (updatedMeta.deletionTimestamp === undefined) {
        updatedMeta.deletionTimestamp = rfc3339(now + period * 1000);
        updatedMeta.deletionGracePeriodSeconds = period;
        // BeforeDelete counts the deletion as a change only where generation is tracked.
        if ((updatedMeta.generation ?? 0) > 0) updatedMeta.generation = (updatedMeta.generation ?? 0) + 1;
        strategy.prepareForDelete?.(updated);
      } else if (period < (updatedMeta.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period shortens a deletion already under way; a longer one does not extend it.
        updatedMeta.deletionTimestamp = rfc3339(now + period * 1000);
        updatedMeta.deletionGracePeriodSeconds = period;
      }
      if (pending) updatedMeta.finalizers = [...finalizers];
      else delete updatedMeta.finalizers;
      if (!pending && updatedMeta.deletionGracePeriodSeconds === 0)
        return await writer.remove(key, revision, existing);
      if (jsonEqual(updated, existing)) return { object: existing, deleted: false };
      return { object: await writer.update(key, updated, revision, existing), deleted: false };
    } catch (error) {
      if (StorageError.is(error, "Conflict") && attempt < updateAttempts) continue;
      throw toStatusError(error, gr, name);
    }
  }
}

/** DELETE of a collection: each listed object deleted as DELETE would; one deleted meanwhile is skipped. */
export async function deleteCollection(
  store: StoreCore,
  namespace: string | undefined,
  options: RegistryDeleteOptions & { labelSelector?: string | undefined; fieldSelector?: string | undefined },
  deleteOne: (namespace: string | undefined, name: string) => Promise<KubeObject>,
): Promise<ObjectList> {
  const listed = await listObjects(store, namespace, {
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  });
  const deleted: KubeObject[] = [];
  for (const item of listed.items) {
    try {
      deleted.push(await deleteOne(item.metadata?.namespace, item.metadata?.name ?? ""));
    } catch (error) {
      // Something else deleted it first: that is the outcome asked for.
      if (!(StatusError.isInstance(error) && error.reason === "NotFound")) throw error;
    }
  }
  return { ...listed, items: deleted };
}

function checkPreconditions(
  store: StoreCore,
  name: string,
  meta: NonNullable<KubeObject["metadata"]>,
  preconditions: NonNullable<RegistryDeleteOptions["preconditions"]>,
): void {
  if (preconditions.uid !== undefined && preconditions.uid !== meta.uid)
    throw newConflict(
      store.gr,
      name,
      `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta.uid ?? ""}`,
    );
  if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== meta.resourceVersion)
    throw newConflict(
      store.gr,
      name,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ""}`,
    );
}

/** The latest time RFC 3339 (and Go's metav1.Time) can write: the end of year 9999. */
const latestTimestampMs = Date.UTC(9999, 11, 31, 23, 59, 59);

function gracePeriodTooLong(period: number): StatusError {
  return newInvalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", [
    {
      type: "FieldValueInvalid",
      field: "gracePeriodSeconds",
      message: `gracePeriodSeconds: Invalid value: ${period}: the deletion time it gives is after 9999-12-31T23:59:59Z, the latest a timestamp can be`,
    },
  ]);
}
