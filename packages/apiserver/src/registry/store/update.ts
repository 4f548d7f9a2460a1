import {
  type KubeObject,
  newBadRequest,
  newConflict,
  newForbidden,
  newInvalid,
  newNotFound,
  rfc3339,
} from "@reconcile/api";
import type { ManagedFieldsEntry } from "kubernetes-types/meta/v1.js";
import { copyJson, jsonEqual, withMember } from "../../json.js";
import { yieldTurn } from "../../limits.js";
import { StorageError } from "../../storage/storage.js";
import { toStatusError } from "../../storage/storage-errors.js";
import { FieldErrors, GoSyntax } from "../field-errors.js";
import { admissionOf, mutate, validateAdmission } from "./admit.js";
import {
  type MutableMeta,
  omitEmptyMetadata,
  ownershipAfterUpdate,
  validate,
  validateRequestedManagedFields,
  withLaterConversions,
} from "./common.js";
import type { DryRunOption, StoreCore, UpdateOptions } from "./context.js";
import { createObject, reconcileNamespace } from "./create.js";
import { decodeObject, largeObjects } from "./decode.js";
import { objectKey } from "./keys.js";
import { beginUpdate, type Writer, writerFor } from "./writer.js";

/**
 * How many times a read-modify-write is retried after losing a race. Upstream's
 * GuaranteedUpdate retries without a bound; every lost race is another writer's
 * win, so N writers at once need at most N attempts each. The bound only stops
 * a storage that conflicts without progress.
 */
export const updateAttempts = 1_000;

/** PUT of a whole object (or of its `/status` or `/finalize`), based on the resourceVersion it carries. */
export async function updateObject(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  body: unknown,
  options: UpdateOptions,
): Promise<KubeObject> {
  return (await updateWithOutcome(store, namespace, name, body, options)).object;
}

/**
 * {@link updateObject}, telling whether the PUT created the object (a kind
 * that allows create on update, and no object of the name: a 201).
 */
export async function updateWithOutcome(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  body: unknown,
  options: UpdateOptions,
): Promise<{ object: KubeObject; created: boolean }> {
  const decode = () => {
    const decoded = decodeObject(
      store.definition,
      store.context.maxObjectBytes,
      body,
      options.fieldValidation,
    );
    const meta = (decoded.metadata ??= {});
    reconcileNamespace(store, meta, namespace);
    if (meta.name !== undefined && meta.name !== name)
      throw newBadRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    meta.name = name;
    return decoded;
  };
  const object = decode();
  const meta = object.metadata ?? {};
  const precondition = meta.resourceVersion || undefined;
  const { definition } = store;
  const mayCreate = definition.allowsCreateOnUpdate && !options.subresource;
  if (mayCreate || (precondition === undefined && !definition.allowsUnconditionalUpdate)) {
    // Whether the object exists decides first: a create, a 404, or the missing version's 422.
    const existing = await store.context.storage.get(objectKey(store.resource, meta.namespace, name));
    if (existing === undefined && mayCreate) {
      await options.mayCreate?.();
      delete (meta as MutableMeta).resourceVersion;
      const { subresource: _subresource, ...createOptions } = options;
      return { object: await createObject(store, meta.namespace, object, createOptions), created: true };
    }
    if (existing === undefined) throw newNotFound(store.gr, name);
    // A uid precondition is checked first, as upstream's storage preconditions are: a 409 below.
    const uidConflict = meta.uid !== undefined && meta.uid !== "" && meta.uid !== existing.metadata?.uid;
    if (precondition === undefined && !definition.allowsUnconditionalUpdate && !uidConflict) {
      // Upstream names the resource as the kind here, and prints the missing version as the uint64 it parsed: 0x0.
      const errors = new FieldErrors();
      errors.invalid("metadata.resourceVersion", new GoSyntax("0x0"), "must be specified for an update");
      throw newInvalid({ group: store.resource.group, kind: store.resource.plural }, name, errors.list);
    }
  }
  // An attempt changes the object it writes: one that lost the race starts again from the body (upstream deep-copies).
  let attempts = 0;
  const updated = await guaranteedUpdate(store, meta.namespace, name, precondition, options, () =>
    attempts++ === 0 ? object : decode(),
  );
  return { object: updated, created: false };
}

/**
 * Read, modify, write, retried while another writer wins the race (kube-apiserver's
 * GuaranteedUpdate). `precondition` is the resourceVersion the caller based its
 * change on: a mismatch is a 409 Conflict, never retried.
 */
