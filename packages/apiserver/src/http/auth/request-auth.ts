import type * as http from "node:http";
import { newForbidden } from "@reconcile/api";
import { isTrue } from "../parameters.js";
import { type Attributes, fieldRequirements, forbidden, resourceVerb } from "./attributes.js";
import { type Authentication, authenticate, type ClusterAuth } from "./authenticate.js";
import { impersonate } from "./impersonation.js";
import type { Decision } from "./rbac-authorizer.js";
import { anonymousUser, systemPrivilegedGroup, type UserInfo } from "./user.js";

/** What the request's audit learns from authentication and authorization. */
export interface AuthorizationAudit {
  /** Who authentication found (before impersonation). */
  authenticated(user: UserInfo): void;
  /** Whom the request acts as, when impersonation changed who. */
  impersonated(user: UserInfo): void;
  /** The authorizer's decision and its reason. */
  authorized(allowed: boolean, reason: string): void;
}

/** Subresources whose WebSocket upgrade (a GET) needs `create` too, as kube-apiserver 1.31+ checks. */
const connectSubresources = new Set(["exec", "attach", "portforward"]);

/**
 * Authenticates a request, applies impersonation, and authorizes what it
 * asks; resolves to the user it acts as. A 401 for bad credentials, a 403
 * naming what was denied. Without authentication (`authn` undefined) every
 * request is anonymous and allowed, as the server has always answered
 * loopback requests.
 */
export function authorizeRequest(
  authn: Authentication | undefined,
  request: http.IncomingMessage,
  pathname: string,
  query: URLSearchParams,
  audit?: AuthorizationAudit | undefined,
): UserInfo | Promise<UserInfo> {
  if (authn === undefined) {
    audit?.authenticated(anonymousUser);
    audit?.authorized(true, "");
    return anonymousUser;
  }
  const auth = authn.auth;
  if (!auth.running) return auth.start().then(() => authorizeRequest(authn, request, pathname, query, audit));
  // The common request (a token or certificate known without a lookup, no impersonation) is decided
  // without a turn of the event loop; a ServiceAccount token or impersonation takes the async path.
  const authenticated = authenticate(request, authn);
  const actAs = (u: UserInfo) => {
    audit?.authenticated(u);
    const as = impersonate(request, u, auth);
    if (audit !== undefined) {
      if (as instanceof Promise) return as.then((i) => impersonated(audit, u, i));
      impersonated(audit, u, as);
    }
    return as;
  };
  const user = authenticated instanceof Promise ? authenticated.then(actAs) : actAs(authenticated);
  if (user instanceof Promise) return user.then((u) => authorizeAs(auth, request, u, pathname, query, audit));
  return authorizeAs(auth, request, user, pathname, query, audit);
}

/** Tells the audit whom the request acts as, if impersonation changed who. */
function impersonated(audit: AuthorizationAudit, authenticated: UserInfo, user: UserInfo): UserInfo {
  if (user !== authenticated) audit.impersonated(user);
  return user;
}

/** Authorizes what the request asks as `user` (after authentication and impersonation): a 403 if denied. */
function authorizeAs(
  auth: ClusterAuth,
  request: http.IncomingMessage,
  user: UserInfo,
  pathname: string,
  query: URLSearchParams,
  audit: AuthorizationAudit | undefined,
): UserInfo | Promise<UserInfo> {
  // system:masters may do anything: nothing to work out about the request.
  if (user.groups.includes(systemPrivilegedGroup)) {
    audit?.authorized(true, "");
    return user;
  }
  const asked = requestAttributes(user, request.method ?? "GET", pathname, query);
  const judge = (attributes: Attributes, decision: Decision) => {
    // The audit records the first decision (the request's own verb), or the one that denied.
    if (audit !== undefined && (!decision.allowed || attributes === asked[0]))
      audit.authorized(decision.allowed, decision.reason);
    if (decision.allowed) return;
    request.resume();
    auth.denied(attributes, decision.reason);
    throw forbidden(attributes, decision.reason);
  };
  for (let i = 0; i < asked.length; i++) {
    const decision = auth.authorize(asked[i]!);
    if (decision instanceof Promise) {
      // The first decision of a node waits for the Node authorizer's graph.
      return (async () => {
        judge(asked[i]!, await decision);
        for (const attributes of asked.slice(i + 1)) judge(attributes, await auth.authorize(attributes));
        return user;
      })();
    }
    judge(asked[i]!, decision);
  }
  return user;
}

