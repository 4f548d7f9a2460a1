import type { KubeObject, ListMeta, ObjectMeta, Status } from "./types.js";

/** A list response: `items` plus `metadata.resourceVersion` (and `continue` when paginated). */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** Options of a list call, as `metav1.ListOptions`. */
export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Maximum items per page; the response carries `metadata.continue` if there are more. */
  limit?: number | undefined;
  /** The continue token from the previous page. */
  continue?: string | undefined;
  /**
   * "" (or absent): the most recent state. "0": any state the server has (the
   * embedded server serves its current state). Otherwise at least that fresh.
   */
  resourceVersion?: string | undefined;
  /** How `resourceVersion` is matched: `NotOlderThan` (default) or `Exact`. */
  resourceVersionMatch?: "NotOlderThan" | "Exact" | undefined;
  /**
   * Ask for each object's metadata alone, as {@link PartialObjectMetadata}
   * (client-go's metadata client). A client or server that cannot answers
   * whole objects; {@link asPartialObjectMetadata} makes them alike.
   */
  metadataOnly?: boolean | undefined;
  /**
   * The caller changes none of the objects it gets and takes them frozen: an
   * API server in the same process may then hand out the objects it holds,
   * deep-frozen and shared with every such caller, instead of a copy of each
   * for each caller. Not sent over the wire; a client that makes its objects
   * anyway (HTTP, another thread) ignores it.
   */
  acceptFrozen?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** Options of a watch call, as `metav1.ListOptions` with `watch=true`. */
export interface WatchOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Start after this version; "" or "0" start with synthetic ADDED events for the current state. */
  resourceVersion?: string | undefined;
  allowWatchBookmarks?: boolean | undefined;
  /**
   * A watch list (client-go's WatchList): the current state as ADDED events,
   * then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` at the
   * state's resourceVersion, then the changes. With false, none of the
   * state even for "" or "0". Needs `resourceVersionMatch: "NotOlderThan"`.
   */
  sendInitialEvents?: boolean | undefined;
  /** With `sendInitialEvents`: the state is at least as new as `resourceVersion`. */
  resourceVersionMatch?: "NotOlderThan" | undefined;
  /** The server closes the watch after this many seconds. */
  timeoutSeconds?: number | undefined;
  /** Each event's object as {@link PartialObjectMetadata}, as for a list. */
  metadataOnly?: boolean | undefined;
  /** As for a list: every event's object may come frozen and shared. */
  acceptFrozen?: boolean | undefined;
  /** Aborting ends the watch's iteration. */
  signal?: AbortSignal | undefined;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * One watch event. BOOKMARK carries an object with only `metadata.resourceVersion`
 * (and `kind`/`apiVersion`); ERROR carries a `Status` (for example 410 Expired).
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: Status };

/**
 * What informers consume: one list and one watch function (client-go's
 * `ListerWatcher`). Both reject with a `StatusError` on failure. A watch
 * is an async iterable that ends when the server closes it or its signal aborts.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(options: ListOptions): Promise<ObjectList<T>>;
  watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}

/** `meta.k8s.io/v1` PartialObjectMetadata: an object's metadata alone (what metadata-only lists and watches hold). */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion: string;
  kind: "PartialObjectMetadata";
  metadata: ObjectMeta;
}

/** `object` as PartialObjectMetadata: itself when it already is one, else its metadata (shared, not copied). */
export function asPartialObjectMetadata(object: KubeObject): PartialObjectMetadata {
  if (object.kind === "PartialObjectMetadata" && object.apiVersion?.startsWith("meta.k8s.io/"))
    return object as PartialObjectMetadata;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: object.metadata ?? {} };
}
