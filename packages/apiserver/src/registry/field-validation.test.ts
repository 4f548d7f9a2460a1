import {
  configMaps,
  type Deployment,
  deployments,
  isInvalid,
  type Pod,
  pods,
  StatusError,
} from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { duplicateFields, type FieldValidation, parseFieldValidation } from "./field-validation.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function newServer() {
  const server = new ApiServer();
  servers.push(server);
  return server;
}

const deployment = (spec: Record<string, unknown>) => ({
  metadata: { name: "web", namespace: "default" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image: "nginx" }] },
    },
    ...spec,
  },
});

describe("fieldValidation on built-in kinds", () => {
  it("Strict refuses an unknown field with the decoder's 400 and stores nothing", async () => {
    const server = newServer();
    const fieldValidation: FieldValidation = { directive: "Strict" };
    const error = await server.registry
      .create(deployments, "default", deployment({ replicass: 2 }), { fieldValidation })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatusError);
    expect((error as StatusError).status).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message:
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass"',
    });
    await expect(server.registry.get(deployments, "default", "web")).rejects.toThrow(/not found/);
  });

  it("Warn drops unknown fields at every depth and reports each in document order", async () => {
    const server = newServer();
    const fieldValidation: FieldValidation = { directive: "Warn", warnings: [] };
    const body = deployment({ replicass: 2 });
    (body.spec.template.spec.containers[0] as Record<string, unknown>).imagee = "x";
    (body.metadata as Record<string, unknown>).labelz = { a: "b" };
    const created = await server.registry.create(deployments, "default", body, { fieldValidation });
    expect(fieldValidation.warnings).toEqual([
      'unknown field "metadata.labelz"',
      'unknown field "spec.template.spec.containers[0].imagee"',
      'unknown field "spec.replicass"',
    ]);
    expect(created.metadata).not.toHaveProperty("labelz");
    expect((created as Deployment).spec).not.toHaveProperty("replicass");
    expect((created as Deployment).spec?.replicas).toBe(1);
    expect((created as Deployment).spec?.template.spec?.containers[0]).not.toHaveProperty("imagee");
  });

  it("Ignore drops unknown fields silently; without a directive the default is Warn", async () => {
    const server = newServer();
    const ignore: FieldValidation = { directive: "Ignore", warnings: [] };
    const created = await server.registry.create(
      configMaps,
      "default",
      { metadata: { name: "a" }, data: { k: "v" }, extra: true },
      { fieldValidation: ignore },
    );
    expect(ignore.warnings).toEqual([]);
    expect(created).not.toHaveProperty("extra");
    const plain = await server
      .client()
      .resource(configMaps, "default")
      .create({ metadata: { name: "b" }, extra: 1 } as never);
    expect(plain).not.toHaveProperty("extra");
  });

  it("keeps what the schema leaves open: maps, quantities, int-or-strings, free-form objects", async () => {
    const server = newServer();
    const fieldValidation: FieldValidation = { directive: "Strict" };
    const pod = await server.registry.create(
      pods,
      "default",
      {
        metadata: { name: "p", labels: { any: "key" }, annotations: { "x/y": "z" } },
        spec: {
          containers: [
            {
              name: "c",
              image: "nginx",
              resources: { limits: { cpu: "500m", memory: 1024 } },
              ports: [{ containerPort: 80 }],
              livenessProbe: { httpGet: { port: "http", path: "/" } },
            },
          ],
          nodeSelector: { disk: "ssd" },
        },
      },
      { fieldValidation },
    );
    expect((pod as Pod).spec?.containers[0]?.resources?.limits).toEqual({ cpu: "500m", memory: "1024" });
    expect((pod as Pod).spec?.containers[0]?.livenessProbe?.httpGet?.port).toBe("http");
  });

  it("under Strict a patch whose result has an unknown field is a 422 on the field patch", async () => {
    const server = newServer();
    await server.registry.create(deployments, "default", deployment({}));
    const error = await server.registry
      .patch(
        deployments,
        "default",
        "web",
        "merge",
        { spec: { replicass: 3 } },
        {
          fieldValidation: { directive: "Strict" },
        },
      )
      .catch((e: unknown) => e);
    expect(isInvalid(error)).toBe(true);
    const status = (error as StatusError).status;
    expect(status.message).toMatch(
      /^ "" is invalid: patch: Invalid value: ".*\\"replicass\\":3.*": strict decoding error: unknown field "spec.replicass"$/,
    );
    expect(status.details?.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "patch",
        message: expect.stringMatching(/: strict decoding error: unknown field "spec.replicass"$/),
      },
    ]);
    const patched = await server.registry.patch(deployments, "default", "web", "merge", {
      spec: { replicass: 3, replicas: 3 },
    });
    expect((patched as Deployment).spec?.replicas).toBe(3);
    expect((patched as Deployment).spec).not.toHaveProperty("replicass");
  });

  it("reports duplicates before unknown fields, and a key both duplicate and unknown as unknown only", async () => {
    const server = newServer();
    const fieldValidation: FieldValidation = {
      directive: "Strict",
      duplicates: ["metadata.name", "spec.replicass"],
    };
    const error = await server.registry
      .create(deployments, "default", deployment({ replicass: 2 }), { fieldValidation })
      .catch((e: unknown) => e);
    expect((error as StatusError).message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "metadata.name", unknown field "spec.replicass"',
    );
  });

  it("a server-side apply with an unknown field is refused whatever the directive, as upstream's typed patch", async () => {
    const server = newServer();
    const error = await server.registry
      .patch(
        configMaps,
        "default",
        "a",
        "apply",
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, dataa: {} },
        { fieldManager: "me", fieldValidation: { directive: "Ignore" } },
      )
      .catch((e: unknown) => e);
    expect((error as StatusError).status).toMatchObject({
      code: 500,
      message:
        "failed to create typed patch object (default/a; v1, Kind=ConfigMap): .dataa: field not declared in schema",
    });
  });
});

describe("parseFieldValidation", () => {
  it.each([
    [null, "Warn"],
    ["", "Warn"],
    ["Strict", "Strict"],
    ["Warn", "Warn"],
    ["Ignore", "Ignore"],
  ] as const)("%s is %s", (value, directive) => {
    expect(parseFieldValidation(value)).toBe(directive);
  });

  it("refuses any other spelling with a 400 naming the values", () => {
    expect(() => parseFieldValidation("strict")).toThrow(
      'fieldValidation: Unsupported value: "strict": supported values: "Ignore", "Strict", "Warn"',
    );
  });
});

describe("duplicateFields", () => {
  it.each([
    ['{"a":1,"b":2}', []],
    ['{"metadata":{"name":"a","name":"b"}}', ["metadata.name"]],
    ['{"a":1,"a":2,"a":3}', ["a", "a"]],
    ['{"spec":{"c":[{"n":1},{"n":1,"n":2}]}}', ["spec.c[1].n"]],
    ['{"s":"{\\"x\\":1,\\"x\\":2}","t":[[{"k":1,"k":2}]]}', ["t[0][0].k"]],
    ['{"a":{"b":1},"c":{"b":1}}', []],
    ['{"a\\"b":1,"a\\"b":2}', ['a"b']],
    ['[{},"x",{"y":[{}, "y"],"y":1}]', ["[2].y"]],
    ['{"a":[],"b":{},"b":2}', ["b"]],
  ] as const)("%s → %j", (text, expected) => {
    expect(duplicateFields(text)).toEqual(expected);
  });
});
