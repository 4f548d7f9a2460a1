import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReadyHeap } from "./ready-heap.js";

/** Pops everything, returning [item, readyAt] pairs in pop order. */
function popAll<T>(heap: ReadyHeap<T>): [T, number][] {
  const popped: [T, number][] = [];
  for (let readyAt = heap.nextReadyAt(); readyAt !== undefined; readyAt = heap.nextReadyAt()) {
    popped.push([heap.pop(), readyAt]);
  }
  return popped;
}

describe("ReadyHeap", () => {
  it("pops items by ready time (ties first-in first-out), one per item at its earliest time", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 })), {
          maxLength: 300,
        }),
        (inserts) => {
          const heap = new ReadyHeap<number>();
          // The model: each item's earliest ready time, and when it was last moved to it.
          const earliest = new Map<number, { readyAt: number; order: number }>();
          inserts.forEach(([item, readyAt], order) => {
            heap.insert(item, readyAt);
            const known = earliest.get(item);
            if (known === undefined || readyAt < known.readyAt) earliest.set(item, { readyAt, order });
          });
          const expected = [...earliest]
            .sort(([, a], [, b]) => a.readyAt - b.readyAt || a.order - b.order)
            .map(([item, { readyAt }]): [number, number] => [item, readyAt]);
          expect(heap.size).toBe(expected.length);
          expect(popAll(heap)).toEqual(expected);
          expect(heap.size).toBe(0);
        },
      ),
    );
  });

  it("interleaves inserts and pops like a sorted model", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 30 })),
            fc.constant(null),
          ),
          {
            maxLength: 300,
          },
        ),
        (ops) => {
          const heap = new ReadyHeap<number>();
          const model = new Map<number, { readyAt: number; order: number }>();
          ops.forEach((op, order) => {
            if (op === null) {
              const next = [...model].sort(([, a], [, b]) => a.readyAt - b.readyAt || a.order - b.order)[0];
              expect(heap.nextReadyAt()).toBe(next?.[1].readyAt);
              if (next === undefined) return;
              expect(heap.pop()).toBe(next[0]);
              model.delete(next[0]);
              return;
            }
            const [item, readyAt] = op;
            heap.insert(item, readyAt);
            const known = model.get(item);
            if (known === undefined || readyAt < known.readyAt) model.set(item, { readyAt, order });
          });
        },
      ),
    );
  });

  it("lets an item wait again once popped, at any time", () => {
    const heap = new ReadyHeap<string>();
    heap.insert("a", 10);
    heap.insert("a", 5);
    expect(heap.nextReadyAt()).toBe(5);
    expect(heap.pop()).toBe("a");
    heap.insert("a", 30);
    expect(popAll(heap)).toEqual([["a", 30]]);
  });

  it("is empty after clear", () => {
    const heap = new ReadyHeap<string>();
    for (let i = 0; i < 100; i++) heap.insert(`k${i}`, i);
    heap.clear();
    expect(heap.size).toBe(0);
    expect(heap.nextReadyAt()).toBeUndefined();
  });
});
