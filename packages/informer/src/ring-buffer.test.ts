import { describe, expect, it } from "vitest";
import { RingBuffer } from "./ring-buffer.js";

describe("RingBuffer", () => {
  it("hands items out oldest first across wrap-arounds and growth", () => {
    const ring = new RingBuffer<number>(4);
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3 + (round % 5); i++) ring.push(next++);
      for (let i = 0; i < 2; i++) out.push(ring.shift()!);
    }
    while (ring.length > 0) out.push(ring.shift()!);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(ring.shift()).toBeUndefined();
  });

  it("iterates and peeks without consuming", () => {
    const ring = new RingBuffer<string>(2);
    ring.push("a");
    ring.push("b");
    ring.push("c");
    ring.shift();
    ring.push("d");
    expect([...ring]).toEqual(["b", "c", "d"]);
    expect(ring.peek()).toBe("b");
    expect(ring.length).toBe(3);
    ring.clear();
    expect(ring.length).toBe(0);
    expect(ring.peek()).toBeUndefined();
  });
});
