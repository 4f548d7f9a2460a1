import { describe, expect, it } from "vitest";
import { getPodReadyCondition, isPodActive, isPodAvailable, isPodReady, isPodTerminating } from "./pods.js";
import type { Pod } from "./types.js";

function pod(options: { phase?: string; deleting?: boolean; ready?: string; since?: string } = {}): Pod {
  return {
    metadata: {
      name: "p",
      namespace: "default",
      ...(options.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}),
    },
    spec: { containers: [] },
    status: {
      ...(options.phase ? { phase: options.phase } : {}),
      conditions: [
        { type: "PodScheduled", status: "True" },
        ...(options.ready
          ? [
              {
                type: "Ready",
                status: options.ready,
                ...(options.since ? { lastTransitionTime: options.since } : {}),
              },
            ]
          : []),
      ],
    },
  };
}

describe("pod helpers", () => {
  it.each([
    ["Pending", false, true, false],
    ["Running", false, true, false],
    ["Unknown", false, true, false],
    [undefined, false, true, false],
    ["Succeeded", false, false, false],
    ["Failed", false, false, false],
    ["Running", true, false, true],
    ["Pending", true, false, true],
    ["Succeeded", true, false, false],
    ["Failed", true, false, false],
  ])("a %s pod (deleting: %s) is active: %s, terminating: %s", (phase, deleting, active, terminating) => {
    const p = pod({ ...(phase ? { phase } : {}), deleting });
    expect(isPodActive(p)).toBe(active);
    expect(isPodTerminating(p)).toBe(terminating);
  });

  it("isPodReady needs a Ready condition with status True", () => {
    expect(isPodReady(pod({ ready: "True" }))).toBe(true);
    expect(isPodReady(pod({ ready: "False" }))).toBe(false);
    expect(isPodReady(pod({ ready: "Unknown" }))).toBe(false);
    expect(isPodReady(pod())).toBe(false);
    expect(isPodReady({ spec: { containers: [] } })).toBe(false);
  });

  it("getPodReadyCondition finds the Ready condition", () => {
    expect(getPodReadyCondition(pod({ ready: "False" }))).toEqual({ type: "Ready", status: "False" });
    expect(getPodReadyCondition(pod())).toBeUndefined();
  });

  const readyAt = "2024-01-01T00:00:00Z";
  const readyAtMs = Date.parse(readyAt);

  it.each([
    ["not ready", pod({ ready: "False", since: readyAt }), 0, readyAtMs, false],
    ["ready with minReadySeconds 0", pod({ ready: "True", since: readyAt }), 0, readyAtMs, true],
    ["ready without transition time and minReadySeconds 0", pod({ ready: "True" }), 0, readyAtMs, true],
    [
      "ready without transition time and minReadySeconds 1",
      pod({ ready: "True" }),
      1,
      readyAtMs + 10_000,
      false,
    ],
    [
      "ready for less than minReadySeconds",
      pod({ ready: "True", since: readyAt }),
      10,
      readyAtMs + 9_999,
      false,
    ],
    [
      "ready for exactly minReadySeconds",
      pod({ ready: "True", since: readyAt }),
      10,
      readyAtMs + 10_000,
      false,
    ],
    [
      "ready for longer than minReadySeconds",
      pod({ ready: "True", since: readyAt }),
      10,
      readyAtMs + 10_001,
      true,
    ],
  ])("isPodAvailable: %s → %s", (_name, p, minReadySeconds, now, expected) => {
    expect(isPodAvailable(p, minReadySeconds, now)).toBe(expected);
  });
});
