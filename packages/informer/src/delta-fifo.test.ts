import { DeletedFinalStateUnknown, type KubeObject } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { DeltaFIFO, type Deltas, FIFOClosedError, type KeyListerGetter } from "./delta-fifo.js";
import { createIndexer } from "./store.js";

interface Obj extends KubeObject {
  value: number;
}

function obj(name: string, value: number): Obj {
  return { metadata: { name }, value };
}

function known(...objects: Obj[]): KeyListerGetter<Obj> {
  const indexer = createIndexer<Obj>();
  for (const o of objects) indexer.add(o);
  return indexer;
}

/** Pops one key and returns [its deltas as "Type:value" strings, isInInitialList]. */
async function popOne(fifo: DeltaFIFO<Obj>): Promise<[string[], boolean]> {
  let initial = false;
  const deltas = await fifo.pop((_deltas, isInInitialList) => {
    initial = isInInitialList;
  });
  return [describeDeltas(deltas), initial];
}

function describeDeltas(deltas: Deltas<Obj>): string[] {
  return deltas.map((d) => {
    const o = d.object;
    if (o instanceof DeletedFinalStateUnknown)
      return `${d.type}:tombstone(${o.key},${(o.obj as Obj | undefined)?.value ?? "nil"})`;
    return `${d.type}:${o.metadata?.name}=${o.value}`;
  });
}

