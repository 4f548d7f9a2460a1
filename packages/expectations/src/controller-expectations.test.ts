import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ControllerExpectations, expectationsTimeoutMs } from "./controller-expectations.js";

const key = "default/web";

function setup(ttlMs?: number) {
  const clock = new FakeClock(Date.UTC(2009, 10, 10, 23));
  const expectations = new ControllerExpectations({ clock, ...(ttlMs === undefined ? {} : { ttlMs }) });
  return { clock, expectations };
}

describe("ControllerExpectations", () => {
  it("a controller without a record is satisfied", () => {
    const { expectations } = setup();
    expect(expectations.satisfiedExpectations(key)).toBe(true);
    expect(expectations.getExpectations(key)).toBeUndefined();
  });

  it("is satisfied only after every expected creation and deletion is observed, and surpassing is fine", () => {
    // Upstream's TestControllerExpectations: 10 adds and 30 dels, each observed one time too many.
    const { expectations } = setup();
    expectations.setExpectations(key, 10, 30);
    for (let i = 0; i < 11; i++) expectations.creationObserved(key);
    expect(expectations.satisfiedExpectations(key)).toBe(false);
    for (let i = 0; i < 30; i++) expectations.deletionObserved(key);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
    expectations.deletionObserved(key);
    const record = expectations.getExpectations(key)!;
    expect([record.add, record.del]).toEqual([-1, -1]);
    expect(record.fulfilled()).toBe(true);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
  });

  it("setExpectations replaces the record and stamps it with the clock's time", () => {
    const { clock, expectations } = setup();
    expectations.setExpectations(key, 1, 2);
    const first = expectations.getExpectations(key)!;
    clock.setTime(clock.now() + 1_000);
    expectations.setExpectations(key, 3, 4);
    const second = expectations.getExpectations(key)!;
    expect(second).not.toBe(first);
    expect({ key: second.key, add: second.add, del: second.del, timestamp: second.timestamp }).toEqual({
      key,
      add: 3,
      del: 4,
      timestamp: first.timestamp + 1_000,
    });
  });

  it("expectCreations wipes pending deletions and expectDeletions wipes pending creations", () => {
    const { expectations } = setup();
    expectations.expectDeletions(key, 2);
    expectations.expectCreations(key, 3);
    expect([expectations.getExpectations(key)!.add, expectations.getExpectations(key)!.del]).toEqual([3, 0]);
    expectations.expectDeletions(key, 2);
    expect([expectations.getExpectations(key)!.add, expectations.getExpectations(key)!.del]).toEqual([0, 2]);
  });

  it("expecting zero is satisfied at once", () => {
    const { expectations } = setup();
    expectations.expectCreations(key, 0);
    expect(expectations.getExpectations(key)).toBeDefined();
    expect(expectations.satisfiedExpectations(key)).toBe(true);
  });

  it("raise and lower change an existing record, may go negative, and do nothing without one", () => {
    const { expectations } = setup();
    expectations.raiseExpectations(key, 1, 1);
    expectations.lowerExpectations(key, 1, 1);
    expect(expectations.getExpectations(key)).toBeUndefined();
    expectations.setExpectations(key, 1, 0);
    expectations.raiseExpectations(key, 2, 1);
    expect([expectations.getExpectations(key)!.add, expectations.getExpectations(key)!.del]).toEqual([3, 1]);
    expectations.lowerExpectations(key, 4, 1);
    expect([expectations.getExpectations(key)!.add, expectations.getExpectations(key)!.del]).toEqual([-1, 0]);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
  });

  it("observations on a key without a record create nothing", () => {
    const { expectations } = setup();
    expectations.creationObserved(key);
    expectations.deletionObserved(key);
    expect(expectations.getExpectations(key)).toBeUndefined();
  });

  it("the record handed out is live: later observations show in it", () => {
    const { expectations } = setup();
    expectations.expectCreations(key, 2);
    const record = expectations.getExpectations(key)!;
    expectations.creationObserved(key);
    expect(record.add).toBe(1);
    expect(record.fulfilled()).toBe(false);
  });

  it("an unfulfilled record expires strictly after the TTL (exactly the TTL old is not expired)", async () => {
    const { clock, expectations } = setup();
    expectations.expectCreations(key, 1);
    const record = expectations.getExpectations(key)!;
    await clock.advance(expectationsTimeoutMs);
    expect(record.isExpired()).toBe(false);
    expect(expectations.satisfiedExpectations(key)).toBe(false);
    await clock.advance(1);
    expect(record.isExpired()).toBe(true);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
    // Expiry lets the controller sync; it does not drop the record.
    expect(expectations.getExpectations(key)).toBe(record);
  });

  it("raising or lowering does not refresh the timestamp", async () => {
    const { clock, expectations } = setup(30_000);
    expectations.expectCreations(key, 5);
    await clock.advance(29_999);
    expectations.raiseExpectations(key, 1, 0);
    expectations.creationObserved(key);
    expect(expectations.satisfiedExpectations(key)).toBe(false);
    await clock.advance(2);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
  });

  it("setting expectations again restarts the TTL", async () => {
    const { clock, expectations } = setup(30_000);
    expectations.expectCreations(key, 1);
    await clock.advance(30_001);
    expect(expectations.satisfiedExpectations(key)).toBe(true);
    expectations.expectCreations(key, 1);
    expect(expectations.satisfiedExpectations(key)).toBe(false);
  });

  it("deleteExpectations forgets the record", () => {
    const { expectations } = setup();
    expectations.expectCreations(key, 1);
    expectations.deleteExpectations(key);
    expect(expectations.getExpectations(key)).toBeUndefined();
    expect(expectations.satisfiedExpectations(key)).toBe(true);
  });

  it("keeps each controller's record apart", () => {
    const { expectations } = setup();
    expectations.expectCreations("ns/a", 1);
    expectations.expectCreations("ns/b", 1);
    expectations.creationObserved("ns/a");
    expect(expectations.satisfiedExpectations("ns/a")).toBe(true);
    expect(expectations.satisfiedExpectations("ns/b")).toBe(false);
  });

  it("rejects counts that are not whole numbers >= 0 and a bad TTL", () => {
    const { expectations } = setup();
    expect(() => expectations.expectCreations(key, -1)).toThrow("add must be a whole number >= 0, got -1");
    expect(() => expectations.setExpectations(key, 1, 1.5)).toThrow(
      "del must be a whole number >= 0, got 1.5",
    );
    expect(() => expectations.raiseExpectations(key, Number.NaN, 0)).toThrow(
      "add must be a whole number >= 0, got NaN",
    );
    expect(expectations.getExpectations(key)).toBeUndefined();
    expect(() => new ControllerExpectations({ ttlMs: -1 })).toThrow(
      "ttlMs must be a finite number >= 0, got -1",
    );
  });

  it("defaults to the real clock and a 5 minute TTL", () => {
    const expectations = new ControllerExpectations();
    const before = Date.now();
    expectations.expectCreations(key, 1);
    const record = expectations.getExpectations(key)!;
    expect(record.timestamp).toBeGreaterThanOrEqual(before);
    expect(record.timestamp).toBeLessThanOrEqual(Date.now());
    expect(record.isExpired()).toBe(false);
    expect(expectationsTimeoutMs).toBe(300_000);
  });
});
