import { newBadRequest } from "@reconcile/api";

/** The paths of the two reviews a client asks about itself. */
export const selfSubjectReviewPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
export const selfSubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/** Who a request is, as the server authenticates it: the token's user, or anonymous without a token. */
export interface RequestUser {
  username: string;
  groups: string[];
}

/** The user a bearer token stands for, and anonymous (kube's names) for a server without a token. */
export function requestUser(tokenRequired: boolean): RequestUser {
  return tokenRequired
    ? { username: "reconcile-admin", groups: ["system:masters", "system:authenticated"] }
    : { username: "system:anonymous", groups: ["system:unauthenticated"] };
}

/**
 * `kubectl auth whoami` (POST `SelfSubjectReview`): the user the request
 * authenticated as, echoed as kube-apiserver's `selfsubjectreviews` does.
 */
export function selfSubjectReview(user: RequestUser): Record<string, unknown> {
  return {
    kind: "SelfSubjectReview",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: user.username, groups: user.groups } },
  };
}

/**
 * `kubectl auth can-i` (POST `SelfSubjectAccessReview`): the server has no
 * authorization layer, so whatever an authenticated request asks is allowed,
 * and `reason` says why. The spec is echoed from a JSON body; a protobuf body
 * (kubectl sends one) is not decoded, so the answer has no spec then.
 */
export function selfSubjectAccessReview(body: unknown): Record<string, unknown> {
  if (body === undefined) {
    return {
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec: {},
      status: { allowed: true, reason: noAuthorizationReason },
    };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw newBadRequest("the SelfSubjectAccessReview body must be a JSON object");
  const spec = (body as { spec?: unknown }).spec;
  const attributes =
    typeof spec === "object" && spec !== null
      ? ((spec as { resourceAttributes?: unknown; nonResourceAttributes?: unknown }).resourceAttributes ??
        (spec as { nonResourceAttributes?: unknown }).nonResourceAttributes)
      : undefined;
  if (attributes === undefined)
    throw newBadRequest(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  return {
    kind: "SelfSubjectAccessReview",
    apiVersion: "authorization.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: true, reason: noAuthorizationReason },
  };
}

const noAuthorizationReason =
  "this server has no authorization layer: every authenticated request is allowed";
