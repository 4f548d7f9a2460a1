import type { Status, StatusCause, StatusDetails } from "./types.js";

const reconcileErrorMarker = Symbol.for("reconcile.error");

/**
 * The base of every error reconcile throws on purpose. `code` is stable to
 * switch on, in one style: `"<package>.<kebab-case-reason>"` (such as
 * `"informer.fifo-closed"` or `"leader-election.invalid-config"`), except on
 * `StatusError`, where it is the HTTP status code as client-go's
 * `StatusError.ErrStatus.Code` has it. Where a code was renamed to that
 * style, the one before is on `legacyCode` for a release.
 *
 * `isInstance` works across duplicated installs of a package: it checks a
 * `Symbol.for` marker, not the prototype chain, so use it (or each
 * subclass's own `isInstance`) rather than `instanceof`.
 */
export class ReconcileError<Code extends string | number = string> extends Error {
  readonly [reconcileErrorMarker] = true;
  readonly code: Code;
  /**
   * The code this error had before codes took the `<package>.<kebab-reason>`
   * style (`"fifo.closed"` for `"informer.fifo-closed"`); undefined where the
   * code did not change.
   * @deprecated Switch on `code`; this goes away in the next minor release.
   */
  readonly legacyCode: string | undefined;

  constructor(code: Code, message: string, options?: { cause?: unknown; legacyCode?: string | undefined }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ReconcileError";
    this.code = code;
    this.legacyCode = options?.legacyCode;
  }

  static isInstance(error: unknown): error is ReconcileError<string | number> {
    return ReconcileError.hasMarker(error, reconcileErrorMarker);
  }

