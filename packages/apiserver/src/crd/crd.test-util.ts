import { FakeClock } from "@reconcile/clock";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "../http/server.js";
import { customResourceDefinitions } from "./controller.js";
import { type CustomResourceDefinition, validateCustomResourceDefinition } from "./definition-validation.js";
import type { JSONSchemaProps } from "./schema.js";

// A server with CustomResourceDefinitions served over HTTP, for the CRD integration tests, and a
// CRD's validation for the schema tests.

// biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely, asserted exactly
export type Json = any;

const running: ApiServer[] = [];

/** Closes every server started since the last call (an `afterEach`). */
export async function closeCrdServers(): Promise<void> {
  for (const api of running.splice(0)) await api.close();
}

/** A server with CRDs on a FakeClock, listening. */
export async function startCrdServer(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = new ApiServer({
    clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")),
    customResourceDefinitions: true,
  });
  running.push(api);
  return { api, http: await api.listen() };
}

/** One request: its status code, its `Warning` header and its JSON body (a PATCH is a merge patch). */
export async function call(
  http: ListeningApiServer,
  method: string,
  path: string,
  body?: unknown,
  accept?: string,
): Promise<{ code: number; warning: string | null; body: Json }> {
  const headers: Record<string, string> = {};
  if (body !== undefined)
    headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  if (accept) headers.accept = accept;
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(http.url + path, init);
  const text = await response.text();
  return {
    code: response.status,
    warning: response.headers.get("warning"),
    body: (text ? JSON.parse(text) : {}) as Json,
  };
}

/** Resolves once the CRD's condition has the status, by watching it (no polling on the clock). */
export async function crdCondition(
  api: ApiServer,
  name: string,
  type: string,
  status = "True",
): Promise<CustomResourceDefinition> {
  const stop = new AbortController();
  const events = await api
    .client()
    .resource(customResourceDefinitions)
    .watch({ resourceVersion: "0", signal: stop.signal });
  try {
    for await (const event of events) {
      const crd = event.object as CustomResourceDefinition;
      if (crd.metadata?.name !== name) continue;
      if (crd.status?.conditions?.some((c) => c.type === type && c.status === status)) return crd;
    }
  } finally {
    stop.abort();
  }
  throw new Error("watch ended");
}

/**
 * Creates a namespaced CRD of one version `v1` that keeps whatever it is
 * given (no schema beyond `preserve-unknown-fields`), and resolves once it is
 * Established.
 */
export async function establishSchemalessCRD(
  api: ApiServer,
  names: { group: string; plural: string; kind: string; singular?: string },
): Promise<CustomResourceDefinition> {
  const { group, ...kindNames } = names;
  const name = `${names.plural}.${group}`;
  await api
    .client()
    .resource(customResourceDefinitions)
    .create({
      metadata: { name },
      spec: {
        group,
        scope: "Namespaced",
        names: kindNames,
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    } as never);
  return crdCondition(api, name, "Established");
}

/** The errors of a CronTab CRD with one version of `openAPIV3Schema`, as the CRD's validation reports them. */
export function crdSchemaErrors(openAPIV3Schema: JSONSchemaProps): string[] {
  return validateCustomResourceDefinition({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "crontabs.stable.example.com" },
    spec: {
      group: "stable.example.com",
      scope: "Namespaced",
      names: { plural: "crontabs", singular: "crontab", kind: "CronTab", listKind: "CronTabList" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  }).map((e) => e.message);
}
