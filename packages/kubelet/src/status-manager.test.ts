import { describe, expect, it } from "vitest";
import { mergePatchDiff } from "./status-manager.js";

describe("mergePatchDiff", () => {
  it("is undefined when nothing differs", () => {
    expect(mergePatchDiff({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } })).toBeUndefined();
  });
  it("sends changed members, nulls for removed ones, and whole arrays", () => {
    expect(
      mergePatchDiff(
        {
          phase: "Pending",
          reason: "x",
          conditions: [{ type: "Ready", status: "False" }],
          nested: { keep: 1, drop: 2 },
        },
        { phase: "Running", conditions: [{ type: "Ready", status: "True" }], nested: { keep: 1 } },
      ),
    ).toEqual({
      phase: "Running",
      reason: null,
      conditions: [{ type: "Ready", status: "True" }],
      nested: { drop: null },
    });
  });
  it("replaces a container state wholesale: waiting gone, running in", () => {
    expect(
      mergePatchDiff(
        { state: { waiting: { reason: "ContainerCreating" } } },
        { state: { running: { startedAt: "t" } } },
      ),
    ).toEqual({ state: { waiting: null, running: { startedAt: "t" } } });
  });
});
