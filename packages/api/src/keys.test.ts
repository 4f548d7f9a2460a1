import { describe, expect, it } from "vitest";
import {
  DeletedFinalStateUnknown,
  deletionHandlingMetaNamespaceKeyFunc,
  isDeletedFinalStateUnknown,
  metaNamespaceKeyFunc,
  splitMetaNamespaceKey,
} from "./keys.js";
import type { KubeObject } from "./types.js";

describe("keys", () => {
  it("metaNamespaceKeyFunc gives namespace/name, or name for cluster-scoped objects", () => {
    expect(metaNamespaceKeyFunc({ metadata: { name: "web", namespace: "default" } })).toBe("default/web");
    expect(metaNamespaceKeyFunc({ metadata: { name: "node-1" } })).toBe("node-1");
    expect(metaNamespaceKeyFunc({ metadata: { name: "node-1", namespace: "" } })).toBe("node-1");
  });

  it("metaNamespaceKeyFunc passes a string through as an explicit key", () => {
    expect(metaNamespaceKeyFunc("ns/already-a-key")).toBe("ns/already-a-key");
  });

  it("metaNamespaceKeyFunc rejects objects without metadata or name", () => {
    expect(() => metaNamespaceKeyFunc({})).toThrow("object has no metadata: cannot compute its key");
    expect(() => metaNamespaceKeyFunc({ metadata: { namespace: "ns" } })).toThrow(
      "object has no metadata.name: cannot compute its key",
    );
    expect(() => metaNamespaceKeyFunc({ metadata: { name: "" } })).toThrow(
      "object has no metadata.name: cannot compute its key",
    );
  });

  it("deletionHandlingMetaNamespaceKeyFunc returns a tombstone's key as is", () => {
    const obj: KubeObject = { metadata: { name: "web", namespace: "default" } };
    expect(deletionHandlingMetaNamespaceKeyFunc(new DeletedFinalStateUnknown("old/key", obj))).toBe(
      "old/key",
    );
    expect(deletionHandlingMetaNamespaceKeyFunc(obj)).toBe("default/web");
  });

  it("isDeletedFinalStateUnknown tells tombstones from objects", () => {
    const obj: KubeObject = { metadata: { name: "web" } };
    const tombstone = new DeletedFinalStateUnknown("web", obj);
    expect(isDeletedFinalStateUnknown<KubeObject>(tombstone)).toBe(true);
    expect(isDeletedFinalStateUnknown<KubeObject>(obj)).toBe(false);
    expect(tombstone.obj).toBe(obj);
  });

  it("recognises a tombstone made by another copy of the package (a Symbol.for marker, not instanceof)", () => {
    const obj: KubeObject = { metadata: { name: "web" } };
    const foreign = { [Symbol.for("reconcile.deleted-final-state-unknown")]: true, key: "ns/web", obj };
    expect(isDeletedFinalStateUnknown<KubeObject>(foreign as never)).toBe(true);
    expect(deletionHandlingMetaNamespaceKeyFunc(foreign as never)).toBe("ns/web");
    expect(isDeletedFinalStateUnknown<KubeObject | null>(null)).toBe(false);
  });

  it.each([
    ["name", { namespace: "", name: "name" }],
    ["ns/name", { namespace: "ns", name: "name" }],
    ["/name", { namespace: "", name: "name" }],
    ["ns/", { namespace: "ns", name: "" }],
    ["", { namespace: "", name: "" }],
  ])("splitMetaNamespaceKey(%j)", (key, expected) => {
    expect(splitMetaNamespaceKey(key)).toEqual(expected);
  });

  it.each(["a/b/c", "a//b", "a/b/c/d", "//"])("splitMetaNamespaceKey rejects %j with 3+ parts", (key) => {
    expect(() => splitMetaNamespaceKey(key)).toThrow(
      `unexpected key format: ${JSON.stringify(key)} (expected "name" or "namespace/name")`,
    );
  });
});
