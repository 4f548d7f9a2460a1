import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Fifo } from "./fifo.js";

describe("Fifo", () => {
  it("behaves as an array with push and shift for any sequence of operations", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer(), fc.constant("shift" as const)), { maxLength: 300 }),
        (ops) => {
          const fifo = new Fifo<number>();
          const model: number[] = [];
          for (const op of ops) {
            if (op === "shift") {
              if (model.length === 0) continue;
              expect(fifo.shift()).toBe(model.shift());
            } else {
              fifo.push(op);
              model.push(op);
            }
            expect(fifo.length).toBe(model.length);
          }
        },
      ),
    );
  });

  it("keeps order across growth while wrapped around", () => {
    const fifo = new Fifo<number>();
    for (let i = 0; i < 10; i++) fifo.push(i);
    for (let i = 0; i < 8; i++) fifo.shift();
    for (let i = 10; i < 100; i++) fifo.push(i);
    const out: number[] = [];
    while (fifo.length > 0) out.push(fifo.shift());
    expect(out).toEqual(Array.from({ length: 92 }, (_, i) => i + 8));
  });

  it("works again after a large burst has been emptied", () => {
    const fifo = new Fifo<number>();
    for (let i = 0; i < 10_000; i++) fifo.push(i);
    while (fifo.length > 0) fifo.shift();
    fifo.push(1);
    fifo.push(2);
    expect([fifo.shift(), fifo.shift(), fifo.length]).toEqual([1, 2, 0]);
  });
});
