import { createHash } from "node:crypto";
import type { ResourceDescriptor } from "@reconcile/api";
import { groupVersions } from "./discovery.js";

/**
 * The OpenAPI v3 documents kubectl downloads before `create`, `apply`,
 * `replace` and `edit`. They hold no schemas: each resource has a PATCH
 * operation tagged with its group-version-kind and a `fieldValidation`
 * parameter, which is what kubectl's `QueryParamVerifierV3` looks for before
 * it leaves validation to the server (`?fieldValidation=Strict`) instead of
 * failing with "failed to download openapi".
 */
export interface OpenApiDocuments {
  /** `GET /openapi/v3`. */
  index: object;
  /** `GET /openapi/v3/{path}` by path (`api/v1`, `apis/apps/v1`). */
  byPath: ReadonlyMap<string, object>;
}

export function openApiDocuments(resources: readonly ResourceDescriptor[]): OpenApiDocuments {
  const byPath = new Map<string, object>();
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of groupVersions(resources)) {
    const path = gv.group === "" ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
    const operations: Record<string, object> = {};
    for (const resource of gv.resources) {
      const item = resource.namespaced
        ? `/${path}/namespaces/{namespace}/${resource.plural}/{name}`
        : `/${path}/${resource.plural}/{name}`;
      operations[item] = {
        patch: {
          operationId: `patch${resource.kind}`,
          "x-kubernetes-group-version-kind": {
            group: resource.group,
            version: resource.version,
            kind: resource.kind,
          },
          "x-kubernetes-action": "patch",
          parameters: [
            { name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } },
            { name: "fieldManager", in: "query", schema: { type: "string", uniqueItems: true } },
          ],
          requestBody: {
            content: {
              "application/apply-patch+yaml": { schema: { type: "object" } },
              "application/json-patch+json": { schema: { type: "object" } },
              "application/merge-patch+json": { schema: { type: "object" } },
              "application/strategic-merge-patch+json": { schema: { type: "object" } },
            },
          },
          responses: { "200": { description: "OK" } },
        },
      };
    }
    const document = {
      openapi: "3.0.0",
      info: { title: "Kubernetes", version: "v1.32.0" },
      paths: operations,
      components: { schemas: {} },
    };
    const hash = createHash("sha512")
      .update(JSON.stringify(document))
      .digest("hex")
      .slice(0, 32)
      .toUpperCase();
    byPath.set(path, document);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { index: { paths }, byPath };
}
