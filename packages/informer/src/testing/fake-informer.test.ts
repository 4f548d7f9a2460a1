import { isDeletedFinalStateUnknown, type Pod } from "@reconcile/api";
import { pod } from "@reconcile/api/testing";
import { describe, expect, it } from "vitest";
import { waitForNamedCacheSync } from "../wait-for-cache-sync.js";
import { FakeInformer } from "./fake-informer.js";

function recorder() {
  const calls: string[] = [];
  return {
    calls,
    onAdd: (p: { metadata?: { name?: string } }, initial: boolean) =>
      void calls.push(`add ${p.metadata?.name} ${initial}`),
    onUpdate: (o: Pod, n: Pod) =>
      void calls.push(`update ${o.metadata?.name} ${o.spec?.nodeName ?? "-"}->${n.spec?.nodeName ?? "-"}`),
    onDelete: (p: unknown) =>
      void calls.push(
        isDeletedFinalStateUnknown(p) ? `tombstone ${p.key}` : `delete ${(p as Pod).metadata?.name}`,
      ),
  };
}

describe("FakeInformer", () => {
  it("replays the cache to a new handler, then delivers add, update and delete at once", () => {
    const informer = new FakeInformer<Pod>({ objects: [pod("a")] });
    const handler = recorder();
    informer.addEventHandler(handler as never);
    informer.add(pod("b"));
    informer.update(pod("b", { nodeName: "node-1" }));
    informer.delete(pod("a"));
    informer.delete(pod("b"), { tombstone: true });
    expect(handler.calls).toEqual([
      "add a true",
      "add b false",
      "update b -->node-1",
      "delete a",
      "tombstone default/b",
    ]);
    expect(informer.getIndexer().list()).toEqual([]);
  });

  it("updates an object it has not seen as an add, and indexes by namespace and custom indexers", () => {
    const informer = new FakeInformer<Pod>({
      indexers: { byNode: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) },
    });
    const handler = recorder();
    informer.addEventHandler(handler as never);
    informer.update(pod("a", { nodeName: "n1", namespace: "prod" }));
    expect(handler.calls).toEqual(["add a false"]);
    expect(
      informer
        .getIndexer()
        .byIndex("byNode", "n1")
        .map((p) => p.metadata?.name),
    ).toEqual(["a"]);
    expect(informer.getIndexer().byIndex("namespace", "prod")).toHaveLength(1);
    expect(informer.getStore().getByKey("prod/a")?.spec?.nodeName).toBe("n1");
  });

  it("syncs on cue, so a test can check what a controller does before its cache is ready", async () => {
    const informer = new FakeInformer<Pod>({ synced: false });
    const registration = informer.addEventHandler({});
    expect(informer.hasSynced()).toBe(false);
    expect(registration.hasSynced()).toBe(false);
    const waiting = waitForNamedCacheSync({
      informers: { pods: informer },
      signal: new AbortController().signal,
    });
    informer.markSynced();
    expect(await waiting).toBe(true);
    expect(registration.hasSynced()).toBe(true);
    informer.lastError = new Error("forbidden");
    expect(informer.lastWatchError()).toEqual(new Error("forbidden"));
  });

  it("with detectMutations, hands out frozen copies so a mutating handler throws", () => {
    const informer = new FakeInformer<Pod>({ detectMutations: true });
    const original = pod("a");
    const cached = informer.add(original);
    expect(cached).not.toBe(original);
    expect(() => {
      (cached as Pod).metadata!.name = "changed";
    }).toThrow(TypeError);
  });
});
