import type { ResourceDescriptor } from "@reconcile/api";
import { pathSegmentProblems } from "../registry/meta-validation.js";
import { type PodConnectAction, podConnectActions } from "./pod-connect.js";

/** What a request path names. */
export type Route =
  | { kind: "version" }
  | { kind: "health"; check: "healthz" | "livez" | "readyz"; name?: string }
  | { kind: "api" }
  | { kind: "apis" }
  | { kind: "group"; group: string }
  | { kind: "groupVersion"; group: string; version: string }
  | { kind: "openapiIndex" }
  | { kind: "openapiDocument"; path: string }
  | { kind: "openapiV2" }
  | {
      kind: "resource";
      resource: ResourceDescriptor;
      /** The namespace in the path; undefined for cluster-scoped kinds and all-namespaces collections. */
      namespace: string | undefined;
      /** The object's name; undefined for a collection. */
      name: string | undefined;
      /** A subresource the kind's definition serves (`status`, `scale`, `binding`, `finalize`…). */
      subresource: string | undefined;
    }
  /** `pods/{name}/log`, `exec`, `attach`, `portforward`: answered through the pod's kubelet. */
  | { kind: "podConnect"; namespace: string; name: string; action: PodConnectAction }
  /**
   * `pods/{[scheme:]name[:port]}/proxy[/path]` and the same of `services`: the
   * request passed on to the pod (or one of the Service's endpoints).
   */
  | {
      kind: "proxy";
      resource: "pods" | "services" | "nodes";
      /** "" for a node. */
      namespace: string;
      /** As sent: `web`, `web:8080`, `https:web:443`. */
      name: string;
      /** The path after `proxy`, as sent (undecoded): "" for none, `/` and `/a/b` otherwise. */
      path: string;
    }
  | { kind: "notFound" }
  /** A path segment no object could be named by (`..`, `a%2Fb`): a 400 before anything acts on it. */
  | { kind: "invalid"; message: string };

/** A route to a resource collection, an object, or one of its subresources. */
export type ResourceRoute = Extract<Route, { kind: "resource" }>;

/**
 * Parses a request path, exactly as sent (dot segments not resolved), into a
 * {@link Route}: discovery, OpenAPI, health, or a resource collection, object
 * or subresource (`/api/v1/namespaces/{ns}/pods/{name}/status`,
 * `/apis/apps/v1/deployments`). A segment that decodes to `.` or `..`, or
 * contains `/` or `%`, makes the route `invalid`: resolved, it would name
 * another object (`pods/..` is the namespace), so kube's path-segment rule
 * (`IsValidPathSegmentName`) holds for every segment. Throws a `URIError` on
 * malformed percent-encoding.
 */
export function parseRoute(
  pathname: string,
  resources: readonly ResourceDescriptor[],
  /** The subresources a resource's definition serves; default: those its descriptor lists. */
  subresourcesOf: (resource: ResourceDescriptor) => readonly string[] = (resource) => resource.subresources,
): Route {
  const segments = pathname
    .split("/")
    .filter((s) => s !== "")
    .map(decodeURIComponent);
  const route = routeOf(segments, resources, subresourcesOf);
  if (route.kind === "proxy") {
    // What follows `proxy` is the pod's path, passed on as sent; the segments before it name the object.
    const at = proxySegment(pathname, route.resource === "nodes" ? 4 : 6);
    const before = segments.slice(0, at.index);
    const problem = before.find((segment) => pathSegmentProblems(segment).length > 0);
    if (problem === undefined) return { ...route, path: at.path };
  }
  const bad = segments.findIndex((segment) => pathSegmentProblems(segment).length > 0);
  if (bad === -1) return route;
  // Name the parameter as kube-apiserver's key functions do when the segment is one.
  let parameter = "Path segment";
  if (route.kind === "resource" && route.name !== undefined && segments.lastIndexOf(route.name) === bad)
    parameter = "Name parameter";
  else if (
    route.kind === "resource" &&
    route.namespace !== undefined &&
    segments.indexOf(route.namespace) === bad
  )
    parameter = "Namespace parameter";
  const segment = segments[bad]!;
  return {
    kind: "invalid",
    message: `${parameter} invalid: ${JSON.stringify(segment)}: ${pathSegmentProblems(segment).join(";")}`,
  };
}

