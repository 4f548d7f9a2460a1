import {
  newBadRequest,
  newInvalid,
  newNotFound,
  nodes,
  pods,
  rfc3339,
  secrets,
  serviceAccounts,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { builtinDecoderSchema, typeProblem } from "../../registry/schema.js";
import { withoutNulls } from "../../registry/store/decode.js";
import { builtinDefinitionName } from "../../schemas/kind-schema.js";
import { type Attributes, fieldRequirements } from "./attributes.js";
import { type Authentication, authenticate } from "./authenticate.js";
import type { TokenBinding } from "./tokens.js";
import type { UserInfo } from "./user.js";

// The create-only kinds of authentication.k8s.io and authorization.k8s.io
// (and serviceaccounts/token): nothing is stored, each POST is answered from
// the authenticator, the authorizer or the token issuer.

/** A review path this module answers, and how: by kind, with the namespace of a namespaced one. */
export type ReviewRoute =
  | {
      kind:
        | "SelfSubjectReview"
        | "SelfSubjectAccessReview"
        | "SelfSubjectRulesReview"
        | "SubjectAccessReview"
        | "TokenReview";
    }
  | { kind: "LocalSubjectAccessReview"; namespace: string }
  | { kind: "TokenRequest"; namespace: string; name: string };

const reviewPaths: Record<string, ReviewRoute["kind"]> = {
  "/apis/authentication.k8s.io/v1/selfsubjectreviews": "SelfSubjectReview",
  "/apis/authentication.k8s.io/v1/tokenreviews": "TokenReview",
  "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews": "SelfSubjectAccessReview",
  "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews": "SelfSubjectRulesReview",
  "/apis/authorization.k8s.io/v1/subjectaccessreviews": "SubjectAccessReview",
};

/** The review a POST path names, if any. */
export function reviewRoute(pathname: string): ReviewRoute | undefined {
  const kind = reviewPaths[pathname];
  if (kind !== undefined) return { kind } as ReviewRoute;
  const local = /^\/apis\/authorization\.k8s\.io\/v1\/namespaces\/([^/]+)\/localsubjectaccessreviews$/.exec(
    pathname,
  );
  if (local) return { kind: "LocalSubjectAccessReview", namespace: decodeURIComponent(local[1]!) };
  const token = /^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)\/token$/.exec(pathname);
  if (token)
    return {
      kind: "TokenRequest",
      namespace: decodeURIComponent(token[1]!),
      name: decodeURIComponent(token[2]!),
    };
  return undefined;
}

/** The review a create of `group`/`plural` (in `namespace`) is, if any: how an in-process client reaches them. */
export function reviewRouteOf(
  group: string,
  plural: string,
  namespace: string | undefined,
): ReviewRoute | undefined {
  // Asked on every in-process create: every other group is answered without building a path.
  if (group !== "authorization.k8s.io" && group !== "authentication.k8s.io") return undefined;
  const kind = reviewPaths[`/apis/${group}/v1/${plural}`];
  if (kind !== undefined) return { kind } as ReviewRoute;
  if (group === "authorization.k8s.io" && plural === "localsubjectaccessreviews" && namespace !== undefined)
    return { kind: "LocalSubjectAccessReview", namespace };
  return undefined;
}

/** The protobuf message of a review kind (kubectl sends these as protobuf). */
export function reviewMessageOf(apiVersion: string, kind: string): string | undefined {
  if (apiVersion === "authorization.k8s.io/v1" && kind === "LocalSubjectAccessReview")
    return "SubjectAccessReview";
  if (apiVersion === "authorization.k8s.io/v1" || apiVersion === "authentication.k8s.io/v1") return kind;
  return undefined;
}

const groupVersion: Record<ReviewRoute["kind"], string> = {
  SelfSubjectReview: "authentication.k8s.io/v1",
  TokenReview: "authentication.k8s.io/v1",
  SelfSubjectAccessReview: "authorization.k8s.io/v1",
  SelfSubjectRulesReview: "authorization.k8s.io/v1",
  SubjectAccessReview: "authorization.k8s.io/v1",
  LocalSubjectAccessReview: "authorization.k8s.io/v1",
  TokenRequest: "authentication.k8s.io/v1",
};

type Json = Record<string, unknown>;

/** What answering a review needs. */
export interface ReviewContext {
  authn: Authentication | undefined;
  /** The server's own client, for TokenRequest's lookups; there is none without authentication. */
  client: Client | undefined;
  now: number;
}

