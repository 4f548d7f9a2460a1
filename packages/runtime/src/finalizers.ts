import type { DeepReadonly, KubeObject } from "@reconcile/api";
import type { ResourceClient } from "@reconcile/client";

/** Whether `obj` lists `finalizer` (controllerutil's `ContainsFinalizer`). */
export function hasFinalizer(obj: DeepReadonly<KubeObject> | KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/**
 * Adds `finalizer` to the object on the server unless it is there already,
 * with a JSON merge patch conditional on the object's resourceVersion (a 409
 * Conflict if it changed since it was read: reconcile again). Resolves the
 * object as written, or `obj` unchanged.
 */
export async function addFinalizer<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: DeepReadonly<T> | T,
  finalizer: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<DeepReadonly<T> | T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  return patchFinalizers(client, obj, [...(obj.metadata?.finalizers ?? []), finalizer], options.signal);
}

/** Removes `finalizer` on the server if present, conditional on the resourceVersion as {@link addFinalizer}. */
export async function removeFinalizer<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: DeepReadonly<T> | T,
  finalizer: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<DeepReadonly<T> | T> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  const rest = (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
  return patchFinalizers(client, obj, rest, options.signal);
}

/** What {@link reconcileFinalizer} did. */
export type FinalizerOutcome =
  /** The object is not being deleted and already had the finalizer: reconcile it. */
  | "present"
  /** The finalizer was just added (the write triggers another event). */
  | "added"
  /** The object is being deleted: cleanup ran and the finalizer was removed; do nothing else. */
  | "finalized"
  /** The object is being deleted and does not carry the finalizer: nothing to do. */
  | "deleting";

/**
 * The finalizer pattern in one call: an object not being deleted gets the
 * finalizer; an object being deleted that carries it has `cleanup` run, and
 * only once that resolves is the finalizer removed, so the API server deletes
 * the object. A rejecting cleanup keeps the finalizer (the reconcile fails
 * and is retried).
 */
export async function reconcileFinalizer<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: DeepReadonly<T> | T,
  finalizer: string,
  cleanup: (obj: DeepReadonly<T> | T) => Promise<void>,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<FinalizerOutcome> {
  if (obj.metadata?.deletionTimestamp) {
    if (!hasFinalizer(obj, finalizer)) return "deleting";
    await cleanup(obj);
    await removeFinalizer(client, obj, finalizer, options);
    return "finalized";
  }
  if (hasFinalizer(obj, finalizer)) return "present";
  await addFinalizer(client, obj, finalizer, options);
  return "added";
}

async function patchFinalizers<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: DeepReadonly<T> | T,
  finalizers: readonly string[],
  signal: AbortSignal | undefined,
): Promise<T> {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError("cannot change the finalizers of an object without metadata.name");
  const resourceVersion = obj.metadata?.resourceVersion;
  return client.patch(
    name,
    { metadata: { finalizers, ...(resourceVersion ? { resourceVersion } : {}) } },
    { type: "merge", signal },
  );
}
