import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReadyHeap } from "./ready-heap.js";

describe("ReadyHeap", () => {
  it("pops items by ready time (ties first-in first-out), one entry per item keeping its earliest time", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 })), {
          maxLength: 200,
        }),
        (inserts) => {
          const heap = new ReadyHeap<number>();
          // The model: earliest ready time per item, and the order each item was first inserted.
          const earliest = new Map<number, number>();
          const firstSeen = new Map<number, number>();
          inserts.forEach(([item, readyAt], order) => {
            heap.insert(item, readyAt);
            earliest.set(item, Math.min(readyAt, earliest.get(item) ?? readyAt));
            if (!firstSeen.has(item)) firstSeen.set(item, order);
          });
          const expected = [...earliest.keys()].sort(
            (a, b) => earliest.get(a)! - earliest.get(b)! || firstSeen.get(a)! - firstSeen.get(b)!,
          );
          expect(heap.size).toBe(expected.length);
          const popped: [number, number][] = [];
          while (heap.size > 0) {
            const entry = heap.pop();
            popped.push([entry.item, entry.readyAt]);
          }
          expect(popped).toEqual(expected.map((item) => [item, earliest.get(item)!]));
        },
      ),
    );
  });

  it("forgets an item once popped, so it can wait again", () => {
    const heap = new ReadyHeap<string>();
    heap.insert("a", 10);
    heap.pop();
    heap.insert("a", 30);
    expect(heap.peek()?.readyAt).toBe(30);
  });
});
