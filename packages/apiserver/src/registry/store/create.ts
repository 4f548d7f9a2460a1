import { type KubeObject, newBadRequest, rfc3339 } from "@reconcile/api";
import { uuidFrom } from "@reconcile/clock";
import { yieldTurn } from "../../limits.js";
import { StorageError } from "../../storage/storage.js";
import { toStatusError } from "../../storage/storage-errors.js";
import { randomSuffix } from "../name-generator.js";
import { admissionOf, mutate, validateAdmission } from "./admit.js";
import {
  type MutableMeta,
  omitEmptyMetadata,
  ownershipAfterUpdate,
  validate,
  validateRequestedManagedFields,
} from "./common.js";
import type { DryRunOption, StoreCore } from "./context.js";
import { decodeObject, largeObjects } from "./decode.js";
import { keyOf } from "./keys.js";
import { beginCreate, writerFor } from "./writer.js";

/** How many times a generated name is retried after a collision. */
const generateNameAttempts = 8;

export interface CreateOptions extends DryRunOption {
  /** The subresource created through, for admission; undefined for the object itself. */
  subresource?: string | undefined;
  /** The body is an apply's result: its managedFields are already computed. */
  managedFieldsComputed?: boolean | undefined;
}

/** CREATE (genericregistry.Store's Create with the kind's create strategy). */
export async function createObject(
  store: StoreCore,
  namespace: string | undefined,
  body: unknown,
  options: CreateOptions,
): Promise<KubeObject> {
  const { resource, definition, context } = store;
  const strategy = definition.strategy;
  const object = decodeObject(definition, context.maxObjectBytes, body, options.fieldValidation);
  // A large write lets other requests in between its phases.
  const large = largeObjects.has(object);
  if (large) await yieldTurn();
  const meta = (object.metadata ??= {}) as MutableMeta;
  reconcileNamespace(store, meta, namespace);
  if (meta.resourceVersion) throw newBadRequest("resourceVersion should not be set on objects to be created");
  // Defaults come with decoding, before admission sees the object (upstream defaults as it decodes).
  strategy.applyDefaults?.(object);
  // Ownership is the request's: what admission adds after this is nobody's (upstream's order).
  if (!options.managedFieldsComputed) {
    omitEmptyMetadata(meta);
    validateRequestedManagedFields(store, object);
    delete meta.managedFields;
    const tracked = ownershipAfterUpdate(store, undefined, object, options, "").metadata?.managedFields;
    if (tracked !== undefined) meta.managedFields = tracked;
  }
  const admission = admissionOf(store, "CREATE", { subresource: options.subresource, object }, options);
  const mutating = mutate(store, admission);
  if (mutating !== undefined) await mutating;
  strategy.prepareForCreate?.(object, options.user, context);
  meta.uid = uuidFrom(context.random);
  strategy.completeCreate?.(object);
  meta.creationTimestamp = rfc3339(context.clock.now());
  if (definition.tracksGeneration === true) meta.generation = 1;
  else delete meta.generation;
  omitEmptyMetadata(meta);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  definition.fillEmptyValues?.(object, "beforeValidation");
  const writer = writerFor(store, options);
  const generateName = meta.generateName;
  const explicitName = Boolean(meta.name);
  for (let attempt = 0; ; attempt++) {
    if (!explicitName && generateName) meta.name = generateName + randomSuffix(context.random);
    validate(store, object, undefined);
    definition.fillEmptyValues?.(object, "afterValidation");
    if (large) await yieldTurn();
    const validating = validateAdmission(store, admission);
    if (validating !== undefined) await validating;
    const admitted = options.admit?.(object, undefined);
    if (admitted !== undefined) await admitted;
    const undo = beginCreate(store, object);
    try {
      return await writer.create(keyOf(resource, meta.namespace, meta.name!), object, undo);
    } catch (error) {
      const retry = StorageError.is(error, "KeyExists") && !explicitName && attempt < generateNameAttempts;
      if (!retry) throw toStatusError(error, store.gr, meta.name ?? "");
    }
  }
}

/** The namespace of a write: the request's and the object's must agree. */
export function reconcileNamespace(
  store: StoreCore,
  meta: NonNullable<KubeObject["metadata"]>,
  namespace: string | undefined,
): void {
  const resource = store.resource;
  if (!resource.namespaced) {
    delete meta.namespace;
    return;
  }
  if (namespace && meta.namespace && namespace !== meta.namespace)
    throw newBadRequest(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  const chosen = namespace || meta.namespace;
  if (!chosen)
    throw newBadRequest(
      `a namespace is required for ${resource.plural}: set metadata.namespace or bind the client to a namespace`,
    );
  meta.namespace = chosen;
}