export async function guaranteedUpdate(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  precondition: string | undefined,
  options: UpdateOptions,
  tryUpdate: (existing: KubeObject) => KubeObject | Promise<KubeObject>,
): Promise<KubeObject> {
  const { resource, gr, context } = store;
  const key = objectKey(resource, namespace, name);
  const writer = writerFor(store, options);
  for (let attempt = 0; ; attempt++) {
    const existing = await context.storage.get(key);
    if (existing === undefined) throw newNotFound(gr, name);
    const existingMeta = existing.metadata ?? {};
    if (precondition !== undefined && precondition !== existingMeta.resourceVersion)
      throw newConflict(gr, name);
    const tried = tryUpdate(existing);
    const requested = tried instanceof Promise ? await tried : tried;
    const requestedUid = requested.metadata?.uid;
    if (requestedUid && requestedUid !== existingMeta.uid) {
      // The object was deleted and created again under the same name: this change was meant for the old one.
      throw newConflict(
        gr,
        name,
        `Precondition failed: UID in precondition: ${requestedUid}, UID in object meta: ${existingMeta.uid ?? ""}`,
      );
    }
    const patchedVersion = requested.metadata?.resourceVersion;
    if (precondition === undefined && patchedVersion && patchedVersion !== existingMeta.resourceVersion)
      throw newConflict(gr, name);
    const requestedFields = requested.metadata?.managedFields;
    if (!options.managedFieldsComputed) validateRequestedManagedFields(store, requested);
    const admission = admissionOf(
      store,
      "UPDATE",
      { subresource: options.subresource, name, object: requested, oldObject: existing },
      options,
    );
    // A large write lets other requests in between its phases (decoding, validating, tracking, storing).
    const large = largeObjects.has(requested);
    if (large) await yieldTurn();
    const mutating = mutate(store, admission);
    if (mutating !== undefined) await mutating;
    // What the kind's update hook took (a Service's node ports) is kept only if this attempt is stored.
    const finish = options.subresource ? undefined : beginUpdate(store, requested, existing);
    let stored = false;
    try {
      const written = await storeAttempt(store, key, writer, options, {
        existing,
        requested,
        requestedFields,
        admission,
        large,
      });
      stored = written.stored && options.dryRun !== "All";
      return written.object;
    } catch (error) {
      if (StorageError.is(error, "Conflict") && precondition === undefined && attempt < updateAttempts)
        continue;
      throw toStatusError(error, gr, name);
    } finally {
      finish?.(stored);
    }
  }
}

/** One attempt's object, from the request as admitted to the storage write. */
interface Attempt {
  readonly existing: KubeObject;
  readonly requested: KubeObject;
  /** The managedFields the request carried. */
  readonly requestedFields: ManagedFieldsEntry[] | undefined;
  readonly admission: ReturnType<typeof admissionOf>;
  readonly large: boolean;
}

/**
 * The rest of one attempt: prepare, track ownership, validate and write.
 * Says whether the update was stored (not when nothing changed or the update
 * completed a delete); storage errors reach the caller as they are.
 */
async function storeAttempt(
  store: StoreCore,
  key: string,
  writer: Writer,
  options: UpdateOptions,
  { existing, requested, requestedFields, admission, large }: Attempt,
): Promise<{ object: KubeObject; stored: boolean }> {
  // Filled before the strategy compares it with the stored object, which is filled: a
  // template's `creationTimestamp: null` the client left out is no change to the spec.
  store.definition.fillEmptyValues?.(requested, "beforeValidation");
  const unchanged = prepareUpdate(store, requested, existing, options.subresource);
  let object = requested;
  if (large) await yieldTurn();
  if (options.managedFieldsComputed) {
    const meta = (object.metadata ??= {}) as MutableMeta;
    if (requestedFields === undefined) delete meta.managedFields;
    else meta.managedFields = requestedFields;
  } else {
    const sent = withMember(
      object,
      "metadata",
      withMember(object.metadata ?? {}, "managedFields", requestedFields),
    ) as KubeObject;
    const subresource = options.subresource ?? "";
    const tracked = withLaterConversions(store, existing, (convert) =>
      ownershipAfterUpdate(store, existing, sent, options, subresource, convert, unchanged),
    );
    object = tracked instanceof Promise ? await tracked : tracked;
  }
  // Again whole: the strategy may have added parts (a condition, a status) since the first fill.
  store.definition.fillEmptyValues?.(object);
  if (large) await yieldTurn();
  if (admission !== undefined) {
    const validating = validateAdmission(store, admission.with({ object }));
    if (validating !== undefined) await validating;
  }
  // Nothing changed: no write, no event.
  if (jsonEqual(object, existing)) return { object: existing, stored: true };
  const admitted = options.admit?.(object, existing);
  if (admitted !== undefined) await admitted;
  const finalized =
    object.metadata?.deletionTimestamp !== undefined &&
    (object.metadata.finalizers ?? []).length === 0 &&
    (object.metadata.deletionGracePeriodSeconds ?? 0) === 0 &&
    store.definition.strategy.holdsDeletion?.(object) !== true;
  const revision = Number(existing.metadata?.resourceVersion);
  // The last finalizer removed from an object being deleted: the update completes the delete.
  if (finalized) return { object: (await writer.remove(key, revision, object)).object, stored: false };
  return { object: await writer.update(key, object, revision), stored: true };
}

