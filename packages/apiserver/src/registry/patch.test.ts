import { describe, expect, it } from "vitest";
import { jsonPatch, mergePatch, mergePatchShared, strategicMergePatch } from "./patch.js";

describe("mergePatch (RFC 7386)", () => {
  // The examples of RFC 7386, appendix A.
  const cases: [unknown, unknown, unknown][] = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [original, patch, expected] of cases) {
    it(`${JSON.stringify(original)} + ${JSON.stringify(patch)} = ${JSON.stringify(expected)}`, () => {
      expect(mergePatch(original, patch)).toEqual(expected);
      // The store's form, for an object patch: the same result, sharing what it can.
      if (typeof patch === "object" && patch !== null && !Array.isArray(patch))
        expect(mergePatchShared(original, patch as Record<string, unknown>)).toEqual(expected);
    });
  }

  it("shares what the patch leaves alone with the original, and changes neither", () => {
    const original = { spec: { containers: [{ name: "a" }] }, status: { phase: "Pending", ip: "x" } };
    const patch = { status: { phase: "Running", ip: null, conditions: [{ type: "Ready" }] } };
    const before = structuredClone({ original, patch });
    const result = mergePatchShared(original, patch) as typeof original & { status: Record<string, unknown> };
    expect(result).toEqual({
      spec: { containers: [{ name: "a" }] },
      status: { phase: "Running", conditions: [{ type: "Ready" }] },
    });
    expect(result.spec).toBe(original.spec);
    expect(result.status).not.toBe(original.status);
    expect(result.status.conditions).toBe(patch.status.conditions);
    expect({ original, patch }).toEqual(before);
  });

  it("leaves the original untouched, and shares nothing with either argument", () => {
    const original = { a: { b: 1 }, kept: { c: [1] } };
    const patch = { a: { b: 2 }, added: { d: [2] } };
    const result = mergePatch(original, patch) as typeof original & typeof patch;
    expect(original).toEqual({ a: { b: 1 }, kept: { c: [1] } });
    expect(result).toEqual({ a: { b: 2 }, kept: { c: [1] }, added: { d: [2] } });
    expect(result.kept).not.toBe(original.kept);
    expect(result.added).not.toBe(patch.added);
    expect(result.added.d).not.toBe(patch.added.d);
  });
});

