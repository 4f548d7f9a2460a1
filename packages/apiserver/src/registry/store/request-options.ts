import type { KubeObject } from "@reconcile/api";
import type { AdmissionUser } from "../admission.js";
import type { FieldValidation } from "../field-validation.js";

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
  /**
   * A last check of the object about to be written (created, or updated from
   * `existing`), after the kind's own validation: what a validating admission
   * step refuses, it throws. Default: none.
   */
  admit?: ((object: KubeObject, existing: KubeObject | undefined) => Promise<void> | void) | undefined;
  /** Who writes, for admission; undefined for the server's own in-process clients. */
  user?: AdmissionUser | undefined;
  /**
   * Asked before an update or apply creates the object it names (a kind whose
   * strategy allows create on update): throws when the writer may not create
   * it (upstream authorizes `create` as well). Default: none (allowed).
   */
  mayCreate?: (() => Promise<void> | void) | undefined;
  /** Collects the texts of `Warning` headers that admission adds. */
  warnings?: string[] | undefined;
  /** Receives the audit annotations admission adds (`pod-security.kubernetes.io/enforce-policy`…). */
  annotate?:
    | ((key: string, value: string, level?: "Metadata" | "Request" | "RequestResponse") => void)
    | undefined;
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
