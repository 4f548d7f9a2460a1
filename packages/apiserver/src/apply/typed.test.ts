import { describe, expect, it } from "vitest";
import { FieldSet } from "./fieldpath.js";
import { merge } from "./merge.js";
import { atomicList, keyedList, mapOf, scalar, setList, struct, typeFromOpenAPI } from "./schema.js";
import { compare, removeFields, TypedValueError, toFieldSet } from "./typed.js";

const set = struct({ list: setList });
const keyed = struct({ list: keyedList(["name"], struct({})) });

describe("merge", () => {
  // structured-merge-diff's typed/merge_test.go, "struct grab bag" and "associative list".
  it.each([
    [
      ["a", "b", "c"],
      ["a", "b"],
      ["a", "b", "c"],
    ],
    [
      ["a", "b"],
      ["a", "b", "c"],
      ["a", "b", "c"],
    ],
    [["a", "b", "c"], [], ["a", "b", "c"]],
    [[], ["a", "b", "c"], ["a", "b", "c"]],
    [
      ["a", "b"],
      ["b", "a"],
      ["b", "a"],
    ],
    [
      ["a", "b", "c"],
      ["d", "e", "f"],
      ["a", "b", "c", "d", "e", "f"],
    ],
    [
      ["a", "b", "c"],
      ["c", "d", "e", "f"],
      ["a", "b", "c", "d", "e", "f"],
    ],
    [
      ["a", "b", "c", "g", "f"],
      ["c", "d", "e", "f"],
      ["a", "b", "c", "g", "d", "e", "f"],
    ],
    [
      ["a", "b", "c"],
      ["d", "e", "f", "x", "y", "z"],
      ["a", "b", "c", "d", "e", "f", "x", "y", "z"],
    ],
    [
      ["c", "d", "e", "f"],
      ["a", "c", "e"],
      ["a", "c", "d", "e", "f"],
    ],
    [
      ["a", "b", "c", "x", "y", "z"],
      ["d", "e", "f"],
      ["a", "b", "c", "x", "y", "z", "d", "e", "f"],
    ],
    [
      ["a", "b", "c", "x", "y", "z"],
      ["d", "e", "f", "x", "y", "z"],
      ["a", "b", "c", "d", "e", "f", "x", "y", "z"],
    ],
    [
      ["c", "a", "g", "f"],
      ["c", "f", "a", "g"],
      ["c", "f", "a", "g"],
    ],
    [
      ["a", "b", "c", "d"],
      ["d", "e", "f", "a"],
      ["b", "c", "d", "e", "f", "a"],
    ],
    [
      ["c", "d", "e", "f", "g", "h", "i", "j"],
      ["2", "h", "3", "e", "4", "k", "l"],
      ["c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"],
    ],
    [
      ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
      ["1", "b", "2", "h", "3", "e", "4", "k", "l"],
      ["a", "1", "b", "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"],
    ],
    [[true], [false], [true, false]],
    [
      [1, 2, 2.5],
      [1, 2, 3],
      [1, 2, 2.5, 3],
    ],
  ])("a set list %j merged with %j is %j", (live, config, expected) => {
    expect(merge({ list: live }, { list: config }, set)).toEqual({ list: expected });
  });

  const pairs = struct({ list: keyedList(["key", "id"], struct({ value: mapOf(scalar) })) });
  const item = (key: string, id: number) => ({ key, id });
  it.each([
    [[item("a", 1)], [item("a", 2)], [item("a", 1), item("a", 2)]],
    [
      [item("a", 1), item("b", 1)],
      [item("a", 1), item("a", 2)],
      [item("a", 1), item("b", 1), item("a", 2)],
    ],
    [[item("b", 2)], [item("a", 1), item("b", 2), item("c", 3)], [item("a", 1), item("b", 2), item("c", 3)]],
    [
      [item("a", 1), item("b", 2), item("c", 3)],
      [item("c", 3), item("b", 2)],
      [item("a", 1), item("c", 3), item("b", 2)],
    ],
    [
      [item("a", 1), item("b", 2), item("c", 3)],
      [item("c", 3), item("a", 1)],
      [item("b", 2), item("c", 3), item("a", 1)],
    ],
  ])("a keyed list %j merged with %j is %j", (live, config, expected) => {
    expect(merge({ list: live }, { list: config }, pairs)).toEqual({ list: expected });
  });

  it("takes the configuration's {} or [] over an absent or empty live value", () => {
    const type = struct({ inner: atomicList, map: struct({}) });
    expect(merge({}, { inner: [], map: {} }, type)).toEqual({ inner: [], map: {} });
    expect(merge({ inner: [], map: {} }, { inner: [], map: {} }, type)).toEqual({ inner: [], map: {} });
  });

  it("merges keyed items field by field, the config's values winning", () => {
    const live = { list: [{ name: "a", x: 1, y: 1 }, { name: "b" }] };
    expect(merge(live, { list: [{ name: "a", x: 2 }] }, keyed)).toEqual({
      list: [{ name: "a", x: 2, y: 1 }, { name: "b" }],
    });
  });

  it("replaces an atomic list and an atomic map whole", () => {
    const type = struct({ args: atomicList, selector: mapOf(scalar, true) });
    expect(
      merge({ args: ["a", "b"], selector: { a: "1" } }, { args: ["c"], selector: { b: "2" } }, type),
    ).toEqual({
      args: ["c"],
      selector: { b: "2" },
    });
  });

  it("treats null on a granular struct as nothing, and keeps {} distinct from absent", () => {
    const type = struct({ spec: struct({ emptyDir: struct({}) }) });
    expect(merge({ spec: { a: 1 } }, { spec: null }, type)).toEqual({ spec: { a: 1 } });
    expect(merge({ spec: { a: 1 } }, { spec: { emptyDir: {} } }, type)).toEqual({
      spec: { a: 1, emptyDir: {} },
    });
  });

  it("drops a scalar set to null", () => {
    expect(merge({ a: 1, b: 2 }, { a: null }, struct({}))).toEqual({ b: 2 });
  });
});