describe("jsonPatch (RFC 6902)", () => {
  const doc = () => ({ a: { b: [1, 2, 3] }, "x/y": { "m~n": 1 } });
  const cases: { name: string; ops: unknown[]; expected: unknown }[] = [
    { name: "add a member", ops: [{ op: "add", path: "/c", value: 4 }], expected: { ...doc(), c: 4 } },
    {
      name: "add to the end of an array with -",
      ops: [{ op: "add", path: "/a/b/-", value: 9 }],
      expected: { ...doc(), a: { b: [1, 2, 3, 9] } },
    },
    {
      name: "insert into an array",
      ops: [{ op: "add", path: "/a/b/1", value: 9 }],
      expected: { ...doc(), a: { b: [1, 9, 2, 3] } },
    },
    {
      name: "remove an element",
      ops: [{ op: "remove", path: "/a/b/0" }],
      expected: { ...doc(), a: { b: [2, 3] } },
    },
    {
      name: "replace through escaped tokens (~1 for /, ~0 for ~)",
      ops: [{ op: "replace", path: "/x~1y/m~0n", value: 2 }],
      expected: { ...doc(), "x/y": { "m~n": 2 } },
    },
    {
      name: "move",
      ops: [{ op: "move", from: "/a/b", path: "/moved" }],
      expected: { a: {}, "x/y": { "m~n": 1 }, moved: [1, 2, 3] },
    },
    { name: "copy", ops: [{ op: "copy", from: "/a/b/2", path: "/c" }], expected: { ...doc(), c: 3 } },
    { name: "a passing test", ops: [{ op: "test", path: "/a/b", value: [1, 2, 3] }], expected: doc() },
  ];
  for (const { name, ops, expected } of cases) {
    it(name, () => {
      expect(jsonPatch(doc(), ops)).toEqual(expected);
    });
  }

  const failures: { name: string; ops: unknown; code: number; message: RegExp }[] = [
    { name: "a patch that is not a list", ops: { op: "add" }, code: 400, message: /must be an array/ },
    { name: "an unknown op", ops: [{ op: "frob", path: "/a" }], code: 400, message: /unknown op "frob"/ },
    { name: "add without a value", ops: [{ op: "add", path: "/a" }], code: 400, message: /has no "value"/ },
    {
      name: "a pointer without a leading slash",
      ops: [{ op: "remove", path: "a" }],
      code: 400,
      message: /must start with/,
    },
    {
      name: "removing a missing member",
      ops: [{ op: "remove", path: "/nope" }],
      code: 422,
      message: /does not exist/,
    },
    {
      name: "an index out of range",
      ops: [{ op: "replace", path: "/a/b/7", value: 1 }],
      code: 422,
      message: /out of range/,
    },
    {
      name: "a failing test",
      ops: [{ op: "test", path: "/a/b/0", value: 2 }],
      code: 422,
      message: /testing value/,
    },
  ];
  for (const { name, ops, code, message } of failures) {
    it(`rejects ${name} with ${code}`, () => {
      let caught: { status?: { code: number }; message: string } | undefined;
      try {
        jsonPatch(doc(), ops);
      } catch (error) {
        caught = error as typeof caught;
      }
      expect(caught?.status?.code).toBe(code);
      expect(caught?.message).toMatch(message);
    });
  }

  /** The Status a patch fails with. */
  function failure(run: () => unknown): {
    code: number | undefined;
    reason: string | undefined;
    message: string;
  } {
    try {
      run();
    } catch (error) {
      const status = (error as { status?: { code: number; reason: string } }).status;
      return { code: status?.code, reason: status?.reason, message: (error as Error).message };
    }
    throw new Error("the patch applied");
  }

  it("accepts 10,000 operations and answers 413 for 10,001, as kube-apiserver's maxJSONPatchOperations", () => {
    const ops = Array.from({ length: 10_000 }, () => ({ op: "test", path: "/a/b/0", value: 1 }));
    expect(jsonPatch(doc(), ops)).toEqual(doc());
    expect(failure(() => jsonPatch(doc(), [...ops, { op: "test", path: "/a/b/0", value: 1 }]))).toEqual({
      code: 413,
      reason: "RequestEntityTooLarge",
      message: "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    });
  });

  it("stops copy operations once they have added 3 MiB (kube-apiserver's JSONPatchMaxCopyBytes) with a 422", () => {
    // Each copy of the document into itself doubles it: 16 of them would make a ~6 MB document.
    const original = { a: "x".repeat(80) };
    const ops = Array.from({ length: 16 }, (_, i) => ({ op: "copy", from: "", path: `/c${i}` }));
    const result = failure(() => jsonPatch(original, ops));
    expect(result.code).toBe(422);
    expect(result.reason).toBe("Invalid");
    expect(result.message).toMatch(
      /^the JSON patch could not be applied: operation 15 \(copy \/c15\): Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/,
    );
    expect(original).toEqual({ a: "x".repeat(80) });
  });

  it("counts every copy against the limit, even of small values", () => {
    const original = { a: "x".repeat(1024 * 1024) };
    const ops = [
      { op: "copy", from: "/a", path: "/b" },
      { op: "copy", from: "/a", path: "/c" },
      { op: "remove", path: "/b" },
      { op: "remove", path: "/c" },
      { op: "copy", from: "/a", path: "/d" },
    ];
    expect(failure(() => jsonPatch(original, ops)).message).toMatch(
      /operation 4 \(copy \/d\): Unable to complete the copy, the accumulated size increase of copy is 3145734, exceeding the limit 3145728$/,
    );
    expect(jsonPatch(original, ops.slice(0, 4))).toEqual(original);
  });

  it("answers 422 for an operation that would nest the document more than 512 levels deep", () => {
    const nested = (depth: number): unknown => {
      let value: unknown = "leaf";
      for (let i = 0; i < depth; i++) value = { a: value };
      return value;
    };
    // The document and the value are 300 levels deep each; together they would be 600.
    const original = { a: nested(300) };
    const path = `/a${"/a".repeat(299)}`;
    const result = failure(() => jsonPatch(original, [{ op: "add", path, value: nested(300) }]));
    expect(result.code).toBe(422);
    expect(result.message).toMatch(/would nest the object more than 512 levels deep$/);
    // Moving and copying a deep value deeper are bounded the same way.
    expect(failure(() => jsonPatch(original, [{ op: "copy", from: "/a", path }])).message).toMatch(
      /operation 0 \(copy .*\): the value would nest the object more than 512 levels deep$/,
    );
    expect(
      jsonPatch({ a: nested(100) }, [{ op: "add", path: `/a${"/a".repeat(99)}`, value: nested(100) }]),
    ).toEqual(nested(200));
  });

  it("applies all operations or none", () => {
    const original = doc();
    expect(() =>
      jsonPatch(original, [
        { op: "add", path: "/c", value: 1 },
        { op: "test", path: "/c", value: 2 },
      ]),
    ).toThrow();
    expect(original).toEqual(doc());
  });
});

describe("strategicMergePatch", () => {
  const podSpec = () => ({
    spec: {
      containers: [
        {
          name: "app",
          image: "app:1",
          env: [
            { name: "A", value: "1" },
            { name: "B", value: "2" },
          ],
        },
        { name: "sidecar", image: "side:1" },
      ],
      volumes: [{ name: "v1", emptyDir: {} }],
      tolerations: [{ key: "a" }],
    },
    metadata: {
      finalizers: ["x"],
      ownerReferences: [{ uid: "u1", name: "one" }],
    },
    status: {
      conditions: [
        { type: "Ready", status: "False" },
        { type: "Scheduled", status: "True" },
      ],
    },
  });

  const cases: {
    name: string;
    patch: Record<string, unknown>;
    check: (result: ReturnType<typeof podSpec>) => unknown;
    expected: unknown;
  }[] = [
    {
      name: "merges containers by name and keeps the others",
      patch: { spec: { containers: [{ name: "sidecar", image: "side:2" }] } },
      check: (r) => r.spec.containers.map((c) => `${c.name}=${c.image}`),
      expected: ["app=app:1", "sidecar=side:2"],
    },
    {
      name: "merges env by name inside a merged container",
      patch: {
        spec: {
          containers: [
            {
              name: "app",
              env: [
                { name: "B", value: "3" },
                { name: "C", value: "4" },
              ],
            },
          ],
        },
      },
      check: (r) => r.spec.containers[0]!.env!.map((e) => `${e.name}=${e.value}`),
      expected: ["A=1", "B=3", "C=4"],
    },
    {
      name: "deletes a list element with $patch: delete",
      patch: { spec: { containers: [{ name: "app", $patch: "delete" }] } },
      check: (r) => r.spec.containers.map((c) => c.name),
      expected: ["sidecar"],
    },
    {
      name: "replaces a whole list with a $patch: replace element",
      patch: { spec: { volumes: [{ $patch: "replace" }, { name: "v2", emptyDir: {} }] } },
      check: (r) => r.spec.volumes,
      expected: [{ name: "v2", emptyDir: {} }],
    },
    {
      name: "replaces a list without a merge key (tolerations are atomic)",
      patch: { spec: { tolerations: [{ key: "b" }] } },
      check: (r) => r.spec.tolerations,
      expected: [{ key: "b" }],
    },
    {
      name: "merges conditions by type",
      patch: { status: { conditions: [{ type: "Ready", status: "True" }] } },
      check: (r) => r.status.conditions,
      expected: [
        { type: "Ready", status: "True" },
        { type: "Scheduled", status: "True" },
      ],
    },
    {
      name: "merges ownerReferences by uid",
      patch: { metadata: { ownerReferences: [{ uid: "u2", name: "two" }] } },
      check: (r) => r.metadata.ownerReferences.map((o) => o.uid),
      expected: ["u1", "u2"],
    },
    {
      name: "merges finalizers as a set",
      patch: { metadata: { finalizers: ["x", "y"] } },
      check: (r) => r.metadata.finalizers,
      expected: ["x", "y"],
    },
    {
      name: "removes from a primitive list with $deleteFromPrimitiveList",
      patch: { metadata: { "$deleteFromPrimitiveList/finalizers": ["x"] } },
      check: (r) => r.metadata.finalizers,
      expected: [],
    },
    {
      name: "orders a merged list with $setElementOrder",
      patch: {
        spec: {
          "$setElementOrder/containers": [{ name: "sidecar" }, { name: "app" }],
          containers: [{ name: "app", image: "app:2" }],
        },
      },
      check: (r) => r.spec.containers.map((c) => `${c.name}=${c.image}`),
      expected: ["sidecar=side:1", "app=app:2"],
    },
    {
      name: "places each element once when $setElementOrder names it twice, and keeps unnamed ones after",
      patch: {
        spec: {
          "$setElementOrder/containers": [{ name: "app" }, { name: "app" }, { name: "absent" }],
          containers: [{ name: "new", image: "new:1" }],
        },
      },
      check: (r) => r.spec.containers.map((c) => c.name),
      expected: ["app", "sidecar", "new"],
    },
    {
      name: "deletes an element by merge key with $patch: delete and appends new keys",
      patch: {
        spec: {
          containers: [
            { name: "sidecar", $patch: "delete" },
            { name: "third", image: "third:1" },
          ],
        },
      },
      check: (r) => r.spec.containers.map((c) => `${c.name}=${c.image}`),
      expected: ["app=app:1", "third=third:1"],
    },
    {
      name: "replaces a map with $patch: replace",
      patch: { status: { $patch: "replace", phase: "Running" } },
      check: (r) => r.status,
      expected: { phase: "Running" },
    },
    {
      name: "keeps only the listed keys with $retainKeys",
      patch: { spec: { $retainKeys: ["containers"], containers: [] } },
      check: (r) => Object.keys(r.spec),
      expected: ["containers"],
    },
    {
      name: "deletes a member set to null",
      patch: { status: null },
      check: (r) => "status" in r,
      expected: false,
    },
  ];
  for (const { name, patch, check, expected } of cases) {
    it(name, () => {
      expect(check(strategicMergePatch(podSpec(), patch) as ReturnType<typeof podSpec>)).toEqual(expected);
    });
  }

  it("answers 400 for an element without the list's merge key and for an unknown directive", () => {
    expect(() => strategicMergePatch(podSpec(), { spec: { containers: [{ image: "x" }] } })).toThrow(
      /does not contain declared merge key: name/,
    );
    expect(() => strategicMergePatch(podSpec(), { spec: { $patch: "explode" } })).toThrow(
      /unknown patch directive/,
    );
  });

  it("merges a __proto__ member as an ordinary key and never touches Object.prototype", () => {
    // JSON.parse makes "__proto__" an own member, as a request body does.
    const patch = JSON.parse('{"__proto__":{"polluted":"yes"},"metadata":{"__proto__":{"polluted":"yes"}}}');
    strategicMergePatch(podSpec(), patch);
    expect(Object.hasOwn(Object.prototype, "polluted")).toBe(false);
    expect(({} as { polluted?: string }).polluted).toBeUndefined();
  });
});
