import { type ControllerRevision, controllerRevisions, labelSelectorAsSelector } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import {
  ControllerRevisionHistory,
  controllerRevisionHashLabel,
  controllerRevisionName,
  equalRevision,
  findEqualRevisions,
  hashControllerRevision,
  newControllerRevision,
  nextRevision,
  sortControllerRevisions,
} from "./history.js";

const parentKind = { apiVersion: "apps/v1", kind: "StatefulSet" };
const parent = { metadata: { name: "web", namespace: "default", uid: "set-1" } };
const dataOf = (image: string) => ({
  spec: { template: { $patch: "replace", spec: { containers: [{ name: "c", image }] } } },
});

function revision(name: string, number: number, created = "2026-01-01T00:00:00Z"): ControllerRevision {
  return { metadata: { name, creationTimestamp: created }, revision: number };
}

describe("ControllerRevision names and order", () => {
  it("cuts a long prefix to 223 characters before the hash", () => {
    expect(controllerRevisionName("web", "abc")).toBe("web-abc");
    expect(controllerRevisionName("x".repeat(300), "abc")).toBe(`${"x".repeat(223)}-abc`);
  });

  it("names a new revision <parent>-<hash of its data>, labels it with the hash, and makes the parent its controller", () => {
    const created = newControllerRevision(parent, parentKind, { app: "web" }, dataOf("nginx:1"), 3);
    const hash = hashControllerRevision(created);
    expect(created.metadata?.name).toBe(`web-${hash}`);
    expect(created.metadata?.labels).toEqual({ app: "web", [controllerRevisionHashLabel]: hash });
    expect(created.metadata?.ownerReferences).toEqual([
      { ...parentKind, name: "web", uid: "set-1", controller: true, blockOwnerDeletion: true },
    ]);
    expect(created.revision).toBe(3);
    const probed = newControllerRevision(parent, parentKind, { app: "web" }, dataOf("nginx:1"), 3, 1);
    expect(probed.metadata?.name).not.toBe(created.metadata?.name);
    expect(hashControllerRevision(created, 1)).toBe(probed.metadata?.labels?.[controllerRevisionHashLabel]);
  });

  // Upstream's TestSortControllerRevisions table.
  it.each([
    ["already sorted", [revision("a", 1), revision("b", 2), revision("c", 3)], ["a", "b", "c"]],
    ["reversed", [revision("c", 3), revision("b", 2), revision("a", 1)], ["a", "b", "c"]],
    [
      "equal revisions by creation time",
      [revision("b", 1, "2026-01-02T00:00:00Z"), revision("a", 1, "2026-01-03T00:00:00Z")],
      ["b", "a"],
    ],
    ["equal revisions and times by name", [revision("b", 1), revision("a", 1)], ["a", "b"]],
    ["empty", [], []],
  ])("sorts %s", (_name, input, names) => {
    expect(sortControllerRevisions(input).map((r) => r.metadata?.name)).toEqual(names);
  });

  it("compares revisions by their data, and takes differing hash labels as different", () => {
    const a = newControllerRevision(parent, parentKind, {}, dataOf("nginx:1"), 1);
    const b = newControllerRevision(parent, parentKind, {}, dataOf("nginx:1"), 2);
    const c = newControllerRevision(parent, parentKind, {}, dataOf("nginx:2"), 3);
    expect(equalRevision(a, b)).toBe(true);
    expect(equalRevision(a, c)).toBe(false);
    expect(equalRevision(undefined, undefined)).toBe(true);
    expect(equalRevision(a, undefined)).toBe(false);
    const relabelled = structuredClone(b);
    relabelled.metadata!.labels![controllerRevisionHashLabel] = "other";
    expect(equalRevision(a, relabelled)).toBe(false);
    expect(findEqualRevisions([a, c, b], a)).toEqual([a, b]);
    expect(nextRevision([])).toBe(1);
    expect(nextRevision([a, b, c])).toBe(4);
  });
});

describe("ControllerRevisionHistory on the embedded API server", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
  });

  async function start() {
    // No garbage collector: the parent these revisions name does not exist.
    const api = new ApiServer({ garbageCollection: false });
    const client = api.client();
    const abort = new AbortController();
    const factory = new SharedInformerFactory({ client });
    const informer = factory.forResource(controllerRevisions);
    factory.start(abort.signal);
    closers.push(async () => {
      abort.abort();
      await factory.shutdown();
      await api.close();
    });
    await informer.whenSynced?.();
    return {
      client,
      informer,
      history: new ControllerRevisionHistory({ client, indexer: informer.getIndexer() }),
    };
  }

  it("returns the existing revision for the same data, and counts a collision for other data under the same name", async () => {
    const { client, history } = await start();
    const first = newControllerRevision(parent, parentKind, {}, dataOf("nginx:1"), 1, 0);
    const collisions = { value: 0 };
    const created = await history.create(parent, first, collisions);
    expect(created.metadata?.name).toBe(first.metadata?.name);
    expect(await history.create(parent, first, collisions)).toMatchObject({
      metadata: { uid: created.metadata?.uid },
    });
    expect(collisions.value).toBe(0);
    // Something else under the next revision's name: its create collides and moves on.
    const second = newControllerRevision(parent, parentKind, {}, dataOf("nginx:2"), 2);
    await client.resource(controllerRevisions, "default").create({
      metadata: { name: `web-${hashControllerRevision(second, 0)}` },
      data: { other: true },
      revision: 9,
    });
    const moved = await history.create(parent, second, collisions);
    expect(collisions.value).toBe(1);
    expect(moved.metadata?.name).toBe(`web-${hashControllerRevision(second, 1)}`);
  });

  it("lists the parent's revisions and orphans that match, renumbers one, adopts an orphan and deletes", async () => {
    const { client, informer, history } = await start();
    const api = client.resource(controllerRevisions, "default");
    const owned = await api.create(
      newControllerRevision(parent, parentKind, { app: "web" }, dataOf("nginx:1"), 1),
    );
    const orphan = await api.create({
      metadata: { name: "orphan", labels: { app: "web" } },
      data: {},
      revision: 2,
    });
    await api.create({
      metadata: {
        name: "other",
        labels: { app: "web" },
        ownerReferences: [{ ...parentKind, name: "x", uid: "x", controller: true }],
      },
      data: {},
      revision: 3,
    });
    await api.create({ metadata: { name: "unlabelled" }, data: {}, revision: 4 });
    const selector = labelSelectorAsSelector({ matchLabels: { app: "web" } });
    await expect.poll(() => history.list(parent, selector).length).toBe(2);
    expect(sortControllerRevisions(history.list(parent, selector)).map((r) => r.metadata?.name)).toEqual([
      owned.metadata?.name,
      "orphan",
    ]);
    expect((await history.update(owned, 5)).revision).toBe(5);
    const adopted = await history.adopt(parent, parentKind, orphan);
    expect(adopted.metadata?.ownerReferences?.[0]).toMatchObject({ uid: "set-1", controller: true });
    await expect(history.adopt(parent, parentKind, adopted)).rejects.toThrow(
      "attempt to adopt revision owned by StatefulSet/web (set-1)",
    );
    await history.delete(adopted);
    await history.delete(adopted);
    await expect.poll(() => informer.getIndexer().getByKey("default/orphan")).toBeUndefined();
  });
});