/** Answers one review POST: the body with its status, as kube-apiserver returns it (201). */
export async function answerReview(
  route: ReviewRoute,
  body: unknown,
  user: UserInfo,
  context: ReviewContext,
): Promise<Json> {
  const object = decodeReview(body, route.kind);
  const spec = asObject(object.spec ?? {}, `${route.kind} spec`);
  const head = {
    kind: route.kind,
    apiVersion: groupVersion[route.kind],
    metadata: { ...(asObject(object.metadata ?? {}, "metadata") as Json), creationTimestamp: null },
  };
  switch (route.kind) {
    case "SelfSubjectReview":
      return { ...head, status: { userInfo: userInfoJson(user) } };
    case "SelfSubjectAccessReview": {
      const attributes = accessAttributes(spec, user, route.kind);
      return { ...head, spec, status: await decisionJson(context, attributes) };
    }
    case "SubjectAccessReview":
    case "LocalSubjectAccessReview": {
      const subject = subjectOf(spec, route.kind);
      const resource = spec.resourceAttributes as Json | undefined;
      if (route.kind === "LocalSubjectAccessReview" && (resource?.namespace ?? "") !== route.namespace)
        throw newBadRequest(`spec.resourceAttributes.namespace must match namespace: ${route.namespace}`);
      const attributes = accessAttributes(spec, subject, route.kind);
      const metadata =
        route.kind === "LocalSubjectAccessReview"
          ? { ...head.metadata, namespace: route.namespace }
          : head.metadata;
      return { ...head, metadata, spec, status: await decisionJson(context, attributes) };
    }
    case "SelfSubjectRulesReview": {
      const namespace = typeof spec.namespace === "string" ? spec.namespace : "";
      if (namespace === "")
        throw newInvalid({ group: "authorization.k8s.io", kind: "SelfSubjectRulesReview" }, "", [
          { type: "FieldValueRequired", field: "spec.namespace", message: "spec.namespace: Required value" },
        ]);
      const rules =
        context.authn === undefined
          ? {
              resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
              nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
            }
          : await context.authn.auth.rbac.rulesFor(user, namespace);
      return { ...head, spec, status: { ...rules, incomplete: false } };
    }
    case "TokenReview":
      return { ...head, spec, status: await tokenReviewStatus(context, spec) };
    case "TokenRequest":
      return tokenRequest(route, head.metadata, spec, context);
  }
}

/** The body read as its kind's Go type, as kube-apiserver's decoder reads it: a wrongly typed field is a 400, null is absent. */
function decodeReview(body: unknown, kind: ReviewRoute["kind"]): Json {
  const object = asObject(body, kind);
  const [group] = groupVersion[kind].split("/");
  const definition = builtinDefinitionName(group!, "v1", kind);
  const problem =
    definition === undefined ? undefined : typeProblem(object, builtinDecoderSchema(definition), "");
  if (problem !== undefined)
    throw newBadRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${problem}`);
  return withoutNulls(object) as Json;
}

function asObject(value: unknown, what: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw newBadRequest(`the ${what} body must be a JSON object`);
  return value as Json;
}

function userInfoJson(user: UserInfo): Json {
  return {
    username: user.username,
    ...(user.uid === undefined ? {} : { uid: user.uid }),
    groups: user.groups,
    ...(user.extra === undefined ? {} : { extra: user.extra }),
  };
}

function subjectOf(spec: Json, kind: string): UserInfo {
  const username = typeof spec.user === "string" ? spec.user : "";
  const groups = Array.isArray(spec.groups) ? spec.groups.map(String) : [];
  if (username === "" && groups.length === 0)
    throw newInvalid({ group: "authorization.k8s.io", kind }, "", [
      {
        type: "FieldValueInvalid",
        field: "spec.user",
        message: 'spec.user: Invalid value: "": at least one of user or group must be specified',
      },
    ]);
  const extra =
    typeof spec.extra === "object" && spec.extra !== null
      ? (spec.extra as Record<string, string[]>)
      : undefined;
  return {
    username,
    ...(typeof spec.uid === "string" && spec.uid !== "" ? { uid: spec.uid } : {}),
    groups,
    ...(extra === undefined ? {} : { extra }),
  };
}

/** The attributes a review asks about (exactly one of resourceAttributes and nonResourceAttributes). */
function accessAttributes(spec: Json, user: UserInfo, kind: string): Attributes {
  const resource = spec.resourceAttributes as Json | undefined;
  const nonResource = spec.nonResourceAttributes as Json | undefined;
  if ((resource === undefined) === (nonResource === undefined))
    throw newInvalid({ group: "authorization.k8s.io", kind }, "", [
      {
        type: "FieldValueInvalid",
        field: "spec.resourceAttributes",
        message: `spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
      },
    ]);
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  if (nonResource !== undefined)
    return { user, resourceRequest: false, verb: text(nonResource.verb), path: text(nonResource.path) };
  return {
    user,
    resourceRequest: true,
    verb: text(resource!.verb),
    apiGroup: text(resource!.group),
    resource: text(resource!.resource),
    subresource: text(resource!.subresource),
    namespace: text(resource!.namespace),
    name: text(resource!.name),
    fieldSelector: fieldRequirements(text((resource!.fieldSelector as Json | undefined)?.rawSelector)),
  };
}

async function decisionJson(context: ReviewContext, attributes: Attributes): Promise<Json> {
  if (context.authn === undefined)
    return { allowed: true, reason: "this server runs without authentication: every request is allowed" };
  const decision = await context.authn.auth.authorize(attributes);
  return { allowed: decision.allowed, ...(decision.reason === "" ? {} : { reason: decision.reason }) };
}

