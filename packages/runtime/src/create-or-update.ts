import {
  type DeepReadonly,
  isNotFound,
  jsonEqual,
  type KubeObject,
  newControllerRef,
  type ResourceDescriptor,
} from "@reconcile/api";
import type { ResourceClient } from "@reconcile/client";

/** What {@link createOrUpdate} and {@link createOrPatch} did (controllerutil's `OperationResult`). */
export type OperationResult = "created" | "updated" | "unchanged";

/**
 * Reads the object named by `obj` (name and namespace); if it does not exist
 * lets `mutate` fill `obj` and creates it, else lets `mutate` change a copy of
 * the live object and updates it if anything changed (controllerutil's
 * `CreateOrUpdate`). `mutate` must only set what the controller owns, so an
 * unchanged object is not written. Resolves the outcome and the object.
 */
export async function createOrUpdate<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  mutate: (obj: T) => void,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<{ result: OperationResult; object: T }> {
  const existing = await getIfExists(client, obj, options.signal);
  if (existing === undefined) {
    mutate(obj);
    return { result: "created", object: await client.create(obj, { signal: options.signal }) };
  }
  const copy = structuredClone(existing);
  mutate(copy);
  if (jsonEqual(copy, existing)) return { result: "unchanged", object: existing };
  return { result: "updated", object: await client.update(copy, { signal: options.signal }) };
}

/**
 * As {@link createOrUpdate}, but an existing object is changed with a JSON
 * merge patch of what `mutate` changed (controllerutil's `CreateOrPatch`), so
 * fields written by others in the meantime are kept; the patch carries no
 * resourceVersion.
 */
export async function createOrPatch<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  mutate: (obj: T) => void,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<{ result: OperationResult; object: T }> {
  const existing = await getIfExists(client, obj, options.signal);
  if (existing === undefined) {
    mutate(obj);
    return { result: "created", object: await client.create(obj, { signal: options.signal }) };
  }
  const copy = structuredClone(existing);
  mutate(copy);
  const patch = mergePatchBetween(existing, copy);
  if (patch === undefined) return { result: "unchanged", object: existing };
  const name = existing.metadata!.name!;
  return {
    result: "updated",
    object: await client.patch(name, patch, { type: "merge", signal: options.signal }),
  };
}

/**
 * Makes `owner` the controller of `obj` (controllerutil's
 * `SetControllerReference`): appends a controllerRef with `controller` and
 * `blockOwnerDeletion`, or refreshes an existing reference to the same owner.
 * Throws when another object already controls `obj`, or when a namespaced
 * owner would own an object of another namespace or a cluster-scoped one.
 */
export function setControllerReference(
  owner: DeepReadonly<KubeObject> | KubeObject,
  ownerKind: Pick<ResourceDescriptor, "group" | "version" | "kind" | "namespaced">,
  obj: KubeObject,
): void {
  const ref = newControllerRef(owner, ownerKind);
  const ownerNamespace = owner.metadata?.namespace ?? "";
  if (ownerKind.namespaced && ownerNamespace !== (obj.metadata?.namespace ?? "")) {
    throw new Error(
      `cross-namespace owner references are disallowed: ${ownerKind.kind} ${ownerNamespace}/${ref.name} cannot own an object in namespace "${obj.metadata?.namespace ?? ""}"`,
    );
  }
  obj.metadata ??= {};
  const refs = obj.metadata.ownerReferences ?? [];
  const current = refs.find((r) => r.controller === true);
  if (current !== undefined && current.uid !== ref.uid) {
    throw new Error(
      `${obj.metadata.name ?? "object"} is already controlled by ${current.kind} ${current.name} (uid ${current.uid})`,
    );
  }
  const same = refs.findIndex((r) => r.uid === ref.uid);
  obj.metadata.ownerReferences = same < 0 ? [...refs, ref] : refs.map((r, i) => (i === same ? ref : r));
}

/** The RFC 7386 merge patch turning `from` into `to`, or undefined when they are equal. */
export function mergePatchBetween(from: unknown, to: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(from) || !isPlainObject(to)) {
    throw new TypeError("mergePatchBetween compares two objects");
  }
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    const old = from[key];
    if (isPlainObject(old) && isPlainObject(value)) {
      const inner = mergePatchBetween(old, value);
      if (inner !== undefined) patch[key] = inner;
    } else if (!jsonEqual(old, value)) {
      patch[key] = value;
    }
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function getIfExists<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  signal: AbortSignal | undefined,
): Promise<T | undefined> {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError("createOrUpdate needs metadata.name");
  try {
    return await client.get(name, { signal });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
