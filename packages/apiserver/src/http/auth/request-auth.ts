import type * as http from "node:http";
import { isTrue } from "../parameters.js";
import { type Attributes, forbidden, resourceVerb } from "./attributes.js";
import { type Authentication, authenticate } from "./authenticate.js";
import { impersonate } from "./impersonation.js";
import { anonymousUser, type UserInfo } from "./user.js";

/** Subresources whose WebSocket upgrade (a GET) needs `create` too, as kube-apiserver 1.31+ checks. */
const connectSubresources = new Set(["exec", "attach", "portforward"]);

/**
 * Authenticates a request, applies impersonation, and authorizes what it
 * asks; resolves to the user it acts as. A 401 for bad credentials, a 403
 * naming what was denied. Without authentication (`authn` undefined) every
 * request is anonymous and allowed, as the server has always answered
 * loopback requests.
 */
export async function authorizeRequest(
  authn: Authentication | undefined,
  request: http.IncomingMessage,
  pathname: string,
  query: URLSearchParams,
): Promise<UserInfo> {
  if (authn === undefined) return anonymousUser;
  const { auth } = authn;
  await auth.start();
  const authorize = (attributes: Attributes) => auth.rbac.authorize(attributes);
  const user = await impersonate(request, await authenticate(request, authn), authorize);
  for (const attributes of requestAttributes(user, request.method ?? "GET", pathname, query)) {
    const decision = await authorize(attributes);
    if (!decision.allowed) {
      request.resume();
      throw forbidden(attributes, decision.reason);
    }
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
  let decoded: string[];
  try {
    decoded = segments.map(decodeURIComponent);
  } catch {
    decoded = segments;
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
  const subresource = rest.slice(2).join("/");
  const watch = isTrue(query.get("watch"));
  const verb = resourceVerb(method, name !== "", watch && name === "");
  if ((verb === "list" || verb === "watch") && name === "") {
    const exact = /(?:^|,)metadata\.name==?([^,]*)(?:,|$)/.exec(query.get("fieldSelector") ?? "");
    if (exact?.[1] !== undefined && exact[1] !== "" && !exact[1].includes("/")) name = exact[1];
  }
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
  };
  if (verb === "get" && apiGroup === "" && rest[0] === "pods" && connectSubresources.has(subresource))
    return [attributes, { ...attributes, verb: "create" }];
  return [attributes];
}
