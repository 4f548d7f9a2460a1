import { describe, expect, it } from "vitest";
import { jsonLengthBounds } from "../json.js";
import { typeFor } from "./builtin-types.js";
import { FieldSet } from "./fieldpath.js";
import { decodeFieldsV1, encodeFieldSet, isSharedFieldsV1 } from "./fields-v1.js";
import { trackUpdate } from "./managed-fields.js";

type Obj = Record<string, unknown>;
const now = new Date("2024-01-02T00:00:00.000Z");

function set(...paths: string[][]): FieldSet {
  const out = new FieldSet();
  for (const path of paths) out.insert(path);
  return out;
}

describe("shared FieldsV1 trees", () => {
  it("encodes equal sets built apart to one frozen tree, in FieldsV1 order", () => {
    const a = set(["f:spec", "f:replicas"], ["f:metadata", "f:labels", "f:app"], ["f:spec"]);
    const b = set(["f:spec"], ["f:metadata", "f:labels", "f:app"], ["f:spec", "f:replicas"]);
    const tree = encodeFieldSet(a);
    expect(encodeFieldSet(b)).toBe(tree);
    expect(Object.isFrozen(tree)).toBe(true);
    expect(Object.isFrozen(tree["f:spec"])).toBe(true);
    expect(JSON.stringify(tree)).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{".":{},"f:replicas":{}}}',
    );
    expect(tree).toEqual(a.toFieldsV1());
    expect(isSharedFieldsV1(tree)).toBe(true);
    expect(isSharedFieldsV1(structuredClone(tree))).toBe(false);
  });

  it("encodes a shape met before from its tokens, and tells apart shapes that differ in one element", () => {
    const make = (last: string) =>
      set(
        ["f:metadata", "f:labels", "f:app"],
        ["f:spec", "f:containers", 'k:{"name":"web"}', last],
        ["f:spec"],
      );
    // The first encoding writes text; the second adds the tokens to the trie; the rest read the trie.
    const trees = [0, 1, 2, 3].map(() => encodeFieldSet(make("f:image")));
    for (const tree of trees) expect(tree).toBe(trees[0]);
    const other = encodeFieldSet(make("f:args"));
    expect(other).not.toBe(trees[0]);
    expect(other).toEqual(make("f:args").toFieldsV1());
    // A member whose only children are empty is written as upstream writes it.
    const hollow = set(["f:spec"]);
    hollow.children.get("f:spec")!.children.set("f:gone", new FieldSet());
    for (let time = 0; time < 3; time++)
      expect(JSON.stringify(encodeFieldSet(hollow))).toBe('{"f:spec":{".":{}}}');
  });

  it("shares every subtree: sets that differ in one path share the nodes off it", () => {
    const spec = ["f:spec", "f:containers", 'k:{"name":"web"}', "f:image"];
    const a = encodeFieldSet(set(["f:metadata", "f:labels", "f:app"], spec));
    const b = encodeFieldSet(set(["f:metadata", "f:labels", "f:tier"], spec));
    expect(b).not.toBe(a);
    expect(b["f:spec"]).toBe(a["f:spec"]);
    // An update's set: the decoded set with one path added shares the decoded subtrees.
    const grown = decodeFieldsV1(a).union(set(["f:metadata", "f:labels", "f:tier"]));
    const c = encodeFieldSet(grown);
    expect(c["f:spec"]).toBe(a["f:spec"]);
    expect(JSON.stringify(c)).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"web\\"}":{"f:image":{}}}}}',
    );
    expect(isSharedFieldsV1(c["f:spec"])).toBe(true);
  });

  it("decodes a shared tree to a set that encodes back to the same tree", () => {
    const tree = encodeFieldSet(set(["f:data", "f:key"]));
    const decoded = decodeFieldsV1(tree);
    expect(decoded.has(["f:data", "f:key"])).toBe(true);
    expect(decodeFieldsV1(tree)).toBe(decoded);
    expect(encodeFieldSet(decoded)).toBe(tree);
    // A copy (as read from the wire) decodes to an equal set and the same shared tree.
    expect(encodeFieldSet(decodeFieldsV1(JSON.parse(JSON.stringify(tree))))).toBe(tree);
  });

  it("leaves set operations' operands unchanged and returns an operand when nothing changes", () => {
    const owned = set(["f:spec", "f:replicas"], ["f:spec", "f:paused"]);
    const touched = set(["f:metadata", "f:labels", "f:x"]);
    expect(owned.difference(touched)).toBe(owned);
    expect(owned.union(set(["f:spec", "f:replicas"]))).toBe(owned);
    const smaller = owned.difference(set(["f:spec", "f:paused"]));
    expect(smaller.paths()).toEqual([["f:spec", "f:replicas"]]);
    expect(owned.paths()).toEqual([
      ["f:spec", "f:paused"],
      ["f:spec", "f:replicas"],
    ]);
    const bigger = owned.union(touched);
    expect(bigger.paths()).toHaveLength(3);
    expect(owned.paths()).toHaveLength(2);
    expect(touched.paths()).toEqual([["f:metadata", "f:labels", "f:x"]]);
  });
});

