import { errorMessage, type KubeObject, StatusError } from "@reconcile/api";
import { createPatch } from "./json-patch.js";

/** An `admission.k8s.io/v1` AdmissionReview's request, as the API server sends it. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
  options?: Record<string, unknown> | null;
}

/** An AdmissionReview's response. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  patchType?: "JSONPatch";
  patch?: string;
  warnings?: string[];
}

/** A whole AdmissionReview, in or out. */
export interface AdmissionReview {
  apiVersion: string;
  kind: string;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** Answers one review: what a webhook path serves. */
export type AdmissionHandler = (review: AdmissionReview) => Promise<AdmissionReview>;

/** Sets defaults on `object` in place (controller-runtime's `CustomDefaulter`). */
export type Defaulter<T extends KubeObject> = (object: T, request: AdmissionRequest) => void | Promise<void>;

/**
 * Checks an object (controller-runtime's `CustomValidator`): a step that
 * throws refuses the request with the error's message (a `StatusError`'s
 * own code and reason), one that returns strings admits it with those
 * warnings. A step left out admits.
 */
export interface Validator<T extends KubeObject> {
  validateCreate?(object: T, request: AdmissionRequest): Warnings | Promise<Warnings>;
  validateUpdate?(object: T, old: T, request: AdmissionRequest): Warnings | Promise<Warnings>;
  validateDelete?(old: T, request: AdmissionRequest): Warnings | Promise<Warnings>;
}

/** What a validation step may return: warnings, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a step with no return statement returns void; it must fit.
export type Warnings = readonly string[] | undefined | void;

function answer(review: AdmissionReview, response: Omit<AdmissionResponse, "uid">): AdmissionReview {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: review.request?.uid ?? "", ...response },
  };
}

/** A refusal as controller-runtime words it: a StatusError's own status, else 403 Forbidden with the message. */
function refusal(review: AdmissionReview, error: unknown): AdmissionReview {
  if (StatusError.isInstance(error)) {
    const { code, reason, message } = error.status;
    return answer(review, { allowed: false, status: { code, reason, message } });
  }
  return answer(review, {
    allowed: false,
    status: { code: 403, reason: "Forbidden", message: errorMessage(error) },
  });
}

function badRequest(review: AdmissionReview, message: string): AdmissionReview {
  return answer(review, { allowed: false, status: { code: 400, reason: "BadRequest", message } });
}

/** A handler that defaults objects and answers with the JSON patch of what it changed (`WithCustomDefaulter`). */
export function defaultingHandler<T extends KubeObject>(defaulter: Defaulter<T>): AdmissionHandler {
  return async (review) => {
    const request = review.request;
    if (request === undefined) return badRequest(review, "the AdmissionReview has no request");
    // Deletes carry no object to default.
    if (request.operation === "DELETE" || request.object == null) return answer(review, { allowed: true });
    const original = request.object;
    const object = structuredClone(original) as T;
    try {
      await defaulter(object, request);
    } catch (error) {
      return refusal(review, error);
    }
    const patch = createPatch(original, object);
    if (patch.length === 0) return answer(review, { allowed: true });
    return answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
    });
  };
}

/** A handler that runs the validator's step for the request's operation (`WithCustomValidator`). */
export function validatingHandler<T extends KubeObject>(validator: Validator<T>): AdmissionHandler {
  return async (review) => {
    const request = review.request;
    if (request === undefined) return badRequest(review, "the AdmissionReview has no request");
    let warnings: Warnings;
    try {
      switch (request.operation) {
        case "CREATE":
          warnings = await validator.validateCreate?.(request.object as T, request);
          break;
        case "UPDATE":
          warnings = await validator.validateUpdate?.(request.object as T, request.oldObject as T, request);
          break;
        case "DELETE":
          warnings = await validator.validateDelete?.(request.oldObject as T, request);
          break;
        default:
          break;
      }
    } catch (error) {
      return refusal(review, error);
    }
    const list = warnings ? [...warnings] : [];
    return answer(review, list.length > 0 ? { allowed: true, warnings: list } : { allowed: true });
  };
}
