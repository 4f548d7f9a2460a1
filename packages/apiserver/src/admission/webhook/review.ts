import { type KubeObject, StatusError } from "@reconcile/api";
import { uuidFrom } from "@reconcile/clock";
import type { AdmissionAttributes } from "../../registry/admission.js";
import type { Review } from "./transport.js";

/** The options object a review carries for each operation (`CreateOptions`…). */
const optionsKinds: Readonly<Record<string, string>> = {
  CREATE: "CreateOptions",
  UPDATE: "UpdateOptions",
  DELETE: "DeleteOptions",
};

/**
 * The `request` of an AdmissionReview v1 for `a` (upstream's
 * `CreateAdmissionObjects`). `requested`: the resource the client wrote
 * through, when `a` is its equivalent at the version the webhook asked for.
 */
export function admissionRequest(
  a: AdmissionAttributes,
  uid: string = uuidFrom(undefined),
  requested: AdmissionAttributes["resource"] = a.resource,
): Record<string, unknown> {
  const { resource } = a;
  const kindOf = (r: typeof resource) => ({ group: r.group, version: r.version, kind: r.kind });
  const gvrOf = (r: typeof resource) => ({ group: r.group, version: r.version, resource: r.plural });
  const request: Record<string, unknown> = { uid, kind: kindOf(resource), resource: gvrOf(resource) };
  if (a.subresource !== "") request.subResource = a.subresource;
  request.requestKind = kindOf(requested);
  request.requestResource = gvrOf(requested);
  if (a.subresource !== "") request.requestSubResource = a.subresource;
  if (a.name !== "") request.name = a.name;
  if (a.namespace !== "") request.namespace = a.namespace;
  request.operation = a.operation;
  const user = a.user;
  request.userInfo =
    user === undefined
      ? { username: "system:apiserver", groups: ["system:masters", "system:authenticated"] }
      : {
          username: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: [...user.groups],
          ...(user.extra && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
        };
  request.object = a.object ?? null;
  request.oldObject = a.oldObject ?? null;
  request.dryRun = a.dryRun;
  const optionsKind = optionsKinds[a.operation];
  if (optionsKind !== undefined) request.options = { kind: optionsKind, apiVersion: "meta.k8s.io/v1" };
  return request;
}

/** The review sent for `request`. */
export function admissionReview(request: Record<string, unknown>): Review {
  return { kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1", request };
}

/** What a webhook answered, checked as upstream checks it; a string says what is wrong with it. */
export interface AdmissionAnswer {
  allowed: boolean;
  status?: Record<string, unknown> | undefined;
  patch?: unknown[] | undefined;
  warnings: string[];
  /** What the webhook asks to add to the request's audit event, each key under the webhook's name. */
  auditAnnotations: [string, string][];
}

/** Reads an AdmissionReview response (upstream's `VerifyAdmissionResponse`). */
export function readAnswer(review: Review, uid: string, mutating: boolean): AdmissionAnswer | string {
  if (review.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview")
    return `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(review.apiVersion ?? "")}, Kind=${String(review.kind ?? "")}`;
  const response = review.response as Record<string, unknown> | undefined | null;
  if (response === undefined || response === null || typeof response !== "object")
    return "webhook response was absent";
  if (response.uid !== uid)
    return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? "")}`;
  const answer: AdmissionAnswer = {
    allowed: response.allowed === true,
    warnings: Array.isArray(response.warnings)
      ? response.warnings.filter((w): w is string => typeof w === "string")
      : [],
    auditAnnotations: stringEntries(response.auditAnnotations),
  };
  if (response.status !== undefined && response.status !== null && typeof response.status === "object")
    answer.status = response.status as Record<string, unknown>;
  if (response.patch !== undefined && response.patch !== null) {
    if (!mutating) return "validating webhooks may not return patches";
    if (response.patchType !== "JSONPatch")
      return `webhook returned invalid patchType: ${JSON.stringify(response.patchType ?? "")}`;
    try {
      const patch = JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8")) as unknown;
      if (!Array.isArray(patch)) return "the webhook's patch is not a JSON array";
      answer.patch = patch;
    } catch {
      return "the webhook's patch is not base64-encoded JSON";
    }
  }
  return answer;
}

/** The string-valued members of a JSON object, in order; none for anything else. */
function stringEntries(value: unknown): [string, string][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string");
}

/** A webhook's refusal as the client sees it (upstream's `webhookerrors.ToStatusErr`). */
export function denial(webhook: string, status: Record<string, unknown> | undefined): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const code = typeof status?.code === "number" && status.code >= 400 ? status.code : 400;
  const message = typeof status?.message === "string" ? status.message : "";
  const reason = typeof status?.reason === "string" ? status.reason : "";
  const text =
    message !== ""
      ? `${deniedBy}: ${message}`
      : reason !== ""
        ? `${deniedBy}: ${reason}`
        : `${deniedBy} without explanation`;
  return new StatusError({
    code,
    ...(reason !== "" ? { reason } : {}),
    message: text,
    ...(status?.details !== undefined ? { details: status.details as never } : {}),
  });
}

/** Replaces the contents of `target` with those of `source`, keeping the object's identity. */
export function replaceContents(target: KubeObject, source: KubeObject): void {
  const t = target as Record<string, unknown>;
  for (const key of Object.keys(t)) delete t[key];
  Object.assign(t, source);
}