/**
 * What a request asks, from its path alone (upstream's `RequestInfoFactory`):
 * `/api/v1/…` and `/apis/<group>/<version>/…` are resource requests — served
 * kinds or not — with the namespace, resource, name and subresource their
 * segments give; every other path is a non-resource request.
 */
export function requestAttributes(
  user: UserInfo,
  method: string,
  pathname: string,
  query: URLSearchParams,
): Attributes[] {
  const segments = pathname.split("/").filter((s) => s !== "");
  let decoded = segments;
  if (pathname.includes("%")) {
    try {
      decoded = segments.map(decodeURIComponent);
    } catch {
      // The router answers a path it cannot decode with a 400; judge it as sent.
    }
  }
  const nonResource: Attributes = {
    user,
    resourceRequest: false,
    verb: method.toLowerCase(),
    path: pathname,
  };
  let rest: string[];
  let apiGroup: string;
  if (decoded[0] === "api" && decoded.length >= 3) {
    apiGroup = "";
    rest = decoded.slice(2);
  } else if (decoded[0] === "apis" && decoded.length >= 4) {
    apiGroup = decoded[1]!;
    rest = decoded.slice(3);
  } else return [nonResource];
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && rest[2] !== "status" && rest[2] !== "finalize") rest = rest.slice(2);
  }
  let name = rest[1] ?? "";
  // As upstream's RequestInfo: the part after the name is the subresource; what follows (a proxy's path) is not.
  const subresource = rest[2] ?? "";
  const watch = isTrue(query.get("watch"));
  const verb = resourceVerb(method, name !== "", watch && name === "");
  if (name === "") name = selectedName(verb, query.get("fieldSelector"));
  if (rest[0] === undefined) return [nonResource];
  const attributes: Attributes = {
    user,
    resourceRequest: true,
    verb,
    apiGroup,
    resource: rest[0],
    subresource,
    namespace,
    name,
    ...(verb === "list" || verb === "watch" || verb === "deletecollection"
      ? { fieldSelector: fieldRequirements(query.get("fieldSelector")) }
      : {}),
  };
  if (verb === "get" && apiGroup === "" && rest[0] === "pods" && connectSubresources.has(subresource))
    return [attributes, { ...attributes, verb: "create" }];
  return [attributes];
}

/**
 * The one object a list or watch selects with `metadata.name=<name>`, which
 * upstream's `RequestInfoFactory` takes as the request's name; "" otherwise.
 */
export function selectedName(verb: string, fieldSelector: string | null | undefined): string {
  if (verb !== "list" && verb !== "watch") return "";
  const exact = /(?:^|,)metadata\.name==?([^,]*)(?:,|$)/.exec(fieldSelector ?? "");
  return exact?.[1] !== undefined && exact[1] !== "" && !exact[1].includes("/") ? exact[1] : "";
}

/**
 * The check that a PUT or apply which turns into a create may create (upstream's
 * `withAuthorization` around create on update): a 403 `<resource> "<name>" is
 * forbidden: <reason>` unless `user` may `create` the object too. Undefined
 * when nothing is to be checked (no authorizer, or `system:masters`).
 */
export function createAuthorization(
  auth: ClusterAuth | undefined,
  user: UserInfo,
  resource: { group: string; plural: string },
  namespace: string | undefined,
  name: string,
): (() => Promise<void>) | undefined {
  if (auth === undefined || user.groups.includes(systemPrivilegedGroup)) return undefined;
  const attributes: Attributes = {
    user,
    resourceRequest: true,
    verb: "create",
    apiGroup: resource.group,
    resource: resource.plural,
    subresource: "",
    namespace: namespace ?? "",
    name,
  };
  return async () => {
    const decision = await auth.authorize(attributes);
    if (!decision.allowed)
      throw newForbidden({ group: resource.group, resource: resource.plural }, name, decision.reason);
  };
}