describe("toFieldSet", () => {
  it("owns nothing for an empty associative list and the whole of an empty atomic one", () => {
    const type = struct({ keyed: keyedList(["name"], struct({})), args: atomicList });
    expect(toFieldSet({ keyed: [], args: [] }, type).toFieldsV1()).toEqual({ "f:args": {} });
  });

  it("uses a key's default when the item omits it, without owning the key field", () => {
    const type = struct({ ports: keyedList(["port", "protocol"], struct({}), { protocol: "TCP" }) });
    expect(toFieldSet({ ports: [{ port: 80 }] }, type).toFieldsV1()).toEqual({
      "f:ports": { 'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:port": {} } },
    });
  });

  it("refuses an item that omits every key and duplicate values in a set", () => {
    expect(() => toFieldSet({ list: [{ x: 1 }] }, keyed)).toThrow(TypedValueError);
    expect(() => toFieldSet({ list: ["a", "a"] }, set)).toThrow('.list: duplicate entries for key [="a"]');
  });

  it("owns undeclared keys (map entries, unknown fields) as members and declared structs only as parents", () => {
    const type = struct({ spec: struct({ data: mapOf(scalar) }) });
    expect(toFieldSet({ spec: { data: { k: "v" }, extra: { deep: 1 } } }, type).toFieldsV1()).toEqual({
      "f:spec": { "f:data": { "f:k": {} }, "f:extra": { ".": {}, "f:deep": {} } },
    });
  });
});

describe("compare", () => {
  it("does not count reordering a set or keyed list as a change", () => {
    const result = compare({ list: ["a", "b"] }, { list: ["b", "a"] }, set);
    expect([result.added.empty(), result.modified.empty(), result.removed.empty()]).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("reports added items with their fields, modified leaves and removed subtrees", () => {
    const result = compare(
      {
        list: [
          { name: "a", x: 1 },
          { name: "b", y: { z: 1 } },
        ],
      },
      { list: [{ name: "a", x: 2 }, { name: "c" }] },
      keyed,
    );
    expect(result.modified.toFieldsV1()).toEqual({ "f:list": { 'k:{"name":"a"}': { "f:x": {} } } });
    expect(result.added.toFieldsV1()).toEqual({ "f:list": { 'k:{"name":"c"}': { ".": {}, "f:name": {} } } });
    expect(result.removed.toFieldsV1()).toEqual({
      "f:list": { 'k:{"name":"b"}': { ".": {}, "f:name": {}, "f:y": { ".": {}, "f:z": {} } } },
    });
  });
});

describe("removeFields", () => {
  it("removes set items, keyed items and map keys", () => {
    const value = { list: ["a", "b"], data: { x: "1", y: "2" } };
    const type = struct({ list: setList, data: mapOf(scalar) });
    const remove = new FieldSet().insert(["f:list", 'v:"a"']).insert(["f:data", "f:x"]);
    removeFields(value, remove, new FieldSet(), type);
    expect(value).toEqual({ list: ["b"], data: { y: "2" } });
  });
});

describe("typeFromOpenAPI", () => {
  const schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          ports: {
            type: "array",
            "x-kubernetes-list-type": "map" as const,
            "x-kubernetes-list-map-keys": ["port", "protocol"],
            items: {
              type: "object",
              properties: { port: { type: "integer" }, protocol: { type: "string", default: "TCP" } },
            },
          },
          tags: { type: "array", "x-kubernetes-list-type": "set" as const, items: { type: "string" } },
          args: { type: "array", items: { type: "string" } },
          selector: {
            type: "object",
            "x-kubernetes-map-type": "atomic" as const,
            additionalProperties: { type: "string" },
          },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
    },
  };

  it("reads list types, map keys with defaults, atomic maps and preserve-unknown subtrees, and types metadata", () => {
    const type = typeFromOpenAPI(schema);
    const object = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", labels: { a: "b" } },
      spec: { ports: [{ port: 80 }], tags: ["x"], args: ["y"], selector: { k: "v" }, free: { a: { b: 1 } } },
    };
    expect(toFieldSet(object, type).toFieldsV1()).toEqual({
      "f:apiVersion": {},
      "f:kind": {},
      "f:metadata": { "f:labels": { "f:a": {} }, "f:name": {} },
      "f:spec": {
        "f:args": {},
        "f:free": { "f:a": { ".": {}, "f:b": {} } },
        "f:ports": { 'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:port": {} } },
        "f:selector": {},
        "f:tags": { 'v:"x"': {} },
      },
    });
  });
});
