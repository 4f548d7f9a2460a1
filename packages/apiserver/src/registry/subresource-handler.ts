import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { PatchType } from "./patch.js";
import type { PatchOptions } from "./store/request-options.js";

/**
 * One subresource of a kind (`pods/{name}/status`, `deployments/{name}/scale`,
 * `pods/{name}/binding`), as kube-apiserver's per-subresource REST storage
 * (StatusREST, ScaleREST, BindingREST, EvictionREST, FinalizeREST): the verbs
 * it implements. A verb it lacks is a 405; a subresource the kind lacks, a 404.
 */
export interface SubresourceHandler {
  /**
   * What `get`, `update` and `patch` answer, or what `create` takes, as
   * discovery lists it (`autoscaling/v1` Scale, `policy/v1` Eviction);
   * undefined: the kind itself (a status subresource answers the whole object).
   */
  readonly kind?: { group: string; version: string; kind: string } | undefined;
  /** `GET`. */
  get?(store: SubresourceStore, namespace: string | undefined, name: string): Promise<KubeObject>;
  /** `PUT` of the subresource's object. */
  update?(
    store: SubresourceStore,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: SubresourceWriteOptions,
  ): Promise<KubeObject>;
  /** `PATCH` of the subresource's object. */
  patch?(
    store: SubresourceStore,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: SubresourceWriteOptions,
  ): Promise<KubeObject>;
  /**
   * `POST` of a body for one object (a Binding, an Eviction). The server
   * answers 201 with a Success Status once it resolves; what it throws (a
   * `StatusError`) is the answer otherwise.
   */
  create?(
    store: SubresourceStore,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: { dryRun?: "All" | undefined },
  ): Promise<void>;
}

/** The options of a subresource write: those of any write (dry run, field manager, field validation, force). */
export type SubresourceWriteOptions = PatchOptions;

/** What a {@link SubresourceHandler} may do with objects of its kind. */
export interface SubresourceStore {
  /** The time now, RFC 3339. */
  now(): string;
  /**
   * Reads the object (404 if absent), writes `tryUpdate(existing)` with the
   * read resourceVersion as precondition and retries on a conflict
   * (GuaranteedUpdate). The result is stored as returned: no defaulting or
   * validation beyond what `tryUpdate` does. A dry run writes nothing.
   */
  update(
    namespace: string | undefined,
    name: string,
    tryUpdate: (existing: KubeObject) => KubeObject,
    options: { dryRun?: "All" | undefined },
  ): Promise<KubeObject>;
  /**
   * `update`, through the kind's strategy as the named subresource's writes
   * go (a `status` write keeps the spec, a `finalize` write keeps all but
   * `spec.finalizers`, a `scale` write is a spec change): defaulting,
   * validation, generation and managedFields as for any update.
   * `precondition` is the resourceVersion the change was based on (a
   * mismatch is a 409).
   */
  updateAs(
    subresource: string,
    namespace: string | undefined,
    name: string,
    precondition: string | undefined,
    tryUpdate: (existing: KubeObject) => KubeObject,
    options: SubresourceWriteOptions,
  ): Promise<KubeObject>;
  /** `PUT` of a whole object as the named subresource writes it (see {@link updateAs}). */
  replaceAs(
    subresource: string,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: SubresourceWriteOptions,
  ): Promise<KubeObject>;
  /** `PATCH` of the object as the named subresource writes it (see {@link updateAs}); apply patches included. */
  patchAs(
    subresource: string,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: SubresourceWriteOptions,
  ): Promise<KubeObject>;
  /** Reads the object; 404 if absent. */
  get(namespace: string | undefined, name: string): Promise<KubeObject>;
  /** Every object of the kind in `namespace` (all namespaces when undefined). */
  list(namespace: string | undefined): Promise<KubeObject[]>;
  /** The same for another served kind (an Eviction reads and writes PodDisruptionBudgets); undefined when it is not served. */
  peer(resource: ResourceDescriptor): SubresourceStore | undefined;
  /** Deletes the object as `DELETE` would (grace period, finalizers, preconditions). */
  delete(namespace: string | undefined, name: string, options: SubresourceDeleteOptions): Promise<void>;
}

/** The DeleteOptions a subresource handler may pass on (an Eviction's). */
export interface SubresourceDeleteOptions {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: string | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  dryRun?: "All" | undefined;
}