  /** Whether `error` carries `marker` (a `Symbol.for` key set to true): the check behind every `isInstance`. */
  static hasMarker(error: unknown, marker: symbol): boolean {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

/**
 * The message line of anything thrown: an `Error`'s `message`, anything else
 * as `String(value)`. For log records and for the text of a wrapping error.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Kubernetes' `metav1.StatusReason` values. */
export type StatusReason =
  | ""
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Invalid"
  | "ServerTimeout"
  | "StoreReadError"
  | "Timeout"
  | "TooManyRequests"
  | "BadRequest"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "InternalError"
  | "Expired"
  | "ServiceUnavailable";

const statusErrorMarker = Symbol.for("reconcile.status-error");

/**
 * An API error: a failed call to the API server, carrying the Kubernetes
 * `Status` the server sent (or would have sent). Every `Client` failure is one.
 * `code` is the HTTP status code (404, 409, …) as in client-go's
 * `ErrStatus.Code` and client-node's `ApiException.code`; `reason` says why
 * (`"NotFound"`, `"Conflict"`, …); `status` is the whole `Status`.
 */
export class StatusError extends ReconcileError<number> {
  readonly [statusErrorMarker] = true;
  readonly status: Status & { code: number; reason: StatusReason; message: string };

  constructor(status: Status, options?: { cause?: unknown }) {
    const message = status.message ?? `the server responded with code ${status.code ?? 0}`;
    super(status.code ?? 0, message, options);
    this.name = "StatusError";
    this.status = {
      ...status,
      apiVersion: "v1",
      kind: "Status",
      status: "Failure",
      code: status.code ?? 0,
      reason: (status.reason ?? "") as StatusReason,
      message,
      metadata: status.metadata ?? {},
    };
  }

  get reason(): StatusReason {
    return this.status.reason;
  }

  /** The HTTP status code: the same number as `code`. */
  get statusCode(): number {
    return this.status.code;
  }

  /**
   * The string code this error had before `code` became the HTTP status
   * code: `"status."` and the reason (`"status.NotFound"`), or
   * `"status.Unknown"` without one.
   * @deprecated Switch on `reason` (or `code` for the HTTP status code); this
   * alias goes away in the next minor release.
   */
  get errorCode(): string {
    return `status.${this.status.reason || "Unknown"}`;
  }

  get details(): StatusDetails | undefined {
    return this.status.details;
  }

  static override isInstance(error: unknown): error is StatusError {
    return ReconcileError.hasMarker(error, statusErrorMarker);
  }
}

/** A group-qualified resource, as error messages name it: `pods`, `replicasets.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}

function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function details(gr: GroupResource, name: string, extra: Partial<StatusDetails> = {}): StatusDetails {
  return { name, group: gr.group, kind: gr.resource, ...extra };
}

// Constructors: the same reasons, codes and messages as apimachinery's errors package.

export function newNotFound(gr: GroupResource, name: string): StatusError {
  return new StatusError({
    code: 404,
    reason: "NotFound",
    message: `${qualified(gr)} "${name}" not found`,
    details: details(gr, name),
  });
}

export function newAlreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError({
    code: 409,
    reason: "AlreadyExists",
    message: `${qualified(gr)} "${name}" already exists`,
    details: details(gr, name),
  });
}

/** The message kube-apiserver gives when a resourceVersion precondition fails. */
export const optimisticLockErrorMsg =
  "the object has been modified; please apply your changes to the latest version and try again";

export function newConflict(
  gr: GroupResource,
  name: string,
  reason: string = optimisticLockErrorMsg,
): StatusError {
  return new StatusError({
    code: 409,
    reason: "Conflict",
    message: `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${reason}`,
    details: details(gr, name),
  });
}

/** 410 Gone with reason `Gone`. */
export function newGone(message: string): StatusError {
  return new StatusError({ code: 410, reason: "Gone", message });
}

/** 410 Gone with reason `Expired`: a resourceVersion or continue token that has left the history. */
export function newResourceExpired(message: string): StatusError {
  return new StatusError({ code: 410, reason: "Expired", message });
}

/** A kind-qualified kind, as Invalid messages name it: `Pod`, `Deployment.apps`. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** One field error of an Invalid response. `type` is the cause type, e.g. `FieldValueRequired`. */
export interface FieldError {
  type:
    | "FieldValueNotFound"
    | "FieldValueRequired"
    | "FieldValueDuplicate"
    | "FieldValueInvalid"
    | "FieldValueNotSupported"
    | "FieldValueForbidden"
    | "FieldValueTooLong"
    | "FieldValueTooMany"
    | "InternalError"
    | "FieldValueTypeInvalid";
  /** JSON path of the field, e.g. `spec.template.spec.containers[0].image`. */
  field: string;
  /** The full message, e.g. `spec.replicas: Invalid value: -1: must be greater than or equal to 0`. */
  message: string;
}

/** 422 Invalid with one cause per field error, as `apierrors.NewInvalid`. */
export function newInvalid(gk: GroupKind, name: string, errors: readonly FieldError[]): StatusError {
  const qualifiedKind = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  // A cause carries the error's body without the field (apimachinery's ErrorBody), so clients that
  // print "field: message" per cause (kubectl does) do not show the field twice.
  const causes: StatusCause[] = errors.map((e) => ({
    reason: e.type,
    message: e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message,
    field: e.field,
  }));
  const summary =
    errors.length === 0
      ? ""
      : errors.length === 1
        ? `: ${errors[0]!.message}`
        : `: [${errors.map((e) => e.message).join(", ")}]`;
  return new StatusError({
    code: 422,
    reason: "Invalid",
    message: `${qualifiedKind} "${name}" is invalid${summary}`,
    details: { name, group: gk.group, kind: gk.kind, causes },
  });
}

export function newBadRequest(message: string): StatusError {
  return new StatusError({ code: 400, reason: "BadRequest", message });
}

/** 504 Timeout: the request could not complete in time (`apierrors.NewTimeoutError`). */
export function newTimeout(message: string, retryAfterSeconds = 0): StatusError {
  return new StatusError({
    code: 504,
    reason: "Timeout",
    message: `Timeout: ${message}`,
    details: { retryAfterSeconds },
  });
}

/** 500 ServerTimeout (`apierrors.NewServerTimeout`). */
export function newServerTimeout(gr: GroupResource, operation: string, retryAfterSeconds = 0): StatusError {
  return new StatusError({
    code: 500,
    reason: "ServerTimeout",
    message: `The ${operation} operation against ${qualified(gr)} could not be completed at this time, please try again.`,
    details: { group: gr.group, kind: gr.resource, retryAfterSeconds },
  });
}

export function newTooManyRequests(message: string, retryAfterSeconds = 0): StatusError {
  return new StatusError({
    code: 429,
    reason: "TooManyRequests",
    message: `Too many requests: ${message}`,
    details: { retryAfterSeconds },
  });
}

export function newInternalError(cause: unknown): StatusError {
  const text = errorMessage(cause);
  return new StatusError(
    {
      code: 500,
      reason: "InternalError",
      message: `Internal error occurred: ${text}`,
      details: { causes: [{ message: text }] },
    },
    { cause },
  );
}

export function newMethodNotSupported(gr: GroupResource, action: string): StatusError {
  return new StatusError({
    code: 405,
    reason: "MethodNotAllowed",
    message: `${action} is not supported on resources of kind "${qualified(gr)}"`,
    details: { group: gr.group, kind: gr.resource },
  });
}

export function newUnauthorized(message = "Unauthorized"): StatusError {
  return new StatusError({ code: 401, reason: "Unauthorized", message });
}

export function newForbidden(gr: GroupResource, name: string, reason: string): StatusError {
  return new StatusError({
    code: 403,
    reason: "Forbidden",
    message: `${qualified(gr)} "${name}" is forbidden: ${reason}`,
    details: details(gr, name),
  });
}

export function newRequestEntityTooLarge(message: string): StatusError {
  return new StatusError({
    code: 413,
    reason: "RequestEntityTooLarge",
    message: `Request entity too large: ${message}`,
  });
}

export function newUnsupportedMediaType(contentType: string): StatusError {
  return new StatusError({
    code: 415,
    reason: "UnsupportedMediaType",
    message: `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    details: { causes: [{ reason: "UnsupportedMediaType", message: contentType }] },
  });
}

export function newServiceUnavailable(message: string): StatusError {
  return new StatusError({ code: 503, reason: "ServiceUnavailable", message });
}

// Predicates: the reason decides; an unknown reason falls back on the code, as apimachinery does.

const knownReasons = new Set<string>([
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "AlreadyExists",
  "Conflict",
  "Gone",
  "Invalid",
  "ServerTimeout",
  "StoreReadError",
  "Timeout",
  "TooManyRequests",
  "BadRequest",
  "MethodNotAllowed",
  "NotAcceptable",
  "RequestEntityTooLarge",
  "UnsupportedMediaType",
  "InternalError",
  "Expired",
  "ServiceUnavailable",
]);

function statusOf(error: unknown): { reason: string; code: number } | undefined {
  if (StatusError.isInstance(error)) return error.status;
  return undefined;
}

function matches(error: unknown, reason: StatusReason, code?: number): boolean {
  const status = statusOf(error);
  if (status === undefined) return false;
  if (status.reason === reason) return true;
  return code !== undefined && !knownReasons.has(status.reason) && status.code === code;
}

/** The reason of a `StatusError`, or "" for anything else (`apierrors.ReasonForError`). */
export function reasonForError(error: unknown): StatusReason | "" {
  return (statusOf(error)?.reason ?? "") as StatusReason | "";
}

export const isNotFound = (error: unknown): boolean => matches(error, "NotFound", 404);
export const isAlreadyExists = (error: unknown): boolean => matches(error, "AlreadyExists");
export const isConflict = (error: unknown): boolean => matches(error, "Conflict", 409);
export const isGone = (error: unknown): boolean => matches(error, "Gone", 410);
export const isResourceExpired = (error: unknown): boolean => matches(error, "Expired");
export const isInvalid = (error: unknown): boolean => matches(error, "Invalid", 422);
export const isBadRequest = (error: unknown): boolean => matches(error, "BadRequest", 400);
export const isTimeout = (error: unknown): boolean => matches(error, "Timeout", 504);
export const isServerTimeout = (error: unknown): boolean => matches(error, "ServerTimeout");
export const isTooManyRequests = (error: unknown): boolean => {
  if (matches(error, "TooManyRequests", 429)) return true;
  return statusOf(error)?.code === 429;
};
export const isUnauthorized = (error: unknown): boolean => matches(error, "Unauthorized", 401);
export const isForbidden = (error: unknown): boolean => matches(error, "Forbidden", 403);
export const isMethodNotSupported = (error: unknown): boolean => matches(error, "MethodNotAllowed", 405);
export const isInternalError = (error: unknown): boolean => matches(error, "InternalError", 500);
export const isRequestEntityTooLarge = (error: unknown): boolean =>
  matches(error, "RequestEntityTooLarge", 413);
export const isServiceUnavailable = (error: unknown): boolean => matches(error, "ServiceUnavailable", 503);

/**
 * Whether the error is a `StatusError` whose details name a cause of this
 * type (`apierrors.HasStatusCause`), e.g. `NamespaceTerminating` on a create
 * into a namespace being deleted.
 */
export function hasStatusCause(error: unknown, causeType: string): boolean {
  if (!StatusError.isInstance(error)) return false;
  return (error.details?.causes ?? []).some((cause) => cause.reason === causeType);
}

/** The server's suggested wait, if the error carries one (`apierrors.SuggestsClientDelay`). */
export function suggestsClientDelay(error: unknown): number | undefined {
  if (!StatusError.isInstance(error)) return undefined;
  const seconds = error.status.details?.retryAfterSeconds;
  if (seconds === undefined || seconds <= 0) return undefined;
  const reason = error.status.reason;
  if (reason === "ServerTimeout" || reason === "Timeout" || reason === "TooManyRequests" || reason === "")
    return seconds;
  return error.status.code === 429 || error.status.code >= 500 ? seconds : undefined;
}