describe("ownership of a created object", () => {
  // The create path serializes straight from the object; a manager list in the
  // request (another manager's empty entry) sends the same create through the
  // general path of field sets, which must give the same FieldsV1.
  function created(object: Obj, resetFields: string[][] = []): unknown {
    const type = typeFor(String(object.apiVersion), String(object.kind));
    const options = {
      before: undefined,
      manager: "m",
      apiVersion: String(object.apiVersion),
      now,
      type,
      resetFields,
    };
    const fields = (o: Obj) =>
      ((o.metadata as Obj).managedFields as Obj[] | undefined)
        ?.filter((e) => e.manager === "m")
        .map((e) => e.fieldsV1);
    const fast = trackUpdate({ ...options, after: object });
    // However often a shape is met (text the first time, the trie after), it is one tree.
    for (let time = 0; time < 2; time++) {
      const again = trackUpdate({ ...options, after: structuredClone(object) });
      expect(fields(again)?.[0]).toBe(fields(fast)?.[0]);
    }
    const other = {
      manager: "x",
      operation: "Update",
      apiVersion: "v1",
      fieldsType: "FieldsV1",
      fieldsV1: {},
    };
    const metadata = { ...(object.metadata as Obj), managedFields: [other] };
    const general = trackUpdate({ ...options, after: { ...object, metadata } });
    expect(JSON.stringify(fields(fast))).toBe(JSON.stringify(fields(general)));
    return fields(fast);
  }

  const pod: Obj = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-1",
      namespace: "default",
      uid: "u",
      resourceVersion: "5",
      creationTimestamp: "2024-01-02T00:00:00Z",
      generation: 1,
      labels: { app: "web", "z-last": "1", a: "2" },
      annotations: {},
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "r", controller: true },
      ],
      finalizers: ["b", "a"],
    },
    spec: {
      containers: [
        {
          name: "web",
          image: "nginx",
          ports: [{ containerPort: 8080 }, { containerPort: 53, protocol: "UDP" }, { containerPort: 53 }],
          env: [
            { name: "B", value: "1" },
            { name: "A", valueFrom: { fieldRef: { fieldPath: "x" } } },
          ],
          resources: {},
          args: ["--a", "--b"],
        },
        { name: "sidecar", image: "busybox", command: null },
      ],
      nodeSelector: { disk: "ssd" },
      tolerations: [{ key: "k", operator: "Exists" }],
      securityContext: {},
      unknownField: { nested: { deep: [1, 2] } },
    },
    status: { phase: "Pending", conditions: [{ type: "Ready", status: "False" }] },
  };

  it("matches the general path for a pod, its status reset or not", () => {
    expect(created(pod, [["status"]])).toHaveLength(1);
    created(pod);
  });

  it("matches the general path for kinds with zero-valued structs and unknown kinds", () => {
    created({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: {}, spec: { containers: [] } } },
    });
    created({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
      spec: { size: 3, list: [1] },
    });
    created({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", labels: {} },
      data: { "a.b": "1" },
    });
  });

  it("takes the general path for a keyed list with a repeated key, with the same result", () => {
    const repeated = structuredClone(pod);
    const spec = repeated.spec as Obj;
    spec.containers = [...(spec.containers as Obj[]), { name: "web", image: "other", tty: true }];
    created(repeated, [["status"]]);
  });

  it("writes no managedFields when nothing is owned", () => {
    const result = trackUpdate({
      before: undefined,
      after: { apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } },
      manager: "m",
      apiVersion: "v1",
      now,
      type: typeFor("v1", "Namespace"),
    });
    expect(result.metadata).toEqual({ name: "n" });
  });

  it("shares one tree between objects made from one template", () => {
    const make = (name: string) =>
      trackUpdate({
        before: undefined,
        after: { ...pod, metadata: { ...(pod.metadata as Obj), name } },
        manager: "m",
        apiVersion: "v1",
        now,
        type: typeFor("v1", "Pod"),
      });
    const entries = (o: Obj) => (o.metadata as Obj).managedFields as Obj[];
    const a = make("a");
    const b = make("b");
    expect(entries(a)[0]!.fieldsV1).toBe(entries(b)[0]!.fieldsV1);
    // Counted without serializing the tree again, to the character.
    expect(jsonLengthBounds(a).lower).toBe(JSON.stringify(a).length);
  });
});
