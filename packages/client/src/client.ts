import type {
  DeepReadonly,
  KubeObject,
  ListOptions,
  ObjectList,
  ResourceDescriptor,
  Scale,
  Status,
  WatchEvent,
  WatchOptions,
} from "@reconcile/api";

/** Options every call accepts. */
export interface CallOptions {
  /** Aborting cancels the call; it then rejects. */
  signal?: AbortSignal | undefined;
}

/** Options of writes (`metav1.CreateOptions` / `UpdateOptions` / `PatchOptions`). */
export interface WriteOptions extends CallOptions {
  /** `All` validates and answers without persisting. */
  dryRun?: "All" | undefined;
  fieldManager?: string | undefined;
}

export type PatchType = "merge" | "json" | "strategic-merge" | "apply";

/** The content types of the patch kinds, as kube-apiserver expects them. */
export const patchContentTypes: Readonly<Record<PatchType, string>> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  "strategic-merge": "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

/** Options of a read of one object (`metav1.GetOptions`). */
export interface GetOptions extends CallOptions {
  /**
   * Reads a subresource of the object instead (`status`, `scale`…), as
   * client-go's `Get(ctx, name, opts, subresources...)`.
   */
  subresource?: string | undefined;
}

/** Options of an update (`metav1.UpdateOptions`). */
export interface UpdateOptions extends WriteOptions {
  /**
   * Writes through a subresource of the object instead (`status`, `scale`,
   * `finalize`…), as client-go's `Update(ctx, obj, opts, subresources...)`.
   */
  subresource?: string | undefined;
}

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  /** Patches a subresource of the object instead (`status`, `scale`…). */
  subresource?: string | undefined;
  /** Apply patches only: take ownership of conflicting fields. */
  force?: boolean | undefined;
}

/** A JSON Patch operation (RFC 6902). */
export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

export type PropagationPolicy = "Background" | "Foreground" | "Orphan";

/** `metav1.DeleteOptions`. */
export interface DeleteOptions extends CallOptions {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: PropagationPolicy | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  dryRun?: "All" | undefined;
}

export interface DeleteCollectionOptions extends DeleteOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

/**
 * What a delete returns: the object when it still exists afterwards (graceful
 * deletion, finalizers, foreground propagation) or was removed (kube-apiserver
 * returns the last state), or a `Status` of success.
 */
export type DeleteResult<T> = { kind: "object"; object: T } | { kind: "status"; status: Status };

/**
 * A typed client for one resource, optionally bound to a namespace. Every
 * failure rejects with a `StatusError` (from `@reconcile/api`).
 */
export interface ResourceClient<T extends KubeObject = KubeObject> {
  readonly resource: ResourceDescriptor<T>;
  /** The namespace this client is bound to; undefined = all namespaces (or cluster-scoped). */
  readonly namespace: string | undefined;

  list(options?: ListOptions): Promise<ObjectList<T>>;
  /**
   * Opens a watch. The promise resolves once the watch is established; the
   * iterable ends when the server closes the watch or `options.signal` aborts.
   */
  watch(options?: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
  /** Reads the object, or one of its subresources (`options.subresource`). */
  get(name: string, options?: GetOptions): Promise<T>;
  create(object: T | DeepReadonly<T>, options?: WriteOptions): Promise<T>;
  /** Replaces the object, or writes through one of its subresources (`options.subresource`). */
  update(object: T | DeepReadonly<T>, options?: UpdateOptions): Promise<T>;
  /** `update` through the `status` subresource. */
  updateStatus(object: T | DeepReadonly<T>, options?: WriteOptions): Promise<T>;
  /**
   * `PUT namespaces/{name}/finalize`: writes a namespace's `spec.finalizers`
   * and nothing else (client-go's `NamespaceInterface.Finalize`). Namespaces
   * only; clients that cannot reach the subresource leave it out.
   */
  finalize?(object: T | DeepReadonly<T>, options?: WriteOptions): Promise<T>;
  /**
   * `patch` is a JSON object (merge, strategic-merge, apply) or a list of
   * operations (json). `options.subresource` patches a subresource (`status`, `scale`…).
   */
  patch(name: string, patch: unknown, options: PatchOptions): Promise<T>;
  delete(name: string, options?: DeleteOptions): Promise<DeleteResult<T>>;
  deleteCollection(options?: DeleteCollectionOptions): Promise<ObjectList<T>>;
  getScale(name: string, options?: CallOptions): Promise<Scale>;
  updateScale(name: string, scale: Scale, options?: WriteOptions): Promise<Scale>;
}

/**
 * The {@link ResourceClient} calls that write (the rest read or watch): what
 * a write counter or a fault injector wraps.
 */
export const writeVerbs: ReadonlySet<string> = new Set([
  "create",
  "update",
  "updateStatus",
  "patch",
  "delete",
  "deleteCollection",
  "finalize",
  "updateScale",
]);

/**
 * The door to an API server: the embedded one (in process) or any Kubernetes
 * cluster (over HTTP). Controllers and informers talk to the world only
 * through this.
 */
export interface Client {
  /**
   * A typed client for `resource`. For namespaced resources, `namespace`
   * scopes every call; omit it to list/watch across all namespaces (single
   * object calls then take the namespace from the object, or fail clearly).
   */
  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T>;
}
