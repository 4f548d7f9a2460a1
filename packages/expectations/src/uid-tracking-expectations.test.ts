import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ControllerExpectations, outstandingOf } from "./controller-expectations.js";
import { UIDTrackingControllerExpectations } from "./uid-tracking-expectations.js";

const rcKey = "default/rc";

describe("UIDTrackingControllerExpectations", () => {
  it("each controller is satisfied once all of its own pods are observed deleted", () => {
    // Upstream's TestUIDExpectations: four controllers, five pods each, checked in a shuffled order.
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    const podsOf = new Map<string, string[]>();
    for (let i = 0; i < 4; i++) {
      const key = `default/rc-${i}`;
      const pods = Array.from({ length: 5 }, (_, j) => `default/pod-${j}-rc-${i}`);
      podsOf.set(key, pods);
      expectations.expectDeletions(key, pods);
    }
    for (const key of ["default/rc-2", "default/rc-0", "default/rc-3", "default/rc-1"]) {
      expect(expectations.satisfiedExpectations(key)).toBe(false);
      for (const pod of podsOf.get(key)!) expectations.deletionObserved(key, pod);
      expect(expectations.satisfiedExpectations(key)).toBe(true);
      expectations.deleteExpectations(key);
      expect(expectations.getUIDs(key)).toBeUndefined();
      expect(expectations.getExpectations(key)).toBeUndefined();
    }
  });

  it("counts a pod once whether it shows up as a deletionTimestamp update, the delete, or both", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expectations.expectDeletions(rcKey, ["default/a", "default/b"]);
    expectations.deletionObserved(rcKey, "default/a"); // update with deletionTimestamp
    expectations.deletionObserved(rcKey, "default/a"); // the delete itself
    expect(expectations.getExpectations(rcKey)!.del).toBe(1);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(false);
    expect([...expectations.getUIDs(rcKey)!]).toEqual(["default/b"]);
    expectations.deletionObserved(rcKey, "default/b");
    expect(expectations.getExpectations(rcKey)!.del).toBe(0);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(true);
    expect(expectations.getUIDs(rcKey)!.size).toBe(0);
  });

  it("ignores deletions of pods it was not waiting for", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expectations.deletionObserved(rcKey, "default/a");
    expect(expectations.getExpectations(rcKey)).toBeUndefined();
    expectations.expectDeletions(rcKey, ["default/a"]);
    expectations.deletionObserved(rcKey, "default/other");
    expectations.deletionObserved("default/other-rc", "default/a");
    expect(expectations.getExpectations(rcKey)!.del).toBe(1);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(false);
  });

  it("collapses duplicate keys and expects that many deletions", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expectations.expectDeletions(rcKey, ["default/a", "default/a", "default/b"]);
    expect(expectations.getExpectations(rcKey)!.del).toBe(2);
    expect([...expectations.getUIDs(rcKey)!].sort()).toEqual(["default/a", "default/b"]);
  });

  it("expecting deletions again replaces the keys and the counts", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expectations.expectCreations(rcKey, 3);
    expectations.expectDeletions(rcKey, ["default/a", "default/b"]);
    expectations.expectDeletions(rcKey, ["default/c"]);
    expect([...expectations.getUIDs(rcKey)!]).toEqual(["default/c"]);
    const record = expectations.getExpectations(rcKey)!;
    expect([record.add, record.del]).toEqual([0, 1]);
    expectations.deletionObserved(rcKey, "default/a");
    expect(expectations.satisfiedExpectations(rcKey)).toBe(false);
  });

  it("passes creations, raise/lower and setExpectations through to the counters", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expectations.expectCreations(rcKey, 2);
    expectations.creationObserved(rcKey);
    expect(expectations.getExpectations(rcKey)!.add).toBe(1);
    expectations.raiseExpectations(rcKey, 2, 1);
    expectations.lowerExpectations(rcKey, 1, 0);
    expect([expectations.getExpectations(rcKey)!.add, expectations.getExpectations(rcKey)!.del]).toEqual([
      2, 1,
    ]);
    expectations.setExpectations(rcKey, 0, 0);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(true);
    expect(expectations.getUIDs(rcKey)).toBeUndefined();
  });

  it("expires with the TTL of the clock it was given", async () => {
    const clock = new FakeClock();
    const expectations = new UIDTrackingControllerExpectations({ clock, ttlMs: 1_000 });
    expectations.expectDeletions(rcKey, ["default/a"]);
    await clock.advance(1_000);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(false);
    await clock.advance(1);
    expect(expectations.satisfiedExpectations(rcKey)).toBe(true);
  });

  it("can wrap counters it is given", () => {
    const inner = new ControllerExpectations({ clock: new FakeClock() });
    const expectations = new UIDTrackingControllerExpectations({ expectations: inner });
    expectations.expectDeletions(rcKey, ["default/a"]);
    expect(inner.getExpectations(rcKey)!.del).toBe(1);
    expectations.deletionObserved(rcKey, "default/a");
    expect(inner.satisfiedExpectations(rcKey)).toBe(true);
  });

  it("rejects a pod count where the list of pod keys belongs", () => {
    const expectations = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    expect(() => expectations.expectDeletions(rcKey, 3 as never)).toThrow(
      "expectDeletions takes the list of pod keys expected to be deleted",
    );
  });

  it("lists what is outstanding, oldest first, with its age, expiry and the pods it waits to see deleted", async () => {
    const clock = new FakeClock(0);
    const expectations = new UIDTrackingControllerExpectations({ clock, ttlMs: 300_000 });
    expectations.expectCreations("default/a", 3);
    await clock.advance(1_000);
    expectations.expectDeletions("default/b", ["default/pod-2", "default/pod-1"]);
    expectations.expectCreations("default/done", 1);
    expectations.creationObserved("default/done");
    expectations.creationObserved("default/a");
    await clock.advance(299_500);
    expect(expectations.outstanding()).toEqual([
      { key: "default/a", add: 2, del: 0, ageMs: 300_500, expired: true },
      {
        key: "default/b",
        add: 0,
        del: 2,
        ageMs: 299_500,
        expired: false,
        deleting: ["default/pod-1", "default/pod-2"],
      },
    ]);
    expect(outstandingOf(expectations)).toEqual(expectations.outstanding());
    expect(outstandingOf({})).toEqual([]);
    expect(outstandingOf(undefined)).toEqual([]);
  });
});
