import { type ConfigMap, configMaps } from "@reconcile/api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";
import {
  copyPlainJson,
  hasNoMembers,
  jsonLengthBounds,
  nestedTooDeep,
  type PlainCopy,
  sortedKeys,
  withMember,
} from "./json.js";

/** A copy the test expects to be plain. */
function plainCopy(value: unknown, keep?: (value: object) => number | undefined): PlainCopy {
  const result = copyPlainJson(value, keep);
  if (result === undefined || result === nestedTooDeep) throw new Error("expected a plain copy");
  return result;
}

describe("copyPlainJson", () => {
  const plain = {
    s: 'quote " backslash \\ newline \n and \u2028',
    n: [0, -1.5, 1e21, 123456789, -0],
    b: [true, false],
    nothing: null,
    nested: { list: [{ a: "x" }, [], {}], empty: "" },
    dropped: undefined,
  };

  it("copies plain JSON as a JSON round trip does, sharing nothing", () => {
    const result = plainCopy(plain);
    const roundTrip = JSON.parse(JSON.stringify(plain));
    expect(result?.copy).toEqual(roundTrip);
    expect(Object.keys(result?.copy as object)).toEqual(Object.keys(roundTrip));
    expect(Object.is((result?.copy as typeof plain).n[4], 0)).toBe(true);
    expect((result?.copy as typeof plain).nested).not.toBe(plain.nested);
    expect((result?.copy as typeof plain).nested.list[0]).not.toBe(plain.nested.list[0]);
  });

  it("bounds the JSON length from above, within six times it", () => {
    for (const value of [plain, { s: "\u0001".repeat(100) }, { k: "x".repeat(1000) }, [], {}, "", 0]) {
      const length = JSON.stringify(value).length;
      const bound = plainCopy(value).maxLength;
      expect(bound).toBeGreaterThanOrEqual(length);
      expect(bound).toBeLessThanOrEqual(6 * length + 25);
    }
  });

  it("keeps a JSON.parse'd __proto__ member as an own member, not a prototype", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const copy = plainCopy(parsed).copy as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(copy.polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it("declines what JSON would convert", () => {
    for (const value of [
      { at: new Date(0) },
      { n: Number.NaN },
      { n: Number.POSITIVE_INFINITY },
      { f: () => 1 },
      [1, undefined],
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
      [1, , 2],
      { m: new Map() },
      { s: Symbol("x") },
    ]) {
      expect(copyPlainJson(value)).toBeUndefined();
    }
  });

  it("shares what `keep` accepts, counting the length it gives", () => {
    const shared = Object.freeze({ "f:a": {} });
    const result = plainCopy({ tree: shared, other: { x: 1 } }, (value) =>
      value === shared ? 1000 : undefined,
    );
    expect((result.copy as { tree: unknown }).tree).toBe(shared);
    expect(result.maxLength).toBeGreaterThanOrEqual(1000);
  });

  it("says whether an object member is null or named __proto__, at any depth", () => {
    expect(plainCopy({ a: [{ b: 1 }, null], c: { d: "x" } }).oddMembers).toBe(false);
    expect(plainCopy({ a: [{ b: null }] }).oddMembers).toBe(true);
    expect(plainCopy(JSON.parse('{"a": {"__proto__": 1}}')).oddMembers).toBe(true);
  });

  it("stops at the nesting limit, counting the value itself as level 1, and a value that holds itself", () => {
    const nested = (levels: number): unknown => {
      let value: unknown = {};
      for (let i = 1; i < levels; i++) value = i % 2 ? [value] : { v: value };
      return value;
    };
    expect(copyPlainJson(nested(3), undefined, 3)).not.toBe(nestedTooDeep);
    expect(copyPlainJson(nested(4), undefined, 3)).toBe(nestedTooDeep);
    expect(copyPlainJson(nested(512))).not.toBe(nestedTooDeep);
    expect(copyPlainJson(nested(513))).toBe(nestedTooDeep);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(copyPlainJson(cyclic)).toBe(nestedTooDeep);
  });
});

describe("jsonLengthBounds", () => {
  it("is exact below for text without escapes, whatever the numbers", () => {
    const value = {
      numbers: [0, 7, 10, 99, -5, 1.5, -0.25, 1e21, 123456789012345680, -0, 1e-7, 999999999999999],
      flags: [true, false, null],
      nested: { a: [{}, [], ""], b: "text with spaces and ünïcödé" },
      skipped: undefined,
      elements: [undefined, 1],
    };
    expect(jsonLengthBounds(value).lower).toBe(JSON.stringify(value).length);
  });

  it("brackets text with escapes, and counts frozen trees through their JSON", () => {
    const value = { q: 'a "quoted" \\ value\n\u0001', tree: Object.freeze({ "f:x": {} }) };
    const { lower, upper } = jsonLengthBounds(value);
    const exact = JSON.stringify(value).length;
    expect(lower).toBeLessThan(exact);
    expect(upper).toBeGreaterThanOrEqual(exact);
  });
});

describe("bodies in process that are not plain JSON", () => {
  it("are stored as their JSON: a Date as its string, NaN as absent", async () => {
    const api = new ApiServer();
    try {
      const client = api.client().resource(configMaps, "default");
      const created = await client.create({
        metadata: { name: "odd", annotations: { at: new Date(0) as unknown as string } },
        data: { a: "1" },
        binaryData: undefined,
        immutable: Number.NaN as unknown as boolean,
      } as unknown as ConfigMap);
      expect(created.metadata?.annotations).toEqual({ at: "1970-01-01T00:00:00.000Z" });
      expect("immutable" in created).toBe(false);
      expect("binaryData" in created).toBe(false);
      await expect(
        client.create({ metadata: { name: "big" }, data: { n: 1n as unknown as string } } as ConfigMap),
      ).rejects.toMatchObject({
        status: {
          code: 400,
          message: expect.stringContaining(
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: the body is not JSON',
          ),
        },
      });
      const throwing = {
        metadata: { name: "getter" },
        get data(): Record<string, string> {
          throw new Error("no data here");
        },
      };
      await expect(client.create(throwing as ConfigMap)).rejects.toMatchObject({
        status: {
          code: 400,
          message:
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: the body is not JSON: no data here',
        },
      });
      expect((await client.list()).items.map((c) => c.metadata?.name)).toEqual(["odd"]);
    } finally {
      await api.close();
    }
  });
});

describe("sortedKeys", () => {
  it("orders keys as Object.keys(...).sort() does, for few keys and many", () => {
    const keys = sortedKeys({ b: 1, a: 2, "": 3, B: 4, é: 5, "10": 6, "9": 7 });
    expect(keys).toEqual(["", "10", "9", "B", "a", "b", "é"]);
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary" }), fc.integer(), { maxKeys: 40 }), (value) => {
        expect(sortedKeys(value)).toEqual(Object.keys(value).sort());
      }),
    );
  });
});

