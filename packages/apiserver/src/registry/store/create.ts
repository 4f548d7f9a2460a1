import { randomUUID } from "node:crypto";
import {
  type KubeObject,
  newBadRequest,
  newForbidden,
  newNotFound,
  rfc3339,
  StatusError,
} from "@reconcile/api";
import { StorageError } from "../../storage/storage.js";
import { toStatusError } from "../../storage/storage-errors.js";
import {
  type MutableMeta,
  omitEmptyMetadata,
  ownershipAfterUpdate,
  validate,
  validateRequestedManagedFields,
} from "./common.js";
import type { DryRunOption, StoreCore } from "./context.js";
import { decodeObject } from "./decode.js";
import { keyOf } from "./keys.js";
import { beginCreate, writerFor } from "./writer.js";

/** How many times a generated name is retried after a collision. */
const generateNameAttempts = 8;

export interface CreateOptions extends DryRunOption {
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
  const meta = (object.metadata ??= {}) as MutableMeta;
  reconcileNamespace(store, meta, namespace);
  if (meta.resourceVersion) throw newBadRequest("resourceVersion should not be set on objects to be created");
  if (resource.namespaced && meta.namespace) await checkNamespaceOpen(store, meta.namespace, meta.name ?? "");
  strategy.prepareForCreate?.(object);
  strategy.applyDefaults?.(object);
  meta.uid = randomUUID();
  strategy.completeCreate?.(object);
  meta.creationTimestamp = rfc3339(context.clock.now());
  if (definition.tracksGeneration) meta.generation = 1;
  else delete meta.generation;
  omitEmptyMetadata(meta);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (options.managedFieldsComputed) {
    // An apply that creates: the apply computed the ownership; defaulted fields stay unowned.
  } else {
    validateRequestedManagedFields(store, object);
    delete meta.managedFields;
    const tracked = ownershipAfterUpdate(store, undefined, object, options, "").metadata?.managedFields;
    if (tracked !== undefined) meta.managedFields = tracked;
  }
  const writer = writerFor(store, options);
  const generateName = meta.generateName;
  const explicitName = Boolean(meta.name);
  for (let attempt = 0; ; attempt++) {
    if (!explicitName && generateName) meta.name = generateName + randomSuffix();
    validate(store, object, undefined);
    await options.admit?.(object, undefined);
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

/** NamespaceLifecycle admission on create: the namespace exists and is not being terminated. */
async function checkNamespaceOpen(store: StoreCore, namespace: string, name: string): Promise<void> {
  const ns = await store.context.storage.get(`/core/namespaces/${namespace}`);
  if (ns === undefined) throw newNotFound({ group: "", resource: "namespaces" }, namespace);
  if (ns.metadata?.deletionTimestamp !== undefined) {
    const { status } = newForbidden(
      store.gr,
      name,
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
    // Controllers recognise this cause and drop the create silently.
    const cause = {
      reason: "NamespaceTerminating",
      field: "metadata.namespace",
      message: `namespace ${namespace} is being terminated`,
    };
    throw new StatusError({ ...status, details: { ...status.details, causes: [cause] } });
  }
}

/** What `generateName` appends: 5 characters of apimachinery's `utilrand` alphabet (no vowels, no 0/1/3). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";
function randomSuffix(): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)];
  return suffix;
}
