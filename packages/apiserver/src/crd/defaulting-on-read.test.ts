import { describe, expect, it } from "vitest";
import { withDefaultsOnRead } from "./defaulting.js";
import type { JSONSchemaProps } from "./schema.js";

const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer", default: 1 },
        ports: {
          type: "array",
          items: { type: "object", properties: { protocol: { type: "string", default: "TCP" } } },
        },
        labels: { type: "object", additionalProperties: { type: "string", default: "x" } },
      },
    },
  },
};

describe("withDefaultsOnRead", () => {
  it("returns the object itself when it lacks no default", () => {
    const object = { spec: { replicas: 2, ports: [{ protocol: "UDP" }], labels: { a: "b" } } };
    expect(withDefaultsOnRead(object, schema)).toBe(object);
  });

  it.each([
    [{ spec: { ports: [] } }, { spec: { replicas: 1, ports: [] } }],
    [{ spec: { replicas: 3, ports: [{}] } }, { spec: { replicas: 3, ports: [{ protocol: "TCP" }] } }],
    [{ spec: { replicas: 3, labels: { a: null } } }, { spec: { replicas: 3, labels: { a: "x" } } }],
    [{ spec: { replicas: null } }, { spec: { replicas: 1 } }],
  ])("defaults a copy of %j, leaving the stored object as it was", (object, expected) => {
    const before = structuredClone(object);
    const served = withDefaultsOnRead(object, schema);
    expect(served).toEqual(expected);
    expect(served).not.toBe(object);
    expect(object).toEqual(before);
  });
});
