import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ListDecoder } from "./list-decoder.js";

function decodeInChunks(text: string, cuts: number[]): unknown {
  const bytes = Buffer.from(text);
  const points = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  const decoder = new ListDecoder();
  for (let i = 1; i < points.length; i++) decoder.push(bytes.subarray(points[i - 1], points[i]));
  return decoder.end();
}

const list = {
  kind: "PodList",
  apiVersion: "v1",
  metadata: { resourceVersion: "42", continue: 'x"items"[{' },
  items: [
    { metadata: { name: "a", annotations: { note: 'braces } ] { [ and "quotes" \\ and ☃' } } },
    { metadata: { name: "b\\" }, spec: { list: [1, [2, { deep: [] }]] } },
    { metadata: { name: "c" }, items: [{ nested: "items" }] },
  ],
};

describe("ListDecoder", () => {
  it("decodes a list whose items are parsed one by one", () => {
    const text = JSON.stringify(list);
    const decoder = new ListDecoder();
    decoder.push(Buffer.from(text));
    expect(decoder.items).toHaveLength(3);
    expect(decoder.end()).toEqual(list);
  });

  it("gives the same result wherever the chunks are cut", () => {
    const text = JSON.stringify(list, null, 1);
    fc.assert(
      fc.property(fc.array(fc.nat(Buffer.byteLength(text)), { maxLength: 12 }), (cuts) => {
        expect(decodeInChunks(text, cuts)).toEqual(list);
      }),
    );
  });

  it("handles an empty or missing items array and items before the metadata", () => {
    expect(decodeInChunks('{"kind":"PodList","items":[],"metadata":{}}', [5, 20])).toEqual({
      kind: "PodList",
      items: [],
      metadata: {},
    });
    expect(decodeInChunks('{"kind":"Status","code":200}', [3])).toEqual({ kind: "Status", code: 200 });
    expect(decodeInChunks('{"items":[{"a":1}],"metadata":{"resourceVersion":"1"}}', [12])).toEqual({
      items: [{ a: 1 }],
      metadata: { resourceVersion: "1" },
    });
  });

  it("matches JSON.parse on arbitrary JSON lists", () => {
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 5 }),
        fc.dictionary(
          fc.string().filter((k) => k !== "items"),
          fc.jsonValue(),
          { maxKeys: 3 },
        ),
        fc.array(fc.nat(400), { maxLength: 6 }),
        (items, extra, cuts) => {
          const value = { ...extra, items };
          const text = JSON.stringify(value);
          expect(decodeInChunks(text, cuts)).toEqual(JSON.parse(text));
        },
      ),
    );
  });

  it("reports a body cut short or not JSON as a SyntaxError", () => {
    expect(() => decodeInChunks('{"items":[{"a":1}', [])).toThrow(SyntaxError);
    expect(() => decodeInChunks("[1,2]", [])).toThrow(SyntaxError);
    expect(() => decodeInChunks('{"items":[{"a":nope}]}', [])).toThrow(SyntaxError);
  });
});