describe("DeltaFIFO", () => {
  it("pops keys in the order of their first add and hands over every delta since the last pop", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.add(obj("foo", 10));
    fifo.update(obj("bar", 1));
    fifo.update(obj("foo", 11));
    fifo.delete(obj("bar", 2));
    expect(fifo.listKeys()).toEqual(["foo", "bar"]);
    expect((await popOne(fifo))[0]).toEqual(["Added:foo=10", "Updated:foo=11"]);
    expect((await popOne(fifo))[0]).toEqual(["Updated:bar=1", "Deleted:bar=2"]);
    expect(fifo.length).toBe(0);
  });

  it("does not let a re-added key jump the line (detectLineJumpers)", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.add(obj("foo", 10));
    fifo.add(obj("bar", 1));
    fifo.add(obj("foo", 11));
    fifo.add(obj("foo", 13));
    fifo.add(obj("zab", 30));
    expect(fifo.listKeys()).toEqual(["foo", "bar", "zab"]);
    expect((await popOne(fifo))[0]).toEqual(["Added:foo=10", "Added:foo=11", "Added:foo=13"]);
    fifo.add(obj("foo", 14));
    expect(fifo.listKeys()).toEqual(["bar", "zab", "foo"]);
  });

  it("a pop waits for an add", async () => {
    const fifo = new DeltaFIFO<Obj>();
    const popped = popOne(fifo);
    await Promise.resolve();
    fifo.add(obj("foo", 10));
    expect((await popped)[0]).toEqual(["Added:foo=10"]);
  });

  it("close unblocks waiting pops with FIFOClosedError, after the queue is drained", async () => {
    const fifo = new DeltaFIFO<Obj>();
    const waiting = fifo.pop(() => {});
    fifo.close();
    await expect(waiting).rejects.toBeInstanceOf(FIFOClosedError);

    const draining = new DeltaFIFO<Obj>();
    draining.add(obj("foo", 1));
    draining.close();
    expect((await popOne(draining))[0]).toEqual(["Added:foo=1"]);
    await expect(draining.pop(() => {})).rejects.toBeInstanceOf(FIFOClosedError);
    const closed = await draining.pop(() => {}).catch((error: unknown) => error);
    expect(FIFOClosedError.isInstance(closed)).toBe(true);
    expect((closed as FIFOClosedError).code).toBe("informer.fifo-closed");
    expect((closed as FIFOClosedError).legacyCode).toBe("fifo.closed");
    expect(draining.isClosed()).toBe(true);
  });

  it("rejects a pop with the error process throws, without re-queueing the deltas", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.add(obj("foo", 1));
    await expect(
      fifo.pop(() => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(fifo.length).toBe(0);
  });

  it.each([
    {
      name: "two deletes keep the older",
      deltas: [obj("foo", 1), obj("foo", 2)],
      expected: ["Deleted:foo=1"],
    },
    {
      name: "a tombstone followed by a delete keeps the delete",
      deltas: [new DeletedFinalStateUnknown("foo", obj("foo", 1)), obj("foo", 2)],
      expected: ["Deleted:foo=2"],
    },
    {
      name: "a delete followed by a tombstone keeps the delete",
      deltas: [obj("foo", 1), new DeletedFinalStateUnknown("foo", obj("foo", 2))],
      expected: ["Deleted:foo=1"],
    },
  ])("dedups two consecutive deletes: $name", async ({ deltas, expected }) => {
    const fifo = new DeltaFIFO<Obj>({ knownObjects: known(obj("foo", 0)) });
    for (const d of deltas) fifo.delete(d as Obj);
    expect((await popOne(fifo))[0]).toEqual(expected);
  });

  it("never coalesces anything but deletes", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.update(obj("foo", 1));
    fifo.update(obj("foo", 2));
    fifo.add(obj("foo", 3));
    expect((await popOne(fifo))[0]).toEqual(["Updated:foo=1", "Updated:foo=2", "Added:foo=3"]);
  });

  it("ignores the delete of a key neither queued nor known", () => {
    const withKnown = new DeltaFIFO<Obj>({ knownObjects: known(obj("bar", 1)) });
    withKnown.delete(obj("foo", 1));
    expect(withKnown.length).toBe(0);
    withKnown.delete(obj("bar", 2));
    expect(withKnown.listKeys()).toEqual(["bar"]);

    const withoutKnown = new DeltaFIFO<Obj>();
    withoutKnown.delete(obj("foo", 1));
    expect(withoutKnown.length).toBe(0);
    withoutKnown.add(obj("foo", 1));
    withoutKnown.delete(obj("foo", 2));
    expect(withoutKnown.getByKey("foo")?.map((d) => d.type)).toEqual(["Added", "Deleted"]);
  });

  it("replace emits Sync by default and Replaced when asked", async () => {
    const sync = new DeltaFIFO<Obj>();
    sync.replace([obj("foo", 1)], "0");
    expect((await popOne(sync))[0]).toEqual(["Sync:foo=1"]);
    const replaced = new DeltaFIFO<Obj>({ emitDeltaTypeReplaced: true });
    replaced.replace([obj("foo", 1)], "0");
    expect((await popOne(replaced))[0]).toEqual(["Replaced:foo=1"]);
  });

  it("replace makes tombstones for queued keys missing from the list, carrying the newest queued object", async () => {
    const fifo = new DeltaFIFO<Obj>({ emitDeltaTypeReplaced: true });
    fifo.add(obj("foo", 5));
    fifo.update(obj("foo", 6));
    fifo.add(obj("bar", 1));
    fifo.replace([obj("bar", 2)], "0");
    expect((await popOne(fifo))[0]).toEqual(["Added:foo=5", "Updated:foo=6", "Deleted:tombstone(foo,6)"]);
    expect((await popOne(fifo))[0]).toEqual(["Added:bar=1", "Replaced:bar=2"]);
  });

  it("replace unwraps a queued tombstone instead of nesting it", async () => {
    const fifo = new DeltaFIFO<Obj>({ knownObjects: known(obj("foo", 1)) });
    fifo.delete(new DeletedFinalStateUnknown("foo", obj("foo", 1)) as unknown as Obj);
    fifo.replace([], "0");
    const deltas = fifo.getByKey("foo")!;
    expect(deltas).toHaveLength(1);
    const tombstone = deltas[0]!.object as DeletedFinalStateUnknown<Obj>;
    expect(tombstone.obj).toEqual(obj("foo", 1));
  });

  it("replace makes tombstones for known keys missing from the list, carrying the known object", async () => {
    const fifo = new DeltaFIFO<Obj>({
      knownObjects: known(obj("foo", 5), obj("bar", 6), obj("baz", 7)),
      emitDeltaTypeReplaced: true,
    });
    fifo.delete(obj("baz", 10));
    fifo.replace([obj("foo", 5)], "0");
    const popped = [];
    while (fifo.length > 0) popped.push(...(await popOne(fifo))[0]);
    expect(popped.sort()).toEqual(["Deleted:baz=10", "Deleted:tombstone(bar,6)", "Replaced:foo=5"].sort());
  });

  it("adds a Replaced delta after a pending Deleted (kubernetes#83810)", async () => {
    const fifo = new DeltaFIFO<Obj>({ knownObjects: known(obj("foo", 1)), emitDeltaTypeReplaced: true });
    fifo.delete(obj("foo", 1));
    fifo.replace([obj("foo", 2)], "0");
    expect((await popOne(fifo))[0]).toEqual(["Deleted:foo=1", "Replaced:foo=2"]);
  });

  it("resync queues a Sync for each known key without pending deltas", async () => {
    const fifo = new DeltaFIFO<Obj>({ knownObjects: known(obj("foo", 1), obj("bar", 2)) });
    fifo.update(obj("bar", 3));
    fifo.resync();
    expect((await popOne(fifo))[0]).toEqual(["Updated:bar=3"]);
    expect((await popOne(fifo))[0]).toEqual(["Sync:foo=1"]);
    expect(fifo.length).toBe(0);
  });

  it("resync without knownObjects does nothing", () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.resync();
    expect(fifo.length).toBe(0);
  });

  it("hasSynced is false at first and true right after an add that comes before any replace", async () => {
    const fifo = new DeltaFIFO<Obj>();
    expect(fifo.hasSynced()).toBe(false);
    fifo.add(obj("a", 1));
    expect(fifo.hasSynced()).toBe(true);
    expect((await popOne(fifo))[1]).toBe(false);
  });

  it("calls onSynced once, when the last item of the initial list has been popped", async () => {
    const calls: boolean[] = [];
    const fifo = new DeltaFIFO<Obj>({ onSynced: () => calls.push(fifo.hasSynced()) });
    fifo.replace([obj("a", 1), obj("b", 1)], "0");
    await popOne(fifo);
    expect(calls).toEqual([]);
    await popOne(fifo);
    expect(calls).toEqual([true]);
    fifo.add(obj("c", 1));
    await popOne(fifo);
    expect(calls).toEqual([true]);
  });

  it("calls onSynced at once for an empty initial list or an add before any list", () => {
    let empty = 0;
    new DeltaFIFO<Obj>({ onSynced: () => empty++ }).replace([], "0");
    expect(empty).toBe(1);
    let added = 0;
    new DeltaFIFO<Obj>({ onSynced: () => added++ }).add(obj("a", 1));
    expect(added).toBe(1);
  });

  it("hasSynced is true right after replacing with an empty list", () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.replace([], "0");
    expect(fifo.hasSynced()).toBe(true);
  });

  it("hasSynced counts the initial list, duplicates once, and its tombstones; pops report isInInitialList", async () => {
    const fifo = new DeltaFIFO<Obj>({ knownObjects: known(obj("gone", 1)), emitDeltaTypeReplaced: true });
    fifo.replace([obj("a", 1), obj("b", 1), obj("a", 2)], "0");
    expect(fifo.length).toBe(3);
    const seen: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      expect(fifo.hasSynced()).toBe(false);
      seen.push((await popOne(fifo))[1]);
    }
    expect(seen).toEqual([true, true, true]);
    expect(fifo.hasSynced()).toBe(true);
    fifo.add(obj("c", 1));
    expect((await popOne(fifo))[1]).toBe(false);
  });

  it("counts a key listed twice once when nothing was queued or known before", async () => {
    const fifo = new DeltaFIFO<Obj>({ emitDeltaTypeReplaced: true });
    fifo.replace([obj("a", 1), obj("b", 1), obj("a", 2)], "0");
    expect(fifo.listKeys()).toEqual(["a", "b"]);
    expect((await popOne(fifo))[0]).toEqual(["Replaced:a=1", "Replaced:a=2"]);
    expect(fifo.hasSynced()).toBe(false);
    await popOne(fifo);
    expect(fifo.hasSynced()).toBe(true);
  });

  it("a second replace does not reset hasSynced", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.replace([obj("a", 1)], "0");
    await popOne(fifo);
    fifo.replace([obj("a", 2), obj("b", 1)], "1");
    expect(fifo.hasSynced()).toBe(true);
  });

  it("applies the transformer to added, updated, deleted and replaced objects, not to Sync or tombstones", async () => {
    const transformed: string[] = [];
    const fifo = new DeltaFIFO<Obj>({
      knownObjects: known(obj("k", 1), obj("t", 1)),
      emitDeltaTypeReplaced: true,
      transformer: (o) => {
        transformed.push(o.metadata!.name!);
        return { ...o, value: o.value * 10 };
      },
    });
    fifo.add(obj("a", 1));
    fifo.update(obj("u", 2));
    fifo.delete(obj("k", 3));
    fifo.replace([obj("a", 4), obj("u", 5), obj("k", 6)], "1");
    expect(transformed).toEqual(["a", "u", "k", "a", "u", "k"]);
    expect(describeDeltas(fifo.getByKey("t")!)).toEqual(["Deleted:tombstone(t,1)"]);
    expect(describeDeltas(fifo.getByKey("a")!)).toEqual(["Added:a=10", "Replaced:a=40"]);
    transformed.length = 0;
    while (fifo.length > 0) await popOne(fifo);
    fifo.resync();
    expect(transformed).toEqual([]);
  });

  it("list and get expose pending deltas without consuming them", () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.add(obj("foo", 1));
    fifo.update(obj("foo", 2));
    fifo.add(obj("bar", 3));
    expect(fifo.list()).toEqual([obj("foo", 2), obj("bar", 3)]);
    const copy = fifo.get(obj("foo", 0))!;
    copy.pop();
    expect(fifo.getByKey("foo")).toHaveLength(2);
    expect(fifo.getByKey("nope")).toBeUndefined();
  });

  it("addIfNotPresent queues deltas only for a key not already queued", async () => {
    const fifo = new DeltaFIFO<Obj>();
    fifo.add(obj("b", 3));
    fifo.addIfNotPresent([{ type: "Added", object: obj("a", 1) }]);
    fifo.addIfNotPresent([{ type: "Added", object: obj("b", 4) }]);
    expect((await popOne(fifo))[0]).toEqual(["Added:b=3"]);
    expect((await popOne(fifo))[0]).toEqual(["Added:a=1"]);
    expect(() => fifo.addIfNotPresent([])).toThrow("non-empty Deltas");
  });

  it("keyOf takes a tombstone's key and the newest object of a Deltas", () => {
    const fifo = new DeltaFIFO<Obj>();
    expect(fifo.keyOf(new DeletedFinalStateUnknown("ns/x", undefined))).toBe("ns/x");
    expect(
      fifo.keyOf([
        { type: "Added", object: obj("old", 1) },
        { type: "Updated", object: obj("new", 1) },
      ]),
    ).toBe("new");
    expect(() => fifo.keyOf([])).toThrow("empty Deltas");
    expect(() => fifo.add({ value: 1 } as Obj)).toThrow("no metadata");
  });
});
