import { customResourceValidator } from "@reconcile/apiserver";
import { startTestEnvironment } from "@reconcile/runtime/envtest";
import { describe, expect, expectTypeOf, it } from "vitest";
import { type CustomResourceOf, defineCustomResource, pluralize } from "./define.js";
import { k, NonStructuralSchemaError } from "./schema.js";

const databases = defineCustomResource({
  group: "example.com",
  kind: "Database",
  shortNames: ["db"],
  categories: ["all"],
  version: {
    name: "v1",
    spec: k.Object({
      engine: k.Enum(["postgres", "mysql"], { description: "Which server to run." }),
      replicas: k.Optional(k.Integer({ minimum: 1, default: 1 })),
      port: k.Optional(k.IntOrString()),
      storage: k.Quantity(),
      users: k.Optional(
        k.ListMap(k.Object({ name: k.String(), role: k.Optional(k.String({ default: "reader" })) }), [
          "name",
        ]),
      ),
      labels: k.Optional(k.Record(k.String(), k.String())),
      settings: k.Optional(k.PreserveUnknown()),
      backup: k.Optional(k.Nullable(k.Object({ schedule: k.String() }))),
    }),
    status: k.Object({
      readyReplicas: k.Optional(k.Integer()),
      phase: k.Optional(k.String()),
    }),
    validations: [{ rule: "self.spec.replicas <= 5", message: "at most 5 replicas" }],
    printerColumns: [{ name: "Engine", type: "string", jsonPath: ".spec.engine" }],
    scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.readyReplicas" },
  },
});
type Database = CustomResourceOf<typeof databases>;