describe("withMember", () => {
  it("replaces a member where it was, adds a new one last, and leaves the source alone", () => {
    const source = { a: 1, b: { c: 2 }, d: 3 };
    const replaced = withMember(source, "b", "x");
    expect(JSON.stringify(replaced)).toBe('{"a":1,"b":"x","d":3}');
    const added = withMember(source, "e", [4]);
    expect(JSON.stringify(added)).toBe('{"a":1,"b":{"c":2},"d":3,"e":[4]}');
    expect(added.b).toBe(source.b);
    expect(source).toEqual({ a: 1, b: { c: 2 }, d: 3 });
  });

  it("drops the member for undefined, and adds nothing when it was absent", () => {
    expect(JSON.stringify(withMember({ a: 1, b: 2, c: 3 }, "b", undefined))).toBe('{"a":1,"c":3}');
    expect(JSON.stringify(withMember({ a: 1 }, "z", undefined))).toBe('{"a":1}');
  });

  it("keeps a parsed __proto__ member as an own member, never as the prototype", () => {
    const source = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as object;
    const copy = withMember(source, "a", 2);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":2}');
  });
});

describe("hasNoMembers", () => {
  it("answers as Object.keys(object).length === 0 does", () => {
    expect(hasNoMembers({})).toBe(true);
    expect(hasNoMembers({ a: undefined })).toBe(false);
    expect(hasNoMembers(JSON.parse('{"__proto__":1}') as object)).toBe(false);
    expect(hasNoMembers([])).toBe(true);
  });
});
