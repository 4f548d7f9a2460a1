import type { GroupResource, ResourceDescriptor } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { ResourceDefinition } from "../../kinds/definition.js";
import type { ClusterIPAllocator } from "../../kinds/service-ips.js";
import type { Storage } from "../../storage/storage.js";
import type { FieldValidation } from "../field-validation.js";

/** What every store of one registry shares. */
export interface StoreContext {
  /** Where objects live. */
  readonly storage: Storage;
  /** Time for timestamps and watch timeouts. */
  readonly clock: Clock;
  /** Largest accepted object, in bytes of JSON. */
  readonly maxObjectBytes: number;
  /** Bookmark interval for watches that allow bookmarks. */
  readonly bookmarkIntervalMs: number;
  /** Where Services take their cluster IPs from; without it, Services get none. */
  readonly serviceIPs: ClusterIPAllocator | undefined;
  /** How to stop each watch being served, so the registry can stop them all. */
  readonly watches: Set<() => void>;
}

/** One kind's store as the verbs' functions see it: the definition and the shared context. */
export interface StoreCore {
  readonly definition: ResourceDefinition;
  /** The served descriptor (the definition's). */
  readonly resource: ResourceDescriptor;
  /** The group and resource named in errors. */
  readonly gr: GroupResource;
  readonly context: StoreContext;
}

export interface DryRunOption {
  dryRun?: "All" | undefined;
  /**
   * The manager that `metadata.managedFields` credits with this write: the
   * `fieldManager` parameter, or the User-Agent's product (see
   * `managerFromUserAgent`). Default `unknown`, as kube-apiserver names a
   * writer that gives neither.
   */
  fieldManager?: string | undefined;
  /** The request's User-Agent, whose product names the manager when `fieldManager` is not given. */
  userAgent?: string | undefined;
  /**
   * What to do about fields the kind's schema does not declare and fields
   * given twice (`fieldValidation`); they are dropped in any case. Default:
   * Warn, with nowhere for the warnings to go.
   */
  fieldValidation?: FieldValidation | undefined;
}

export interface PatchOptions extends DryRunOption {
  /** The subresource written through (`status`…); empty or undefined: the object itself. */
  subresource?: string | undefined;
  force?: boolean | undefined;
}

export interface RegistryDeleteOptions extends DryRunOption {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: string | undefined;
  /** The older `orphanDependents`, as sent (it also sets `propagationPolicy`); only the HTTP answer's code reads it. */
  orphanDependents?: boolean | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
}

/** Options of the update path: which endpoint writes, and whether an apply computed the ownership. */
export interface UpdateOptions extends DryRunOption {
  /** The subresource written through (`status`, `scale`, `finalize`); empty or undefined: the object itself. */
  subresource?: string | undefined;
  /** The write is an apply: the object comes with its managedFields already computed. */
  managedFieldsComputed?: boolean | undefined;
}
