import type { KubeObject } from "@reconcile/api";
import type { AdmissionUser } from "./admission.js";
import type { ClusterIPAllocator } from "./cluster-ip-allocator.js";
import type { FieldErrors } from "./field-errors.js";
import type { NameRule } from "./meta-validation.js";
import type { NodePortAllocator } from "./node-port-allocator.js";

/** What a kind's preparation and write hooks may use: the allocators the server was built with. */
export interface WriteHookContext {
  readonly serviceIPs: ClusterIPAllocator | undefined;
  readonly serviceNodePorts: NodePortAllocator | undefined;
}

/**
 * What differs between kinds (kube-apiserver's `RESTCreateStrategy`,
 * `RESTUpdateStrategy`, defaulting functions and validation). The registry
 * does everything common; a strategy only adds what its kind needs.
 */
export interface Strategy {
  /** How names are checked. Default: DNS-1123 subdomain. */
  readonly nameRule?: NameRule;
  /**
   * Clears what a client may not set on create (status, for most kinds with a
   * status); `user` is who creates it (undefined for the server's own
   * in-process clients), for kinds that record the requester (a CSR's `spec.username`);
   * `context` is what the server was built with (a Service's IP families).
   */
  prepareForCreate?(object: KubeObject, user: AdmissionUser | undefined, context: WriteHookContext): void;
  /**
   * Fills what needs the new object's uid, once it has one (a Job's
   * generated selector and labels: upstream does it in the create's Validate).
   */
  completeCreate?(object: KubeObject): void;
  /** Fills defaults (`SetDefaults_*`), on create and on update. */
  applyDefaults?(object: KubeObject): void;
  /** Validates a new object (`Validate*`). */
  validate?(object: KubeObject, errors: FieldErrors): void;
  /** Validates a new object beyond `validate`: what only a create must meet (an events.k8s.io Event's stricter rules). */
  validateCreate?(object: KubeObject, errors: FieldErrors): void;
  /** Validates an update against the stored object: immutable fields and the like. */
  validateUpdate?(object: KubeObject, old: KubeObject, errors: FieldErrors): void;
  /** Resets what a plain update may not change (a namespace's `spec.finalizers`), beyond the status. */
  prepareForUpdate?(object: KubeObject, old: KubeObject): void;
  /**
   * Makes an update through one of the kind's own subresources (a CSR's
   * `approval`) change only what that subresource owns, by name; `now` as for
   * `prepareForStatusUpdate`.
   */
  readonly subresourceUpdates?: Readonly<
    Record<string, (object: KubeObject, old: KubeObject, now: string) => void>
  >;
  /**
   * The paths a write through a subresource (by name, `""` for the object
   * itself) resets, so its manager never owns them (kube-apiserver's
   * `GetResetFields`), where they are not the default: the status for the
   * object of a kind with a status subresource, the spec for `/status`.
   */
  readonly resetFields?: Readonly<Record<string, ReadonlyArray<readonly string[]>>>;
  /**
   * Makes a `/finalize` update (namespaces) change only what that subresource
   * owns; kinds without it answer 404 on `/finalize`.
   */
  prepareForFinalize?(object: KubeObject, old: KubeObject): void;
  /**
   * Whether the object stays, marked for deletion, even once its
   * `metadata.finalizers` are gone (a namespace while `spec.finalizers`
   * remain: upstream's `ShouldDeleteNamespaceDuringUpdate`).
   */
  holdsDeletion?(object: KubeObject): boolean;
  /**
   * Resets what a `/status` update may not change, keeping the rest of the
   * request (kube-apiserver's per-kind status strategy `PrepareForUpdate`).
   * Default: only the status changes. `now` is the server's time (RFC 3339),
   * for conditions stamped on the way.
   */
  prepareForStatusUpdate?(object: KubeObject, old: KubeObject, now: string): void;
  /**
   * Replaces `validate` and `validateUpdate` for a `/status` write: upstream's
   * status strategies check the status (and metadata) only, the spec being
   * the stored one. Default: the object is validated whole.
   */
  validateStatusUpdate?(object: KubeObject, old: KubeObject, errors: FieldErrors): void;
  /**
   * Finalizers the kind's first delete adds, holding the object until what
   * they stand for is done (a CRD's `customresourcecleanup.apiextensions.k8s.io`).
   */
  readonly deletionFinalizers?: readonly string[];
  /** Marks an object whose deletion begins, in the same write (a CRD's `Terminating` condition). */
  prepareForDelete?(object: KubeObject): void;
  /** The grace period of a delete, for kinds with graceful deletion (pods). */
  gracePeriodSeconds?(object: KubeObject, requested: number | undefined): number;
  /** The scale subresource: where the replicas live and the selector string. */
  readonly scale?: {
    replicas(object: KubeObject): number;
    setReplicas(object: KubeObject, replicas: number): void;
    statusReplicas(object: KubeObject): number;
    selector(object: KubeObject): string;
  };
}