describe("defineCustomResource", () => {
  it("infers the object type from the schema: nothing is declared twice", () => {
    expectTypeOf<Database["spec"]["engine"]>().toEqualTypeOf<"postgres" | "mysql">();
    expectTypeOf<Database["spec"]["replicas"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Database["spec"]["port"]>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<Database["spec"]["labels"]>().toEqualTypeOf<Record<string, string> | undefined>();
    expectTypeOf<NonNullable<Database["status"]>["readyReplicas"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf(databases.resource.__type).toEqualTypeOf<Database | undefined>();
  });

  it("writes the CustomResourceDefinition with Kubernetes' spelling of each construct", () => {
    const version = databases.crd.spec.versions[0]!;
    expect(databases.crd.metadata?.name).toBe("databases.example.com");
    expect(databases.crd.spec.names).toEqual({
      kind: "Database",
      listKind: "DatabaseList",
      plural: "databases",
      singular: "database",
      shortNames: ["db"],
      categories: ["all"],
    });
    expect(version.subresources).toEqual({
      status: {},
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.readyReplicas" },
    });
    const spec = version.schema?.openAPIV3Schema?.properties?.spec;
    expect(spec?.required).toEqual(["engine", "storage"]);
    expect(spec?.properties?.engine).toEqual({
      type: "string",
      enum: ["postgres", "mysql"],
      description: "Which server to run.",
    });
    expect(spec?.properties?.port).toEqual({
      "x-kubernetes-int-or-string": true,
      anyOf: [{ type: "integer" }, { type: "string" }],
    });
    expect(spec?.properties?.users).toEqual({
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, role: { type: "string", default: "reader" } },
      },
    });
    expect(spec?.properties?.labels).toEqual({ type: "object", additionalProperties: { type: "string" } });
    expect(spec?.properties?.settings).toEqual({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    });
    expect(spec?.properties?.backup).toEqual({
      type: "object",
      nullable: true,
      required: ["schedule"],
      properties: { schedule: { type: "string" } },
    });
    expect(databases.resource).toMatchObject({
      plural: "databases",
      namespaced: true,
      subresources: ["status", "scale"],
    });
  });

  it("is accepted by the API server, which serves the kind with its defaults, rules and columns", async () => {
    const env = await startTestEnvironment({ crds: [databases.crd], http: false });
    try {
      const client = env.client.resource(databases.resource, "default");
      const created = await client.create({
        metadata: { name: "orders", namespace: "default" },
        spec: { engine: "postgres", storage: "10Gi", users: [{ name: "app" }] },
      });
      expect(created.spec).toEqual({
        engine: "postgres",
        storage: "10Gi",
        replicas: 1,
        users: [{ name: "app", role: "reader" }],
      });
      const refused = await client
        .create({
          metadata: { name: "big", namespace: "default" },
          spec: { engine: "postgres", storage: "1Gi", replicas: 6 },
        })
        .catch((error: unknown) => error);
      // The validator gives the same verdict, with the same message, without a server.
      const validator = customResourceValidator<Database>(databases.crd);
      const { object } = validator.default({
        metadata: { name: "big", namespace: "default" },
        spec: { engine: "postgres", storage: "1Gi", replicas: 6 },
      });
      expect(validator.validate(object)?.message).toBe((refused as Error).message);
      expect((refused as Error).message).toBe(
        'Database.example.com "big" is invalid: <nil>: Invalid value: "object": at most 5 replicas',
      );
    } finally {
      await env.stop();
    }
  });

  it("prunes and defaults as the server does, and lists the unknown fields Strict would refuse", () => {
    const validator = customResourceValidator<Database>(databases.crd);
    const { object, unknownFields } = validator.default({
      metadata: { name: "a" },
      spec: { engine: "mysql", storage: 1, extra: true } as Database["spec"],
    });
    expect(object.spec).toEqual({ engine: "mysql", storage: 1, replicas: 1 });
    expect(unknownFields).toEqual(["spec.extra"]);
    expect(validator.validate(object)).toBeUndefined();
    const wrong = validator.validate({ ...object, spec: { ...object.spec, engine: "oracle" as "mysql" } });
    expect(wrong?.message).toBe(
      'Database.example.com "a" is invalid: [spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
  });

  it("refuses at definition time what a structural schema cannot say, naming the field", () => {
    const union = () =>
      defineCustomResource({
        group: "example.com",
        kind: "Bad",
        version: {
          name: "v1",
          spec: k.Object({ target: k.Union([k.Object({ host: k.String() }), k.Object({ ip: k.String() })]) }),
        },
      });
    expect(union).toThrow(NonStructuralSchemaError);
    expect(union).toThrow(
      "spec.target: a union of different types is not a structural schema: use one object with optional fields, k.IntOrString or k.Enum",
    );
    const untyped = () =>
      defineCustomResource({
        group: "example.com",
        kind: "Bad",
        version: { name: "v1", spec: k.Object({ any: k.Unknown() }) },
      });
    expect(untyped).toThrow("spec.any: every field needs a type (or x-kubernetes-preserve-unknown-fields)");
  });

  it("makes plurals as kubebuilder does", () => {
    expect(["website", "policy", "gateway", "ingress", "box", "match"].map(pluralize)).toEqual([
      "websites",
      "policies",
      "gateways",
      "ingresses",
      "boxes",
      "matches",
    ]);
  });
  it("carries the conversion it is given into the CRD", () => {
    const converted = defineCustomResource({
      group: "example.com",
      kind: "Pool",
      version: { name: "v1", spec: k.Object({ replicas: k.Integer() }) },
      otherVersions: [{ name: "v1alpha1", spec: k.Object({ size: k.String() }) }],
      conversion: {
        strategy: "Webhook",
        webhook: {
          clientConfig: { url: "https://hooks.example.com/convert" },
          conversionReviewVersions: ["v1"],
        },
      },
    });
    expect(converted.crd.spec.conversion).toEqual({
      strategy: "Webhook",
      webhook: {
        clientConfig: { url: "https://hooks.example.com/convert" },
        conversionReviewVersions: ["v1"],
      },
    });
    expect(converted.crd.spec.versions.map((v) => [v.name, v.storage])).toEqual([
      ["v1", true],
      ["v1alpha1", false],
    ]);
  });
});
