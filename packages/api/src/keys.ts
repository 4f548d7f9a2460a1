import type { DeepReadonly, KubeObject } from "./types.js";

const tombstoneMarker = Symbol.for("reconcile.deleted-final-state-unknown");

/**
 * A tombstone: the informer missed the delete of `key` (for example because
 * the watch was down) and `obj` is the last state it knew. Delete handlers
 * receive `T | DeletedFinalStateUnknown<T>`; check with {@link isDeletedFinalStateUnknown}.
 */
export class DeletedFinalStateUnknown<T> {
  readonly [tombstoneMarker] = true;
  readonly key: string;
  readonly obj: T;
  constructor(key: string, obj: T) {
    this.key = key;
    this.obj = obj;
  }
}

/**
 * Whether `value` is a tombstone. Checks a `Symbol.for` marker rather than
 * `instanceof`, so a tombstone made by another copy of this package (two
 * versions installed side by side) is recognised too.
 */
export function isDeletedFinalStateUnknown<T>(
  value: T | DeletedFinalStateUnknown<T>,
): value is DeletedFinalStateUnknown<T> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[tombstoneMarker] === true
  );
}

/** A key function, as client-go's `KeyFunc`. */
export type KeyFunc<T = KubeObject> = (obj: T | DeepReadonly<T>) => string;

/**
 * `namespace/name`, or `name` for cluster-scoped objects (client-go's
 * `MetaNamespaceKeyFunc`). A string is taken to be a key already and returned
 * as is (client-go's `ExplicitKey`). Throws if the object has no `metadata.name`.
 */
export function metaNamespaceKeyFunc(obj: KubeObject | DeepReadonly<KubeObject> | string): string {
  if (typeof obj === "string") return obj;
  const meta = obj?.metadata;
  if (meta === undefined || meta === null)
    throw new TypeError("object has no metadata: cannot compute its key");
  const name = meta.name;
  if (typeof name !== "string" || name === "")
    throw new TypeError("object has no metadata.name: cannot compute its key");
  const namespace = meta.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * Like {@link metaNamespaceKeyFunc}, but returns a tombstone's key as is
 * (client-go's `DeletionHandlingMetaNamespaceKeyFunc`).
 */
export function deletionHandlingMetaNamespaceKeyFunc<T extends KubeObject>(
  obj: T | DeepReadonly<T> | DeletedFinalStateUnknown<T | DeepReadonly<T>>,
): string {
  if (isDeletedFinalStateUnknown(obj)) return obj.key;
  return metaNamespaceKeyFunc(obj);
}

/**
 * Splits a key into namespace and name (client-go's `SplitMetaNamespaceKey`):
 * `name` is cluster-scoped (namespace ""), `ns/name` is namespaced, anything
 * with more parts is an error.
 */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const first = key.indexOf("/");
  if (first === -1) return { namespace: "", name: key };
  if (key.indexOf("/", first + 1) !== -1) {
    throw new TypeError(
      `unexpected key format: ${JSON.stringify(key)} (expected "name" or "namespace/name")`,
    );
  }
  return { namespace: key.slice(0, first), name: key.slice(first + 1) };
}
