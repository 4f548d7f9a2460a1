import { describe, expect, it } from "vitest";
import { type Schema, typeProblem } from "./schema.js";

describe("typeProblem without Go types", () => {
  const schema: Schema = {
    fields: {
      spec: {
        fields: {
          selector: { map: "string" },
          ports: { array: { fields: { port: "int32", names: { array: "string" } } } },
          data: { map: { array: "integer" } },
        },
      },
    },
  };

  it.each([
    [
      { spec: { selector: { "app.kubernetes.io/name": 5 } } },
      'spec.selector["app.kubernetes.io/name"]: expected string, got number',
    ],
    [
      { spec: { ports: [{ port: 80 }, { port: "x" }] } },
      'spec.ports[1].port: expected int32, got string "x"',
    ],
    [{ spec: { ports: [{ names: ["a", null] }] } }, "spec.ports[0].names[1]: expected string, got null"],
    [{ spec: { data: { 'a"b': [1, 2, true] } } }, 'spec.data["a\\"b"][2]: expected integer, got boolean'],
    [{ spec: [] }, "spec: expected object, got array"],
  ])("names the first wrong value by its path (%j)", (value, problem) => {
    expect(typeProblem(value, schema, "")).toBe(problem);
  });

  it("starts the path at the root it is given, and reports only the first problem", () => {
    expect(typeProblem({ selector: { a: 1, b: 2 } }, schema.fields.spec!, "spec")).toBe(
      'spec.selector["a"]: expected string, got number',
    );
    expect(typeProblem(7, schema, "")).toBe("<root>: expected object, got number");
  });

  it("finds nothing in a value of the right types, nulls included", () => {
    expect(
      typeProblem(
        { spec: { selector: { a: "b" }, ports: [{ port: 1, names: ["x"] }], data: null } },
        schema,
        "",
      ),
    ).toBeUndefined();
  });
});
