import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { Pleg, type PodLifecycleEvent } from "./pleg.js";
import type { PodSandboxConfig } from "./runtime/runtime.js";
import { SimulatedRuntime } from "./runtime/simulated-runtime.js";

const config = (podUid: string): PodSandboxConfig => ({
  podUid,
  name: podUid,
  namespace: "default",
  attempt: 0,
  hostNetwork: false,
  labels: {},
  annotations: {},
});

async function start(runtime: SimulatedRuntime, podUid: string): Promise<void> {
  const sandbox = await runtime.runPodSandbox(config(podUid));
  await runtime.pullImage("nginx", config(podUid));
  const id = await runtime.createContainer(sandbox, {
    name: "web",
    image: "nginx",
    attempt: 0,
    specHash: "h",
  });
  await runtime.startContainer(id);
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("Pleg", () => {
  it("takes in what changed a pod once a sync of it ends, before the next turn, and only that pod", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const runtime = new SimulatedRuntime({ clock });
    const events: PodLifecycleEvent[] = [];
    const pleg = new Pleg({ runtime, clock, onEvents: (batch) => events.push(...batch) });
    const stop = pleg.start();
    pleg.relist();
    const relistedAt = pleg.lastRelistTime();
    await start(runtime, "a");
    await start(runtime, "b");
    clock.setTime(clock.now() + 5);
    // The sync of "a" ended: its start is taken in at once, "b" waits for the relist.
    pleg.syncEnded("a");
    pleg.syncEnded("never-changed");
    await Promise.resolve();
    expect(events.map((e) => [e.podUid, e.type])).toEqual([["a", "ContainerStarted"]]);
    expect(pleg.get("a")?.containers.map((c) => c.state)).toEqual(["running"]);
    expect(pleg.get("b")).toBeUndefined();
    // Newer than the sync that ended, so the pod's next sync does not wait for a relist.
    const signal = new AbortController().signal;
    await expect(pleg.getNewerThan("a", clock.now(), signal)).resolves.toMatchObject({ uid: "a" });
    expect(pleg.lastRelistTime()).toBe(relistedAt);
    // The event-driven relist still comes for "b", without repeating "a".
    await macrotask();
    expect(events.map((e) => [e.podUid, e.type])).toEqual([
      ["a", "ContainerStarted"],
      ["b", "ContainerStarted"],
    ]);
    stop();
  });
});