/**
 * Where a proxy path's own path starts: the index of its `proxy` segment
 * among the non-empty segments (the sixth after `api`, `v1`, `namespaces`,
 * the namespace, `pods` or `services`, the name; the fourth after `api`,
 * `v1`, `nodes`, the name), and the raw path after it.
 */
function proxySegment(pathname: string, index: number): { index: number; path: string } {
  const raw = pathname.split("/");
  let seen = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === "") continue;
    if (seen === index) return { index, path: i + 1 < raw.length ? `/${raw.slice(i + 1).join("/")}` : "" };
    seen++;
  }
  return { index, path: "" };
}

function routeOf(
  segments: string[],
  resources: readonly ResourceDescriptor[],
  subresourcesOf: (resource: ResourceDescriptor) => readonly string[],
): Route {
  const [first, ...rest] = segments;
  if (first === undefined) return { kind: "notFound" };
  if (segments.length === 1) {
    if (first === "version") return { kind: "version" };
    if (first === "healthz" || first === "livez" || first === "readyz")
      return { kind: "health", check: first };
    if (first === "api") return { kind: "api" };
    if (first === "apis") return { kind: "apis" };
  }
  if ((first === "healthz" || first === "livez" || first === "readyz") && rest.length === 1) {
    return { kind: "health", check: first, name: rest[0]! };
  }
  if (first === "openapi" && rest[0] === "v2" && rest.length === 1) return { kind: "openapiV2" };
  if (first === "openapi" && rest[0] === "v3") {
    return rest.length === 1
      ? { kind: "openapiIndex" }
      : { kind: "openapiDocument", path: rest.slice(1).join("/") };
  }
  let group: string;
  let version: string | undefined;
  let tail: string[];
  if (first === "api") {
    group = "";
    version = rest[0];
    tail = rest.slice(1);
  } else if (first === "apis") {
    if (rest[0] === undefined) return { kind: "apis" };
    group = rest[0];
    version = rest[1];
    if (version === undefined) return { kind: "group", group };
    tail = rest.slice(2);
  } else {
    return { kind: "notFound" };
  }
  if (version === undefined) return { kind: "api" };
  if (tail.length === 0) return { kind: "groupVersion", group, version };
  const find = (plural: string | undefined) =>
    resources.find((r) => r.group === group && r.version === version && r.plural === plural);

  // /namespaces/{ns}/{plural}[/{name}[/{sub}]] — unless it is the namespace object itself.
  if (tail[0] === "namespaces" && tail.length >= 3) {
    if (
      group === "" &&
      version === "v1" &&
      (tail[2] === "pods" || tail[2] === "services") &&
      tail[3] !== undefined &&
      tail[4] === "proxy"
    )
      return { kind: "proxy", resource: tail[2], namespace: tail[1]!, name: tail[3], path: "" };
    const namespaced = find(tail[2]);
    const action = tail[5] === undefined ? (tail[4] as PodConnectAction | undefined) : undefined;
    if (
      group === "" &&
      tail[2] === "pods" &&
      tail[3] !== undefined &&
      action &&
      podConnectActions.includes(action)
    ) {
      return { kind: "podConnect", namespace: tail[1]!, name: tail[3], action };
    }
    if (namespaced?.namespaced) {
      return resourceRoute(namespaced, tail[1], tail.slice(3), subresourcesOf);
    }
  }
  if (group === "" && version === "v1" && tail[0] === "nodes" && tail[1] !== undefined && tail[2] === "proxy")
    return { kind: "proxy", resource: "nodes", namespace: "", name: tail[1], path: "" };
  const resource = find(tail[0]);
  if (resource === undefined) return { kind: "notFound" };
  // A namespaced kind's collection across all namespaces; its objects need a namespace.
  if (resource.namespaced && tail.length > 1) return { kind: "notFound" };
  return resourceRoute(resource, undefined, tail.slice(1), subresourcesOf);
}

function resourceRoute(
  resource: ResourceDescriptor,
  namespace: string | undefined,
  rest: string[],
  subresourcesOf: (resource: ResourceDescriptor) => readonly string[],
): Route {
  if (rest.length > 2) return { kind: "notFound" };
  const [name, subresource] = rest;
  if (subresource !== undefined && !subresourcesOf(resource).includes(subresource))
    return { kind: "notFound" };
  return { kind: "resource", resource, namespace, name, subresource };
}
