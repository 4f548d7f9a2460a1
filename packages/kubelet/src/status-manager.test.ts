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
  /** A client whose status patches wait until released, recording what was sent. */
  function slowClient() {
    const sent: { name: string; phase: unknown }[] = [];
    const waiting: (() => void)[] = [];
    const client = {
      resource: () => ({
        async patch(name: string, patch: { status: { phase?: unknown } }) {
          sent.push({ name, phase: patch.status.phase });
          await new Promise<void>((resolve) => waiting.push(resolve));
          return { metadata: { name }, status: patch.status };
        },
      }),
    } as unknown as Client;
    return { client, sent, release: () => waiting.shift()?.() };
  }
  const pod = (name: string): Pod => ({ metadata: { name, namespace: "default", uid: `uid-${name}` } });
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it("writes a pod whose status changed during its write once more, with only the latest status", async () => {
    const { client, sent, release } = slowClient();
    const manager = new StatusManager({ client, getPod: () => undefined, clock: new FakeClock(0) });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    manager.setPodStatus(pod("a"), { phase: "Pending" });
    await turn();
    manager.setPodStatus(pod("a"), { phase: "Running" });
    manager.setPodStatus(pod("a"), { phase: "Succeeded" });
    manager.setPodStatus(pod("b"), { phase: "Pending" });
    await turn();
    // b is written at once; a waits for its write in flight.
    expect(sent).toEqual([
      { name: "a", phase: "Pending" },
      { name: "b", phase: "Pending" },
    ]);
    release();
    await turn();
    await turn();
    expect(sent).toEqual([
      { name: "a", phase: "Pending" },
      { name: "b", phase: "Pending" },
      { name: "a", phase: "Succeeded" },
    ]);
    stop.abort();
    release();
    release();
    await running;
  });

  it("writes a status again only when a member or a condition's type, status, reason or message changed", async () => {
    const sentStatuses: Record<string, unknown>[] = [];
    const client = {
      resource: () => ({
        async patch(name: string, patch: { status: Record<string, unknown> }) {
          sentStatuses.push(patch.status);
          return { metadata: { name }, status: patch.status };
        },
      }),
    } as unknown as Client;
    const clock = new FakeClock(0);
    const manager = new StatusManager({ client, getPod: () => undefined, clock });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    const ready = (reason?: string) => ({
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", ...(reason === undefined ? {} : { reason }) }],
    });
    manager.setPodStatus(pod("a"), ready());
    for (let i = 0; i < 3; i++) await turn();
    expect(sentStatuses).toHaveLength(1);
    // Later, the same status: only the kubelet's times would differ, and they are not compared.
    await clock.advance(5_000);
    manager.setPodStatus(pod("a"), ready());
    for (let i = 0; i < 3; i++) await turn();
    expect(sentStatuses).toHaveLength(1);
    manager.setPodStatus(pod("a"), ready("ContainersNotReady"));
    for (let i = 0; i < 3; i++) await turn();
    expect(sentStatuses).toHaveLength(2);
    manager.setPodStatus(pod("a"), { ...ready("ContainersNotReady"), hostIP: "10.0.0.1" });
    for (let i = 0; i < 3; i++) await turn();
    expect(sentStatuses).toHaveLength(3);
    expect(sentStatuses[2]).toMatchObject({ hostIP: "10.0.0.1" });
    stop.abort();
    await running;
  });

  it("retries a failed write at the sync period, not at once", async () => {
    const clock = new FakeClock(0);
    let attempts = 0;
    const client = {
      resource: () => ({
        async patch() {
          attempts++;
          throw new Error("connection refused");
        },
      }),
    } as unknown as Client;
    const manager = new StatusManager({ client, getPod: () => undefined, clock, syncPeriodMs: 10_000 });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    manager.setPodStatus(pod("a"), { phase: "Pending" });
    for (let i = 0; i < 5; i++) await turn();
    expect(attempts).toBe(1);
    await clock.advance(10_000);
    for (let i = 0; i < 5; i++) await turn();
    expect(attempts).toBe(2);
    stop.abort();
    await running;
  });
});
