import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareElements,
  FieldSet,
  fieldElement,
  keyElement,
  pathString,
  sortElements,
  valueElement,
} from "./fieldpath.js";

describe("FieldsV1", () => {
  it("sorts elements as upstream: fields by name, then keys, then values (numbers, strings, booleans), then indexes", () => {
    const set = new FieldSet();
    for (const element of [
      "i:1",
      "v:true",
      'v:"aa"',
      "v:1",
      'k:{"port":443,"protocol":"tcp"}',
      'k:{"name":"first"}',
      "f:aab",
      "f:aaa",
    ]) {
      set.insert([element]);
    }
    expect(JSON.stringify(set.toFieldsV1())).toBe(
      '{"f:aaa":{},"f:aab":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"v:1":{},"v:\\"aa\\"":{},"v:true":{},"i:1":{}}',
    );
  });

  it('puts "." first on a node that is a member and a parent, and reads it back', () => {
    const set = new FieldSet()
      .insert(["f:spec", 'k:{"name":"c"}'])
      .insert(["f:spec", 'k:{"name":"c"}', "f:image"]);
    const json = set.toFieldsV1();
    expect(JSON.stringify(json)).toBe('{"f:spec":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{}}}}');
    const back = FieldSet.fromFieldsV1(json);
    expect(back.has(["f:spec", 'k:{"name":"c"}'])).toBe(true);
    expect(back.has(["f:spec"])).toBe(false);
    expect(back.toFieldsV1()).toEqual(json);
  });

  it("spells keys with their fields sorted and compact, whatever order they came in", () => {
    expect(keyElement({ protocol: "TCP", containerPort: 80 })).toBe(
      'k:{"containerPort":80,"protocol":"TCP"}',
    );
    const back = FieldSet.fromFieldsV1({ 'k:{"protocol":"TCP","containerPort":80}': {} });
    expect(back.has(['k:{"containerPort":80,"protocol":"TCP"}'])).toBe(true);
  });

  it("ignores an unknown prefix and refuses a key without a colon at index 1", () => {
    expect(FieldSet.fromFieldsV1({ "x:what": {}, "f:a": {} }).paths()).toEqual([["f:a"]]);
    expect(() => FieldSet.fromFieldsV1({ bad: {} })).toThrow('unexpected path element "bad"');
  });
});

describe("pathString", () => {
  it.each([
    [["f:spec", "f:replicas"], ".spec.replicas"],
    [
      [
        "f:spec",
        "f:containers",
        'k:{"name":"nginx"}',
        "f:ports",
        'k:{"containerPort":80,"protocol":"TCP"}',
        "f:name",
      ],
      '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].name',
    ],
    [["f:metadata", "f:finalizers", valueElement("a")], '.metadata.finalizers[="a"]'],
    [["f:args", "i:3"], ".args[3]"],
    [[fieldElement("data"), fieldElement("a.b/c")], ".data.a.b/c"],
  ])("%j prints as %s", (path, expected) => {
    expect(pathString(path)).toBe(expected);
  });
});

describe("set operations", () => {
  const a = new FieldSet().insert(["f:a"]).insert(["f:b", "f:c"]).insert(["f:b", "f:d"]);
  const b = new FieldSet().insert(["f:b", "f:c"]).insert(["f:e"]);

  it("unites, subtracts and intersects members, dropping parents left without members", () => {
    expect(a.union(b).paths()).toEqual([["f:a"], ["f:e"], ["f:b", "f:c"], ["f:b", "f:d"]]);
    expect(a.difference(b).paths()).toEqual([["f:a"], ["f:b", "f:d"]]);
    expect(a.intersection(b).paths()).toEqual([["f:b", "f:c"]]);
    expect(a.intersection(new FieldSet().insert(["f:z"])).empty()).toBe(true);
  });
});

describe("sortElements", () => {
  const element = fc.oneof(
    fc.string().map(fieldElement),
    fc.record({ name: fc.string(), port: fc.integer() }, { requiredKeys: ["name"] }).map(keyElement),
    fc.oneof(fc.string(), fc.integer(), fc.boolean()).map(valueElement),
    fc.nat().map((i) => `i:${i}`),
  );

  it("orders as the generic sort with compareElements, for short lists and long", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 40 }), (elements) => {
        expect(sortElements([...elements])).toEqual([...elements].sort(compareElements));
      }),
    );
  });
});
