import type { InProcessIdentity, InProcessRequest } from "../../registry/in-process-client.js";
import { type Attributes, fieldRequirements, forbidden } from "./attributes.js";
import type { ClusterAuth } from "./authenticate.js";
import { rbacEscalationCheck } from "./escalation.js";
import type { Decision } from "./rbac-authorizer.js";
import { selectedName } from "./request-auth.js";
import { allAuthenticated, type UserInfo } from "./user.js";

/** Who an in-process client acts as: a user name, and the groups it is in. */
export interface ClientUser {
  username: string;
  uid?: string | undefined;
  groups?: readonly string[] | undefined;
  extra?: Record<string, string[]> | undefined;
}

/**
 * The identity of an in-process client acting as `user`: each call judged by
 * the server's authorizer chain as the same call over HTTP would be (a 403
 * with kube-apiserver's text when denied), and each write admitted as that
 * user's. The user is in `system:authenticated`, as every authenticator adds.
 */
export function inProcessIdentity(auth: ClusterAuth, given: ClientUser): InProcessIdentity {
  const groups = [...(given.groups ?? [])];
  if (!groups.includes(allAuthenticated)) groups.push(allAuthenticated);
  const user: UserInfo = {
    username: given.username,
    groups,
    ...(given.uid === undefined ? {} : { uid: given.uid }),
    ...(given.extra === undefined ? {} : { extra: given.extra }),
  };
  return {
    user,
    authorize(request: InProcessRequest) {
      const attributes = requestAttributesOf(user, request);
      const judge = (decision: Decision) => {
        if (decision.allowed) return;
        auth.denied(attributes, decision.reason);
        throw forbidden(attributes, decision.reason);
      };
      const decision = auth.authorize(attributes);
      return decision instanceof Promise ? decision.then(judge) : judge(decision);
    },
    admit: (resource) => rbacEscalationCheck(auth, user, resource),
  };
}

function requestAttributesOf(user: UserInfo, request: InProcessRequest): Attributes {
  const { verb, resource, subresource, namespace } = request;
  const listing = verb === "list" || verb === "watch" || verb === "deletecollection";
  return {
    user,
    resourceRequest: true,
    verb,
    apiGroup: resource.group,
    resource: resource.plural,
    subresource,
    namespace,
    name: request.name || selectedName(verb, request.fieldSelector),
    ...(listing ? { fieldSelector: fieldRequirements(request.fieldSelector) } : {}),
  };
}
