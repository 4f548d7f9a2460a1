import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "./server.js";

// Requests that are the client's mistake: each is a 4xx, and nothing is stored by a request that fails.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(): Promise<ListeningApiServer> {
  const server = new ApiServer({ customResourceDefinitions: true });
  servers.push(server);
  return server.listen();
}

async function call(http: ListeningApiServer, method: string, path: string, body?: unknown) {
  const response = await fetch(http.url + path, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    code: response.status,
    warning: response.headers.get("warning"),
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely, asserted exactly
    body: (await response.json()) as any,
  };
}

describe("client errors are 4xx, never 500", () => {
  it("quotes a control character in an unknown field's name as Go does, in the warning and the strict error", async () => {
    const http = await start();
    const warned = await call(http, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", {
      metadata: { name: "w" },
      "bad\u0001field": 1,
    });
    expect(warned.code).toBe(201);
    expect(warned.warning).toBe('299 - "unknown field \\"bad\\\\x01field\\""');
    expect((await call(http, "GET", "/api/v1/namespaces/default/configmaps/w")).code).toBe(200);
    const strict = await call(http, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", {
      metadata: { name: "s" },
      "bad\u0001field": 1,
    });
    expect(strict.code).toBe(400);
    expect(strict.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bad\\x01field"',
    );
  });

  it("answers list items without their merge key with the validation errors (422), on create as on update", async () => {
    const http = await start();
    const pod = await call(http, "POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "p" },
      spec: { containers: [{}] },
    });
    expect(pod.code).toBe(422);
    expect(pod.body.details.causes).toContainEqual({
      reason: "FieldValueRequired",
      message: "Required value",
      field: "spec.containers[0].name",
    });
    const env = await call(http, "POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "nginx", env: [{ value: "v" }] }] },
    });
    expect(env.code).toBe(422);
    expect(env.body.details.causes).toContainEqual({
      reason: "FieldValueRequired",
      message: "Required value",
      field: "spec.containers[0].env[0].name",
    });
    const owner = await call(http, "POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: "o", ownerReferences: [{}] },
    });
    expect(owner.code).toBe(422);
    expect((await call(http, "GET", "/api/v1/namespaces/default/pods")).body.items).toEqual([]);
  });

  it("refuses managedFields entries with an unknown operation or fieldsType (422)", async () => {
    const http = await start();
    const answer = await call(http, "POST", "/api/v1/namespaces/default/configmaps", {
      metadata: {
        name: "m",
        managedFields: [
          { manager: "x", operation: "Bogus", apiVersion: "v1", fieldsType: "FieldsV9", fieldsV1: {} },
        ],
      },
    });
    expect(answer.code).toBe(422);
    expect(answer.body.message).toBe(
      'ConfigMap "m" is invalid: [metadata.managedFields[0].operation: Invalid value: "Bogus": must be `Apply` or `Update`, metadata.managedFields[0].fieldsType: Invalid value: "FieldsV9": must be `FieldsV1`]',
    );
  });

  it("reads a CRD's subresources.status as the struct it is: a number is a 400", async () => {
    const http = await start();
    const answer = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "xs.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { kind: "X", plural: "xs" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            subresources: { status: 1 },
          },
        ],
      },
    });
    expect(answer.code).toBe(400);
    expect(answer.body.message).toBe(
      'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal number into Go struct field CustomResourceSubresources.spec.versions.subresources.status of type v1.CustomResourceSubresourceStatus',
    );
  });

  it("answers a raw CONNECT with a 404 Status", async () => {
    const http = await start();
    const url = new URL(http.url);
    const answer = await new Promise<{ code: number | undefined; body: string }>((resolve, reject) => {
      const connect = request({
        host: url.hostname,
        port: url.port,
        method: "CONNECT",
        path: "example.com:443",
      });
      connect.once("connect", (response, socket) => {
        let body = "";
        socket.on("data", (chunk: Buffer) => (body += chunk.toString()));
        socket.on("end", () => resolve({ code: response.statusCode, body }));
      });
      connect.once("response", (response) => resolve({ code: response.statusCode, body: "" }));
      connect.once("error", reject);
      connect.end();
    });
    expect(answer.code).toBe(404);
  });
});
