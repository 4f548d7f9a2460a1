import type { KubeObject } from "@reconcile/api";
import type { StorageEvent } from "./storage.js";

/** One stored change, as a watcher's filter needs it. */
export interface StorageChange {
  type: "ADDED" | "MODIFIED" | "DELETED";
  revision: number;
  /** The state written; for DELETED, the last state of the object deleted. */
  object: KubeObject;
  /** The state before the change (MODIFIED and DELETED); undefined when not known. */
  previous: KubeObject | undefined;
}

/**
 * The watch event a change becomes for a watcher with `predicate`
 * (kube-apiserver's `cacheWatcher.convertToWatchEvent`): the current state is
 * filtered (never for a delete) and so is the previous one. Entering the
 * selection is ADDED, staying in it MODIFIED, leaving it — by a delete or by
 * an update — DELETED, in the previous state at the change's revision. Every
 * `Storage` implementation filters its watches through this one rule.
 */
export function watchEventFor(
  change: StorageChange,
  predicate: ((object: KubeObject) => boolean) | undefined,
): StorageEvent | undefined {
  const { type, object, revision, previous } = change;
  if (predicate === undefined) return { type, object, revision };
  if (type === "ADDED") return predicate(object) ? { type, object, revision } : undefined;
  if (type === "DELETED") {
    // Upstream filters the previous state (the deleted object's last state has the same fields).
    return predicate(previous ?? object) ? { type, object, revision } : undefined;
  }
  const matches = predicate(object);
  const matched = previous !== undefined && predicate(previous);
  if (matches && matched) return { type: "MODIFIED", object, revision };
  if (matches) return { type: "ADDED", object, revision };
  // It stopped matching: the watcher sees it leave, in its last matching state at this revision.
  if (matched) return { type: "DELETED", object: withResourceVersion(previous, revision), revision };
  return undefined;
}

/** A shallow copy of `object` with `metadata.resourceVersion` set to `revision`. */
export function withResourceVersion(object: KubeObject, revision: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
}