async function tokenReviewStatus(context: ReviewContext, spec: Json): Promise<Json> {
  const token = typeof spec.token === "string" ? spec.token : "";
  const authn = context.authn;
  if (authn === undefined || token === "") return { user: {}, error: "[invalid bearer token]" };
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0
      ? spec.audiences.map(String)
      : authn.auth.audiences;
  try {
    const fake = { headers: { authorization: `Bearer ${token}` }, socket: {} } as never;
    const user = await authenticate(fake, authn);
    return { authenticated: true, user: userInfoJson(user), audiences };
  } catch {
    return { user: {}, error: "[invalid bearer token, token lookup failed]" };
  }
}

/**
 * `POST serviceaccounts/<name>/token` (upstream's TokenREST): a token for the
 * ServiceAccount, for the API audience unless others are asked for, valid
 * `expirationSeconds` (default one hour, at least ten minutes), optionally
 * bound to a pod or secret of the namespace.
 */
async function tokenRequest(
  route: Extract<ReviewRoute, { kind: "TokenRequest" }>,
  metadata: Json,
  spec: Json,
  context: ReviewContext,
): Promise<Json> {
  const authn = context.authn;
  const client = context.client;
  if (authn === undefined || client === undefined)
    throw newBadRequest("this server runs without authentication, so it issues no ServiceAccount tokens");
  const { namespace, name } = route;
  const account = await client
    .resource(serviceAccounts, namespace)
    .get(name)
    .catch(() => undefined);
  if (account === undefined) throw newNotFound({ group: "", resource: "serviceaccounts" }, name);
  const expirationSeconds = spec.expirationSeconds === undefined ? 3600 : Number(spec.expirationSeconds);
  // Upstream's ValidateTokenRequest: ten minutes at least, 2^32 seconds at most.
  const tooShort = !Number.isInteger(expirationSeconds) || expirationSeconds < 600;
  if (tooShort || expirationSeconds > 2 ** 32)
    throw newInvalid({ group: "authentication.k8s.io", kind: "TokenRequest" }, name, [
      {
        type: "FieldValueInvalid",
        field: "spec.expirationSeconds",
        message: `spec.expirationSeconds: Invalid value: ${spec.expirationSeconds}: ${tooShort ? "may not specify a duration less than 10 minutes" : "may not specify a duration larger than 2^32 seconds"}`,
      },
    ]);
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0
      ? spec.audiences.map(String)
      : [...authn.auth.audiences];
  const { boundObject, node } = await boundObjectOf(
    client,
    namespace,
    spec.boundObjectRef as Json | undefined,
  );
  const { token, expiresAt } = authn.auth.tokens.issue(
    {
      namespace,
      serviceAccount: { name, uid: account.metadata?.uid ?? "" },
      audiences,
      expirationSeconds,
      boundObject,
      node,
    },
    context.now,
  );
  return {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { ...metadata, name, namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token, expirationTimestamp: rfc3339(expiresAt) },
  };
}

async function boundObjectOf(
  client: Client,
  namespace: string,
  ref: Json | undefined,
): Promise<{ boundObject?: TokenBinding; node?: { name: string; uid: string } }> {
  if (ref === undefined || ref === null) return {};
  const kind = String(ref.kind ?? "");
  const name = String(ref.name ?? "");
  const invalid = (message: string) =>
    newInvalid({ group: "authentication.k8s.io", kind: "TokenRequest" }, "", [
      { type: "FieldValueInvalid", field: "spec.boundObjectRef", message: `spec.boundObjectRef: ${message}` },
    ]);
  const lookup =
    kind === "Pod"
      ? client.resource(pods, namespace).get(name)
      : kind === "Secret"
        ? client.resource(secrets, namespace).get(name)
        : kind === "Node"
          ? client.resource(nodes).get(name)
          : undefined;
  if (lookup === undefined)
    throw invalid(`Unsupported value: ${JSON.stringify(kind)}: supported values: "Pod", "Secret", "Node"`);
  const object = await lookup.catch(() => undefined);
  if (object === undefined) throw newNotFound({ group: "", resource: `${kind.toLowerCase()}s` }, name);
  const uid = object.metadata?.uid ?? "";
  if (ref.uid !== undefined && ref.uid !== "" && ref.uid !== uid)
    throw newBadRequest(
      `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  const boundObject: TokenBinding = { kind: kind as TokenBinding["kind"], name, uid };
  if (kind !== "Pod") return { boundObject };
  const nodeName = (object as { spec?: { nodeName?: string } }).spec?.nodeName;
  if (!nodeName) return { boundObject };
  const node = await client
    .resource(nodes)
    .get(nodeName)
    .catch(() => undefined);
  return {
    boundObject,
    ...(node === undefined ? {} : { node: { name: nodeName, uid: node.metadata?.uid ?? "" } }),
  };
}
