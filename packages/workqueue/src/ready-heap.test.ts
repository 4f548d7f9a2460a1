import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReadyHeap } from "./ready-heap.js";

describe("ReadyHeap", () => {
  it("pops entries by time, ties in push order, for any interleaving of pushes and pops", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constant(null)), { maxLength: 400 }),
        (ops) => {
          const heap = new ReadyHeap<string>();
          const model: { time: number; order: number; entry: string }[] = [];
          ops.forEach((op, order) => {
            if (op === null) {
              if (model.length === 0) return;
              model.sort((a, b) => a.time - b.time || a.order - b.order);
              const next = model.shift()!;
              expect(heap.peekTime()).toBe(next.time);
              expect(heap.peek()).toBe(next.entry);
              expect(heap.pop()).toBe(next.entry);
            } else {
              const entry = `entry-${order}`;
              heap.push(entry, op);
              model.push({ time: op, order, entry });
            }
            expect(heap.length).toBe(model.length);
          });
        },
      ),
    );
  });

  it("clear hands every entry to the visitor and empties the heap", () => {
    const heap = new ReadyHeap<number>();
    for (let i = 0; i < 100; i++) heap.push(i, 100 - i);
    const visited: number[] = [];
    heap.clear((entry) => visited.push(entry));
    expect(visited.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(heap.length).toBe(0);
  });
});
