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

  it("skips listing while the runtime's revision is unchanged, and still vouches for every pod", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const runtime = new SimulatedRuntime({ clock });
    const events: PodLifecycleEvent[] = [];
    const pleg = new Pleg({ runtime, clock, onEvents: (batch) => events.push(...batch) });
    await start(runtime, "a");
    let listings = 0;
    const list = runtime.listContainers.bind(runtime);
    runtime.listContainers = (filter) => {
      listings++;
      return list(filter);
    };
    pleg.relist();
    expect(listings).toBe(1);
    expect(events.map((e) => [e.podUid, e.type])).toEqual([["a", "ContainerStarted"]]);
    const entry = pleg.get("a");

    // Nothing changed: no listing, no event, the same entry, and a later relist time.
    clock.setTime(clock.now() + 1000);
    pleg.relist();
    expect(listings).toBe(1);
    expect(events).toHaveLength(1);
    expect(pleg.get("a")).toBe(entry);
    expect(pleg.lastRelistTime()).toBe(clock.now());
    // A worker waiting for a status newer than now is answered by the next relist, as by a full one.
    const signal = new AbortController().signal;
    const newer = pleg.getNewerThan("a", clock.now(), signal);
    clock.setTime(clock.now() + 1000);
    pleg.relist();
    await expect(newer).resolves.toBe(entry);
    expect(listings).toBe(1);

    // A sandbox alone is a change too: a pod with no container yet is listed.
    await runtime.runPodSandbox(config("b"));
    pleg.relist();
    expect(listings).toBe(2);
    expect(pleg.get("b")?.sandboxes.map((s) => s.state)).toEqual(["ready"]);

    // A change, even with no one listening to the runtime's events, is listed at the next relist.
    await runtime.stopContainer(runtime.listContainers({ podUid: "a" })[0]!.id, 0);
    clock.setTime(clock.now() + 1000);
    pleg.relist();
    expect(listings).toBe(4);
    expect(events.map((e) => [e.podUid, e.type])).toEqual([
      ["a", "ContainerStarted"],
      ["a", "ContainerDied"],
    ]);
    expect(pleg.get("a")?.containers.map((c) => c.state)).toEqual(["exited"]);
  });

  it("keeps the entry of a pod that did not change when another pod's change makes it relist", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const runtime = new SimulatedRuntime({ clock });
    const events: PodLifecycleEvent[] = [];
    const pleg = new Pleg({ runtime, clock, onEvents: (batch) => events.push(...batch) });
    await start(runtime, "a");
    await start(runtime, "b");
    pleg.relist();
    const a = pleg.get("a");
    const b = pleg.get("b");
    await runtime.stopContainer(runtime.listContainers({ podUid: "b" })[0]!.id, 0);
    clock.setTime(clock.now() + 1000);
    pleg.relist();
    expect(pleg.get("a")).toBe(a);
    expect(pleg.get("b")).not.toBe(b);
    expect(pleg.get("b")?.containers.map((c) => c.state)).toEqual(["exited"]);
    expect(events.map((e) => [e.podUid, e.type])).toEqual([
      ["a", "ContainerStarted"],
      ["b", "ContainerStarted"],
      ["b", "ContainerDied"],
    ]);
    // A pod whose sandboxes are all gone leaves the cache, with an event per container.
    await runtime.removeContainer(runtime.listContainers({ podUid: "b" })[0]!.id);
    for (const sandbox of runtime.listPodSandboxes({ podUid: "b" }))
      await runtime.removePodSandbox(sandbox.id);
    pleg.relist();
    expect(pleg.get("b")).toBeUndefined();
    expect(pleg.get("a")).toBe(a);
    expect(events.at(-1)).toMatchObject({ podUid: "b", type: "ContainerRemoved" });
  });
});
