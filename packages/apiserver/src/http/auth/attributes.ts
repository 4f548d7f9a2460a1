import { type FieldRequirement, parseFieldSelector, StatusError } from "@reconcile/api";
import type { UserInfo } from "./user.js";

/**
 * What a request asks to do (upstream's `authorizer.Attributes`): a verb on
 * a resource (its API group, namespace, name and subresource) or on a
 * non-resource path (`/version`, `/healthz`…).
 */
export type Attributes = ResourceAttributes | NonResourceAttributes;

export interface ResourceAttributes {
  user: UserInfo;
  resourceRequest: true;
  verb: string;
  apiGroup: string;
  /** The plural resource (`pods`). */
  resource: string;
  subresource: string;
  /** "" for a cluster-scoped request, or one across all namespaces. */
  namespace: string;
  name: string;
  /** A list's or watch's field selector, parsed (upstream's `GetFieldSelector`); absent when none or unparsable. */
  fieldSelector?: readonly FieldRequirement[] | undefined;
}

export interface NonResourceAttributes {
  user: UserInfo;
  resourceRequest: false;
  verb: string;
  path: string;
}

/** A resource request's verb from its HTTP method (upstream's `RequestInfoFactory`). */
export function resourceVerb(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case "POST":
      return "create";
    case "GET":
    case "HEAD":
      if (watch) return "watch";
      return hasName ? "get" : "list";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return hasName ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

/**
 * The 403 of a denied request, as kube-apiserver's `responsewriters.Forbidden`:
 * `pods "web" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "default"`,
 * `forbidden: User "jane" cannot get path "/api"`.
 */
export function forbidden(attributes: Attributes, reason = ""): StatusError {
  const username = JSON.stringify(attributes.user.username);
  if (!attributes.resourceRequest) {
    const text = `User ${username} cannot ${attributes.verb} path ${JSON.stringify(attributes.path)}`;
    return new StatusError({
      code: 403,
      reason: "Forbidden",
      message: `forbidden: ${withReason(text, reason)}`,
      details: {},
    });
  }
  const { apiGroup, resource, subresource, namespace, name, verb } = attributes;
  const requested = subresource === "" ? resource : `${resource}/${subresource}`;
  const scope = namespace === "" ? "at the cluster scope" : `in the namespace ${JSON.stringify(namespace)}`;
  const text = `User ${username} cannot ${verb} resource ${JSON.stringify(requested)} in API group ${JSON.stringify(apiGroup)} ${scope}`;
  const qualified = apiGroup === "" ? resource : `${resource}.${apiGroup}`;
  const subject = name === "" ? qualified : `${qualified} ${JSON.stringify(name)}`;
  return new StatusError({
    code: 403,
    reason: "Forbidden",
    message: `${subject} is forbidden: ${withReason(text, reason)}`,
    details: {
      ...(name === "" ? {} : { name }),
      ...(apiGroup === "" ? {} : { group: apiGroup }),
      kind: resource,
    },
  });
}

function withReason(text: string, reason: string): string {
  return reason === "" ? text : `${text}: ${reason}`;
}

/** The requirements of a field selector as authorization reads them; undefined when empty or unparsable. */
export function fieldRequirements(text: string | null | undefined): readonly FieldRequirement[] | undefined {
  if (!text) return undefined;
  try {
    const requirements = parseFieldSelector(text).requirements();
    return requirements.length === 0 ? undefined : requirements;
  } catch {
    return undefined;
  }
}