/**
 * Puts back, in `object` (the request's private copy), the top-level parts
 * `kept` names as `existing` has them: a part the request left as stored
 * stays (it is equal), any other is copied from `existing` or dropped with it.
 * A status write sends back the spec it read, and an update the status: this
 * spares copying the stored one.
 */
function keepStored(object: KubeObject, existing: KubeObject, kept: (key: string) => boolean): void {
  const mine = object as Record<string, unknown>;
  const stored = existing as Record<string, unknown>;
  for (const key in mine) if (kept(key) && !Object.hasOwn(stored, key)) delete mine[key];
  for (const key in stored)
    if (kept(key) && !jsonEqual(mine[key], stored[key])) mine[key] = copyJson(stored[key]);
}

function isStatus(key: string): boolean {
  return key === "status";
}

function isNotStatus(key: string): boolean {
  return key !== "status";
}

function isNotStatusOrMetadata(key: string): boolean {
  return key !== "status" && key !== "metadata";
}

/** GuaranteedUpdate without the strategy: what a subresource handler writes is stored as it is. */
export async function rawUpdate(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  tryUpdate: (existing: KubeObject) => KubeObject,
  options: DryRunOption,
): Promise<KubeObject> {
  const key = objectKey(store.resource, namespace, name);
  const writer = writerFor(store, options);
  for (let attempt = 0; ; attempt++) {
    const existing = await store.context.storage.get(key);
    if (existing === undefined) throw newNotFound(store.gr, name);
    const updated = tryUpdate(existing);
    try {
      return await writer.update(key, updated, Number(existing.metadata?.resourceVersion));
    } catch (error) {
      if (StorageError.is(error, "Conflict") && attempt < updateAttempts) continue;
      throw toStatusError(error, store.gr, name);
    }
  }
}

/**
 * Makes `object` (the request's private copy) the new state of an update: system fields kept,
 * status or spec kept as the subresource rules say. Returns which top-level members it put back
 * as stored and left so (a status write's spec), for the ownership not to compare them again.
 */
function prepareUpdate(
  store: StoreCore,
  object: KubeObject,
  existing: KubeObject,
  subresource: string | undefined,
): ((member: string) => boolean) | undefined {
  const { resource, definition } = store;
  const strategy = definition.strategy;
  const statusOnly = subresource === "status";
  const existingMeta = existing.metadata ?? {};
  let unchanged: ((member: string) => boolean) | undefined;
  const prepareSubresource = subresource ? strategy.subresourceUpdates?.[subresource] : undefined;
  if (prepareSubresource !== undefined) {
    prepareSubresource(object, existing, rfc3339(store.context.clock.now()));
  } else if (subresource === "finalize" && strategy.prepareForFinalize !== undefined) {
    strategy.prepareForFinalize(object, existing);
  } else if (statusOnly && strategy.prepareForStatusUpdate !== undefined) {
    strategy.prepareForStatusUpdate(object, existing, rfc3339(store.context.clock.now()));
  } else if (statusOnly) {
    // `/status` changes the status and nothing else. The metadata is set again below.
    keepStored(object, existing, isNotStatus);
    unchanged = isNotStatusOrMetadata;
  } else {
    if (resource.subresources.includes("status")) keepStored(object, existing, isStatus);
    strategy.prepareForUpdate?.(object, existing);
  }
  const meta = (object.metadata ??= {}) as MutableMeta;
  meta.name = existingMeta.name!;
  if (resource.namespaced) meta.namespace = existingMeta.namespace!;
  meta.uid = existingMeta.uid!;
  meta.creationTimestamp = existingMeta.creationTimestamp!;
  meta.resourceVersion = existingMeta.resourceVersion!;
  setOrDelete(meta, "deletionTimestamp", existingMeta.deletionTimestamp);
  setOrDelete(meta, "deletionGracePeriodSeconds", existingMeta.deletionGracePeriodSeconds);
  if (meta.generateName === undefined) setOrDelete(meta, "generateName", existingMeta.generateName);
  omitEmptyMetadata(meta);
  delete meta.managedFields;
  strategy.applyDefaults?.(object);
  // Compared only for a kind that counts generations: the walk costs a whole spec.
  const field = definition.generationFollows;
  const generation = !definition.tracksGeneration
    ? 0
    : (existingMeta.generation ?? (definition.tracksGeneration === true ? 1 : 0)) +
      (!statusOnly &&
      !jsonEqual((object as Record<string, unknown>)[field], (existing as Record<string, unknown>)[field])
        ? 1
        : 0);
  if (generation > 0) meta.generation = generation;
  else delete meta.generation;
  if (existingMeta.deletionTimestamp !== undefined) {
    // An object being deleted may lose finalizers but not gain new ones (`ValidateObjectMetaUpdate`).
    const before = new Set(existingMeta.finalizers ?? []);
    const added = (meta.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length > 0) {
      throw newForbidden(
        store.gr,
        meta.name,
        `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      );
    }
  }
  validate(store, object, existing, statusOnly);
  return unchanged;
}

function setOrDelete<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}
