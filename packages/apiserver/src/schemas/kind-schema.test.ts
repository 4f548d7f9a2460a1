import { describe, expect, it } from "vitest";
import { builtinKindSchema, DefinitionSchema, type OpenAPIDefinition } from "./kind-schema.js";

describe("builtinKindSchema", () => {
  it("knows the kinds Kubernetes 1.32 defines, and nothing else", () => {
    expect(builtinKindSchema("apps", "v1", "Deployment")?.name).toBe("io.k8s.api.apps.v1.Deployment");
    expect(builtinKindSchema("", "v1", "Pod")?.name).toBe("io.k8s.api.core.v1.Pod");
    expect(builtinKindSchema("example.com", "v1", "Widget")).toBeUndefined();
    expect(builtinKindSchema("apps", "v1beta1", "Deployment")).toBeUndefined();
  });

  it("publishes the kind's definition with every definition it references", () => {
    const definitions = builtinKindSchema("apps", "v1", "Deployment")!.definitions();
    expect(Object.keys(definitions)).toEqual(
      expect.arrayContaining([
        "io.k8s.api.apps.v1.Deployment",
        "io.k8s.api.apps.v1.DeploymentSpec",
        "io.k8s.api.core.v1.PodSpec",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
      ]),
    );
    expect(definitions).not.toHaveProperty(["io.k8s.api.batch.v1.Job"]);
    expect(definitions["io.k8s.api.apps.v1.DeploymentSpec"]?.required).toEqual(["selector", "template"]);
  });

  it("prunes unknown fields of structs at any depth, in document order, and keeps maps and free-form values", () => {
    const schema = builtinKindSchema("", "v1", "ConfigMap")!;
    const object: Record<string, unknown> = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "a",
        labels: { anything: "goes" },
        bogus: 1,
        managedFields: [{ fieldsV1: { "f:x": {} } }],
      },
      data: { key: "value" },
      dataa: {},
    };
    expect(schema.pruneUnknownFields(object)).toEqual(["metadata.bogus", "dataa"]);
    expect(object).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", labels: { anything: "goes" }, managedFields: [{ fieldsV1: { "f:x": {} } }] },
      data: { key: "value" },
    });
  });

  it("follows recursive definitions (a CRD's JSONSchemaProps) without looping", () => {
    const schema = builtinKindSchema("apiextensions.k8s.io", "v1", "CustomResourceDefinition")!;
    const crd = {
      spec: {
        versions: [
          {
            name: "v1",
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { a: { type: "string", typo: 1 } } } },
                extra: true,
              },
            },
          },
        ],
      },
    };
    expect(schema.pruneUnknownFields(crd)).toEqual([
      "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.typo",
      "spec.versions[0].schema.openAPIV3Schema.extra",
    ]);
  });

  it("leaves x-kubernetes-preserve-unknown-fields subtrees alone", () => {
    const definitions: Record<string, OpenAPIDefinition> = {
      root: {
        type: "object",
        properties: {
          open: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          closed: { type: "object", properties: { known: { type: "string" } } },
        },
      },
    };
    const object = { open: { anything: { nested: 1 } }, closed: { known: "x", unknown: 2 } };
    expect(new DefinitionSchema("root", () => definitions).pruneUnknownFields(object)).toEqual([
      "closed.unknown",
    ]);
    expect(object).toEqual({ open: { anything: { nested: 1 } }, closed: { known: "x" } });
  });
});
