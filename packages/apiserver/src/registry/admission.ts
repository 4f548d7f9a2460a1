import type { KubeObject, ResourceDescriptor } from "@reconcile/api";

/** The operations admission sees (upstream's `admission.Operation`). */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** Who makes a request, as admission sees it (upstream's `user.Info`). */
export interface AdmissionUser {
  username: string;
  uid?: string | undefined;
  groups: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>> | undefined;
}

/**
 * One write as admission sees it (upstream's `admission.Attributes`). In the
 * mutating phase `object` may be changed in place; in the validating phase it
 * is final and must not be.
 */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  /** The resource written (its group, version, kind and plural). */
  readonly resource: ResourceDescriptor;
  /** `status`, `scale`, `binding`…; empty for the object itself. */
  readonly subresource: string;
  /** Empty for cluster-scoped resources. */
  readonly namespace: string;
  /** Empty on a create whose name is still to be generated. */
  readonly name: string;
  /** The object as it will be stored: undefined on DELETE and CONNECT. */
  readonly object: KubeObject | undefined;
  /** The stored object an UPDATE or DELETE starts from. */
  readonly oldObject: KubeObject | undefined;
  readonly dryRun: boolean;
  /** The requesting user; undefined for the server's own in-process clients. */
  readonly user: AdmissionUser | undefined;
  /** Adds a warning to the response (the `Warning` header). */
  warn(message: string): void;
  /**
   * Adds an annotation to the request's audit event (upstream's
   * `AddAnnotation`): `<plugin domain>/<name>` keys; a key given twice keeps
   * its first value. With `level` (`Request`, `RequestResponse`), it is
   * recorded only in events of that level and above (`AddAnnotationWithLevel`).
   * Nothing happens when the request is not audited.
   */
  annotate(key: string, value: string, level?: "Metadata" | "Request" | "RequestResponse"): void;
}

/**
 * What the registry asks of admission on every write: mutate first (before
 * the kind's own preparation and validation), validate last (just before the
 * write). Either rejects with the `StatusError` the client gets.
 */
export interface Admission {
  /** Resolves `true` when the object must be defaulted again (a webhook patched it). */
  mutate(attributes: AdmissionAttributes): Promise<boolean> | boolean;
  validate(attributes: AdmissionAttributes): Promise<void> | void;
}
