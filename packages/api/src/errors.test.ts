import { describe, expect, it } from "vitest";
import {
  errorMessage,
  hasStatusCause,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isMethodNotSupported,
  isNotFound,
  isRequestEntityTooLarge,
  isResourceExpired,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newForbidden,
  newGone,
  newInternalError,
  newInvalid,
  newMethodNotSupported,
  newNotFound,
  newRequestEntityTooLarge,
  newResourceExpired,
  newServerTimeout,
  newServiceUnavailable,
  newTimeout,
  newTooManyRequests,
  newUnauthorized,
  newUnsupportedMediaType,
  optimisticLockErrorMsg,
  ReconcileError,
  reasonForError,
  StatusError,
  suggestsClientDelay,
} from "./errors.js";

const pods = { group: "", resource: "pods" };
const replicaSets = { group: "apps", resource: "replicasets" };

const predicates = {
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isResourceExpired,
  isInvalid,
  isBadRequest,
  isTimeout,
  isServerTimeout,
  isTooManyRequests,
  isUnauthorized,
  isForbidden,
  isMethodNotSupported,
  isInternalError,
  isRequestEntityTooLarge,
  isServiceUnavailable,
};
type PredicateName = keyof typeof predicates;

describe("StatusError constructors", () => {
  it.each<[string, StatusError, number, string, string, PredicateName | undefined]>([
    ["newNotFound", newNotFound(pods, "web"), 404, "NotFound", 'pods "web" not found', "isNotFound"],
    [
      "newAlreadyExists",
      newAlreadyExists(replicaSets, "web"),
      409,
      "AlreadyExists",
      'replicasets.apps "web" already exists',
      "isAlreadyExists",
    ],
    [
      "newConflict",
      newConflict(replicaSets, "web"),
      409,
      "Conflict",
      `Operation cannot be fulfilled on replicasets.apps "web": ${optimisticLockErrorMsg}`,
      "isConflict",
    ],
    [
      "newConflict with a reason",
      newConflict(pods, "web", "precondition failed"),
      409,
      "Conflict",
      'Operation cannot be fulfilled on pods "web": precondition failed',
      "isConflict",
    ],
    ["newGone", newGone("too old"), 410, "Gone", "too old", "isGone"],
    [
      "newResourceExpired",
      newResourceExpired("too old resource version: 1 (5)"),
      410,
      "Expired",
      "too old resource version: 1 (5)",
      "isResourceExpired",
    ],
    [
      "newInvalid with no field errors",
      newInvalid({ group: "", kind: "Pod" }, "web", []),
      422,
      "Invalid",
      'Pod "web" is invalid',
      "isInvalid",
    ],
    [
      "newInvalid with one field error",
      newInvalid({ group: "apps", kind: "Deployment" }, "web", [
        {
          type: "FieldValueInvalid",
          field: "spec.replicas",
          message: "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        },
      ]),
      422,
      "Invalid",
      'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      "isInvalid",
    ],
    [
      "newInvalid with two field errors",
      newInvalid({ group: "", kind: "Pod" }, "web", [
        { type: "FieldValueRequired", field: "spec.containers", message: "spec.containers: Required value" },
        { type: "FieldValueRequired", field: "metadata.name", message: "metadata.name: Required value" },
      ]),
      422,
      "Invalid",
      'Pod "web" is invalid: [spec.containers: Required value, metadata.name: Required value]',
      "isInvalid",
    ],
    ["newBadRequest", newBadRequest("bad"), 400, "BadRequest", "bad", "isBadRequest"],
    ["newTimeout", newTimeout("slow", 3), 504, "Timeout", "Timeout: slow", "isTimeout"],
    [
      "newServerTimeout",
      newServerTimeout(pods, "list", 2),
      500,
      "ServerTimeout",
      "The list operation against pods could not be completed at this time, please try again.",
      "isServerTimeout",
    ],
    [
      "newTooManyRequests",
      newTooManyRequests("slow down", 1),
      429,
      "TooManyRequests",
      "Too many requests: slow down",
      "isTooManyRequests",
    ],
    [
      "newInternalError",
      newInternalError(new Error("boom")),
      500,
      "InternalError",
      "Internal error occurred: boom",
      "isInternalError",
    ],
    [
      "newMethodNotSupported",
      newMethodNotSupported(pods, "patch"),
      405,
      "MethodNotAllowed",
      'patch is not supported on resources of kind "pods"',
      "isMethodNotSupported",
    ],
    ["newUnauthorized", newUnauthorized(), 401, "Unauthorized", "Unauthorized", "isUnauthorized"],
    [
      "newForbidden",
      newForbidden(pods, "web", "no access"),
      403,
      "Forbidden",
      'pods "web" is forbidden: no access',
      "isForbidden",
    ],
    [
      "newRequestEntityTooLarge",
      newRequestEntityTooLarge("limit is 3MB"),
      413,
      "RequestEntityTooLarge",
      "Request entity too large: limit is 3MB",
      "isRequestEntityTooLarge",
    ],
    [
      "newUnsupportedMediaType",
      newUnsupportedMediaType("text/plain"),
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
      undefined,
    ],
    [
      "newServiceUnavailable",
      newServiceUnavailable("down"),
      503,
      "ServiceUnavailable",
      "down",
      "isServiceUnavailable",
    ],
  ])("%s has its code, reason and message, and only its own predicate holds", (_name, error, code, reason, message, own) => {
    expect(error.statusCode).toBe(code);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(message);
    expect(error.code).toBe(code);
    expect(error.errorCode).toBe(`status.${reason}`);
    expect(error.status).toMatchObject({
      apiVersion: "v1",
      kind: "Status",
      status: "Failure",
      code,
      reason,
      message,
    });
    expect(reasonForError(error)).toBe(reason);
    expect(StatusError.isInstance(error)).toBe(true);
    expect(ReconcileError.isInstance(error)).toBe(true);
    for (const [name, predicate] of Object.entries(predicates)) {
      expect({ name, holds: predicate(error) }).toEqual({ name, holds: name === own });
    }
  });

  it("carries details: names, causes and retry hints", () => {
    expect(newNotFound(replicaSets, "web").details).toEqual({
      name: "web",
      group: "apps",
      kind: "replicasets",
    });
    expect(
      newInvalid({ group: "", kind: "Pod" }, "web", [
        { type: "FieldValueRequired", field: "spec.containers", message: "spec.containers: Required value" },
      ]).details,
    ).toEqual({
      name: "web",
      group: "",
      kind: "Pod",
      causes: [
        {
          reason: "FieldValueRequired",
          field: "spec.containers",
          // The field is the cause's own property; its message is apimachinery's ErrorBody.
          message: "Required value",
        },
      ],
    });
    expect(newTimeout("x", 7).details).toEqual({ retryAfterSeconds: 7 });
    const cause = new Error("boom");
    const internal = newInternalError(cause);
    expect(internal.cause).toBe(cause);
    expect(internal.details).toEqual({ causes: [{ message: "boom" }] });
    expect(newInternalError("text").message).toBe("Internal error occurred: text");
  });
});

describe("StatusError predicates", () => {
  it("fall back on the code when the reason is not one Kubernetes defines", () => {
    const custom = (code: number) => new StatusError({ code, reason: "SomethingNew" });
    expect(isNotFound(custom(404))).toBe(true);
    expect(isConflict(custom(409))).toBe(true);
    expect(isGone(custom(410))).toBe(true);
    expect(isInvalid(custom(422))).toBe(true);
    expect(isBadRequest(custom(400))).toBe(true);
    expect(isTimeout(custom(504))).toBe(true);
    expect(isUnauthorized(custom(401))).toBe(true);
    expect(isForbidden(custom(403))).toBe(true);
    expect(isMethodNotSupported(custom(405))).toBe(true);
    expect(isInternalError(custom(500))).toBe(true);
    expect(isRequestEntityTooLarge(custom(413))).toBe(true);
    expect(isServiceUnavailable(custom(503))).toBe(true);
    expect(isAlreadyExists(custom(409))).toBe(false);
    expect(isResourceExpired(custom(410))).toBe(false);
  });

  it("do not fall back on the code when the reason is a known different one", () => {
    expect(isNotFound(new StatusError({ code: 404, reason: "Conflict" }))).toBe(false);
    expect(isGone(newResourceExpired("x"))).toBe(false);
  });

  it("isTooManyRequests holds for any 429", () => {
    expect(isTooManyRequests(new StatusError({ code: 429, reason: "Forbidden" }))).toBe(true);
  });

  it("are false for anything that is not a StatusError", () => {
    for (const value of [
      new Error("NotFound"),
      "NotFound",
      undefined,
      null,
      { reason: "NotFound", code: 404 },
    ]) {
      for (const predicate of Object.values(predicates)) expect(predicate(value)).toBe(false);
      expect(reasonForError(value)).toBe("");
    }
  });

  it("recognise a StatusError from another copy of the package by its marker", () => {
    const foreign = Object.assign(Object.create(null), {
      [Symbol.for("reconcile.error")]: true,
      [Symbol.for("reconcile.status-error")]: true,
      status: { code: 404, reason: "NotFound" },
    });
    expect(isNotFound(foreign)).toBe(true);
  });

  it("a status without message or code still gives a readable error", () => {
    const error = new StatusError({ reason: "NotFound" });
    expect(error.message).toBe("the server responded with code 0");
    expect(error.statusCode).toBe(0);
    expect(error.code).toBe(0);
    expect(new StatusError({}).errorCode).toBe("status.Unknown");
  });

  it("code is the HTTP status code, as client-go's ErrStatus.Code and client-node's ApiException.code", () => {
    const error = newConflict({ group: "apps", resource: "replicasets" }, "web");
    expect(error.code).toBe(409);
    expect(error.reason).toBe("Conflict");
    expect(error.errorCode).toBe("status.Conflict");
    const caught: unknown = error;
    expect(ReconcileError.isInstance(caught) && caught.code === 409).toBe(true);
    expect(StatusError.isInstance(caught) && caught.code === 409).toBe(true);
  });
});

describe("suggestsClientDelay", () => {
  it.each<[string, unknown, number | undefined]>([
    ["a Timeout with retryAfterSeconds", newTimeout("x", 3), 3],
    ["a ServerTimeout with retryAfterSeconds", newServerTimeout(pods, "get", 2), 2],
    ["a TooManyRequests with retryAfterSeconds", newTooManyRequests("x", 1), 1],
    ["a Timeout without a delay", newTimeout("x"), undefined],
    [
      "a 503 with a delay",
      new StatusError({ code: 503, reason: "ServiceUnavailable", details: { retryAfterSeconds: 4 } }),
      4,
    ],
    [
      "a 404 with a delay",
      new StatusError({ code: 404, reason: "NotFound", details: { retryAfterSeconds: 4 } }),
      undefined,
    ],
    ["a plain error", new Error("x"), undefined],
  ])("%s → %s", (_name, error, expected) => {
    expect(suggestsClientDelay(error)).toBe(expected);
  });
});

describe("errorMessage", () => {
  it("is an Error's message, or the thrown value as a string", () => {
    expect(errorMessage(new TypeError("bad input"))).toBe("bad input");
    expect(errorMessage(newNotFound({ group: "", resource: "pods" }, "web"))).toBe('pods "web" not found');
    expect(errorMessage("plain text")).toBe("plain text");
    expect(errorMessage(42)).toBe("42");
    expect(errorMessage(undefined)).toBe("undefined");
  });
});

describe("hasStatusCause (apierrors.HasStatusCause)", () => {
  it("finds a cause by type in a StatusError's details, and nothing in anything else", () => {
    const terminating = new StatusError({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      message:
        'pods "p" is forbidden: unable to create new content in namespace ns because it is being terminated',
      details: {
        causes: [
          {
            reason: "NamespaceTerminating",
            message: "namespace ns is being terminated",
            field: "metadata.namespace",
          },
        ],
      },
    });
    expect(hasStatusCause(terminating, "NamespaceTerminating")).toBe(true);
    expect(hasStatusCause(terminating, "FieldValueInvalid")).toBe(false);
    expect(hasStatusCause(new Error("NamespaceTerminating"), "NamespaceTerminating")).toBe(false);
    expect(hasStatusCause(undefined, "NamespaceTerminating")).toBe(false);
  });
});
