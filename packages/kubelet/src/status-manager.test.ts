import type { Pod } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { mergePatchDiff, StatusManager } from "./status-manager.js";

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

describe("StatusManager writes", () => {
  /** A client whose status patches wait until released, recording what was sent and how many ran at once. */
  function slowClient() {
    const sent: { name: string; phase: unknown }[] = [];
    const waiting: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const client = {
      resource: () => ({
        async patch(name: string, patch: { status: { phase?: unknown } }) {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          sent.push({ name, phase: patch.status.phase });
          await new Promise<void>((resolve) => waiting.push(resolve));
          inFlight--;
          return { metadata: { name }, status: patch.status };
        },
      }),
    } as unknown as Client;
    return { client, sent, release: () => waiting.shift()?.(), maxInFlight: () => maxInFlight };
  }
  const pod = (name: string): Pod => ({ metadata: { name, namespace: "default", uid: `uid-${name}` } });
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it("writes one pod at a time, each with its latest status: statuses set meanwhile are coalesced", async () => {
    const { client, sent, release, maxInFlight } = slowClient();
    const manager = new StatusManager({ client, getPod: () => undefined, clock: new FakeClock(0) });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    manager.setPodStatus(pod("a"), { phase: "Pending" });
    manager.setPodStatus(pod("b"), { phase: "Pending" });
    await turn();
    expect(sent).toEqual([{ name: "a", phase: "Pending" }]);
    // While a's write is in flight, b runs and a changes again twice.
    manager.setPodStatus(pod("b"), { phase: "Running" });
    manager.setPodStatus(pod("a"), { phase: "Running" });
    manager.setPodStatus(pod("a"), { phase: "Succeeded" });
    for (let i = 0; i < 4; i++) {
      release();
      await turn();
    }
    expect(sent).toEqual([
      { name: "a", phase: "Pending" },
      { name: "b", phase: "Running" },
      { name: "a", phase: "Succeeded" },
    ]);
    expect(maxInFlight()).toBe(1);
    stop.abort();
    release();
    await running;
  });
});
