import type * as http from "node:http";
import { StatusError } from "@reconcile/api";
import { type Attributes, forbidden } from "./attributes.js";
import type { Decision } from "./rbac-authorizer.js";
import {
  allAuthenticated,
  allUnauthenticated,
  anonymousUsername,
  serviceAccountGroups,
  splitServiceAccountUsername,
  type UserInfo,
} from "./user.js";

const extraPrefix = "impersonate-extra-";

/**
 * kube-apiserver's impersonation filter: `Impersonate-User`,
 * `Impersonate-Group` (repeatable), `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` make the request act as another user, once the
 * real user may `impersonate` each of them (users, or serviceaccounts for a
 * ServiceAccount's name; groups; uids and userextras in
 * authentication.k8s.io). Without those headers the user is unchanged.
 */
export function impersonate(
  request: http.IncomingMessage,
  user: UserInfo,
  authorizer: { authorize(attributes: Attributes): Decision | Promise<Decision> },
): UserInfo | Promise<UserInfo> {
  // Most requests impersonate no one: look for the prefix before building the per-header lists.
  for (const name in request.headers)
    if (name.startsWith("impersonate-")) return impersonated(request, user, authorizer);
  return user;
}

async function impersonated(
  request: http.IncomingMessage,
  user: UserInfo,
  authorizer: { authorize(attributes: Attributes): Decision | Promise<Decision> },
): Promise<UserInfo> {
  const headers = request.headersDistinct;
  const username = headers["impersonate-user"]?.[0];
  const groups = headers["impersonate-group"] ?? [];
  const uid = headers["impersonate-uid"]?.[0];
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) {
    if (!name.startsWith(extraPrefix) || values === undefined) continue;
    extra[decodeExtraKey(name.slice(extraPrefix.length))] = values;
  }
  const hasOthers = groups.length > 0 || uid !== undefined || Object.keys(extra).length > 0;
  if (username === undefined) {
    if (!hasOthers) return user;
    throw new StatusError({
      code: 500,
      reason: "InternalError",
      message:
        "Internal error occurred: requested impersonation of groups, a uid or extra fields without impersonating a user",
    });
  }
  const check = async (
    attributes: Omit<Attributes & { resourceRequest: true }, "user" | "resourceRequest" | "verb">,
  ) => {
    const asked: Attributes = { ...attributes, user, resourceRequest: true, verb: "impersonate" };
    const decision = await authorizer.authorize(asked);
    if (!decision.allowed) throw forbidden(asked, decision.reason);
  };
  const serviceAccount = splitServiceAccountUsername(username);
  if (serviceAccount !== undefined)
    await check({
      apiGroup: "",
      resource: "serviceaccounts",
      subresource: "",
      namespace: serviceAccount.namespace,
      name: serviceAccount.name,
    });
  else await check({ apiGroup: "", resource: "users", subresource: "", namespace: "", name: username });
  for (const group of groups)
    await check({ apiGroup: "", resource: "groups", subresource: "", namespace: "", name: group });
  if (uid !== undefined)
    await check({
      apiGroup: "authentication.k8s.io",
      resource: "uids",
      subresource: "",
      namespace: "",
      name: uid,
    });
  for (const [key, values] of Object.entries(extra))
    for (const value of values)
      await check({
        apiGroup: "authentication.k8s.io",
        resource: "userextras",
        subresource: key,
        namespace: "",
        name: value,
      });

  const actingGroups = [...groups];
  if (serviceAccount !== undefined && groups.length === 0)
    actingGroups.push(...serviceAccountGroups(serviceAccount.namespace));
  if (username === anonymousUsername) {
    if (!actingGroups.includes(allUnauthenticated)) actingGroups.push(allUnauthenticated);
  } else if (!actingGroups.includes(allAuthenticated)) actingGroups.push(allAuthenticated);
  return {
    username,
    ...(uid === undefined ? {} : { uid }),
    groups: actingGroups,
    ...(Object.keys(extra).length === 0 ? {} : { extra }),
  };
}

/** Extra keys are percent-encoded in header names (`Impersonate-Extra-example.com%2fscopes`). */
function decodeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}
