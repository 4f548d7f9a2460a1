import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { BasicWorkQueue } from "./work-queue.js";

describe("BasicWorkQueue", () => {
  it("hands out a UID only once its deadline has passed, and only once", () => {
    const clock = new FakeClock(0);
    const queue = new BasicWorkQueue({ clock });
    queue.enqueue("a", 1000);
    queue.enqueue("b", 0);
    queue.enqueue("c", 3000);
    expect(queue.getWork()).toEqual([]); // b is due now, not before now
    clock.setTime(1);
    expect(queue.getWork()).toEqual(["b"]);
    clock.setTime(1000);
    expect(queue.getWork()).toEqual([]);
    clock.setTime(1001);
    expect(queue.getWork()).toEqual(["a"]);
    expect(queue.getWork()).toEqual([]);
    expect(queue.size).toBe(1);
  });

  it("a later enqueue replaces the earlier deadline, sooner or later", () => {
    const clock = new FakeClock(0);
    const queue = new BasicWorkQueue({ clock });
    queue.enqueue("a", 10_000);
    queue.enqueue("a", 5);
    clock.setTime(6);
    expect(queue.getWork()).toEqual(["a"]);
    queue.enqueue("b", 5);
    queue.enqueue("b", 10_000);
    clock.setTime(100);
    expect(queue.getWork()).toEqual([]);
    expect(queue.size).toBe(1);
  });
});
