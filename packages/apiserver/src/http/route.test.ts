import { builtinResources, deployments, namespaces, nodes, pods } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { parseRoute } from "./route.js";

const route = (path: string) => parseRoute(path, builtinResources);

describe("parseRoute", () => {
  it.each([
    ["/version", { kind: "version" }],
    ["/healthz", { kind: "health", check: "healthz" }],
    ["/readyz/ping", { kind: "health", check: "readyz", name: "ping" }],
    ["/api", { kind: "api" }],
    ["/apis", { kind: "apis" }],
    ["/apis/apps", { kind: "group", group: "apps" }],
    ["/api/v1", { kind: "groupVersion", group: "", version: "v1" }],
    ["/apis/apps/v1", { kind: "groupVersion", group: "apps", version: "v1" }],
    ["/openapi/v3", { kind: "openapiIndex" }],
    ["/openapi/v3/apis/apps/v1", { kind: "openapiDocument", path: "apis/apps/v1" }],
    ["/api/v1/bogus", { kind: "notFound" }],
    ["/nothing/here", { kind: "notFound" }],
    ["/api/v1/pods/p", { kind: "notFound" }],
    [
      "/api/v1/namespaces/default/pods/p/log",
      { kind: "podConnect", namespace: "default", name: "p", action: "log" },
    ],
    [
      "/api/v1/namespaces/default/pods/p/exec",
      { kind: "podConnect", namespace: "default", name: "p", action: "exec" },
    ],
    ["/api/v1/namespaces/default/pods/p/log/x", { kind: "notFound" }],
    ["/api/v1/namespaces/default/pods/p/logs", { kind: "notFound" }],
    ["/api/v1/namespaces/default/pods/p/scale", { kind: "notFound" }],
  ])("%s is %o", (path, expected) => {
    expect(route(path)).toEqual(expected);
  });

  it.each([
    ["/api/v1/pods", pods, undefined, undefined, undefined],
    ["/api/v1/namespaces/default/pods", pods, "default", undefined, undefined],
    ["/api/v1/namespaces/default/pods/web-1", pods, "default", "web-1", undefined],
    ["/api/v1/namespaces/default/pods/web-1/status", pods, "default", "web-1", "status"],
    ["/apis/apps/v1/namespaces/team-a/deployments/web/scale", deployments, "team-a", "web", "scale"],
    ["/api/v1/namespaces", namespaces, undefined, undefined, undefined],
    ["/api/v1/namespaces/default", namespaces, undefined, "default", undefined],
    ["/api/v1/namespaces/default/status", namespaces, undefined, "default", "status"],
    ["/api/v1/nodes/node-1", nodes, undefined, "node-1", undefined],
    ["/api/v1/namespaces/default/pods/name%20with%20space", pods, "default", "name with space", undefined],
  ])("%s names %s in %s, object %s, subresource %s", (path, resource, namespace, name, subresource) => {
    expect(route(path)).toEqual({ kind: "resource", resource, namespace, name, subresource });
  });

  it("throws a URIError on malformed percent-encoding", () => {
    expect(() => route("/api/v1/namespaces/%E0%A4%A/pods")).toThrow(URIError);
  });
});
