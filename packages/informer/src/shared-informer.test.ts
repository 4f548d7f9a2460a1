import { type DeepReadonly, isDeletedFinalStateUnknown, type Logger, type Pod, pods } from "@reconcile/api";
import { pod as buildPod } from "@reconcile/api/testing";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { currentDelivery, type Delivery, type ResourceEventHandler } from "./processor-listener.js";
import {
  determineResyncPeriod,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from "./shared-informer.js";
import { FakeListerWatcher } from "./testing/index.js";

const pod = (name: string, labels: Record<string, string> = {}): Pod =>
  buildPod(name, { namespace: "ns", labels });

/** A handler that records calls as strings: "add a true", "update a 1->2", "delete a", "delete-tombstone a". */
function recorder(): ResourceEventHandler<Pod> & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    onAdd: (p, initial) => void calls.push(`add ${p.metadata?.name} ${initial}`),
    onUpdate: (o, n) =>
      void calls.push(
        `update ${n.metadata?.name} ${o.metadata?.resourceVersion}->${n.metadata?.resourceVersion}`,
      ),
    onDelete: (p) =>
      void calls.push(
        isDeletedFinalStateUnknown(p)
          ? `delete-tombstone ${p.key} ${p.obj?.metadata?.resourceVersion}`
          : `delete ${p.metadata?.name}`,
      ),
  };
}

interface Harness {
  clock: FakeClock;
  lw: FakeListerWatcher<Pod>;
  informer: SharedIndexInformer<Pod>;
  watchErrors: unknown[];
  handlerErrors: unknown[];
  run: () => void;
  stop: () => Promise<void>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

function setup(
  lw = new FakeListerWatcher<Pod>(),
  options: Partial<SharedIndexInformerOptions<Pod>> = {},
): Harness {
  const clock = new FakeClock(1_000_000);
  const watchErrors: unknown[] = [];
  const handlerErrors: unknown[] = [];
  const informer = new SharedIndexInformer<Pod>({
    listerWatcher: lw,
    resource: pods,
    clock,
    random: () => 0,
    detectMutations: true,
    watchErrorHandler: (error) => watchErrors.push(error),
    handlerErrorHandler: (error) => handlerErrors.push(error),
    ...options,
  });
  const controller = new AbortController();
  let done: Promise<void> = Promise.resolve();
  const h: Harness = {
    clock,
    lw,
    informer,
    watchErrors,
    handlerErrors,
    run: () => {
      done = informer.run({ signal: controller.signal });
    },
    stop: async () => {
      controller.abort();
      await done;
      expect(clock.pendingTimers()).toEqual([]);
    },
  };
  harnesses.push(h);
  return h;
}

describe("SharedIndexInformer", () => {
  it("delivers the initial list as initial adds, then watch events with the old object on update", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")] });
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler);
    expect(h.informer.hasSynced()).toBe(false);
    h.run();
    await h.clock.flush();
    expect(h.informer.hasSynced()).toBe(true);
    lw.add(pod("c"));
    lw.modify(pod("a", { v: "2" }));
    lw.delete("ns/b");
    await h.clock.flush();
    expect(handler.calls).toEqual(["add a true", "add b true", "add c false", "update a 1->4", "delete b"]);
    expect(h.informer.getIndexer().listKeys().sort()).toEqual(["ns/a", "ns/c"]);
    expect(h.informer.getStore().getByKey("ns/a")?.metadata?.labels).toEqual({ v: "2" });
    expect(h.informer.lastSyncResourceVersion()).toBe("5");
  });

  it("tells a running handler which delivery it is handling (currentDelivery), and no one outside a handler", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const seen: (Delivery | undefined)[] = [];
    h.informer.addEventHandler({
      onAdd: () => void seen.push(currentDelivery()),
      onUpdate: () => void seen.push(currentDelivery()),
      onDelete: async () => {
        seen.push(currentDelivery());
        await Promise.resolve();
        // After the handler's first await the delivery is no longer its own.
        seen.push(currentDelivery());
      },
    });
    h.run();
    await h.clock.flush();
    lw.modify(pod("a", { v: "2" }));
    lw.delete("ns/a");
    await h.clock.flush();
    expect(currentDelivery()).toBeUndefined();
    expect(seen).toEqual([
      { informer: "pods", type: "ADDED", key: "ns/a", resourceVersion: "1", initial: true },
      { informer: "pods", type: "MODIFIED", key: "ns/a", resourceVersion: "2", initial: false },
      { informer: "pods", type: "DELETED", key: "ns/a", resourceVersion: "3", initial: false },
      undefined,
    ]);
  });

  it("reports its backlog: changes not yet cached, and cached changes not yet handled", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    h.informer.addEventHandler({ onAdd: () => blocked });
    h.informer.addEventHandler({ onAdd: () => {} });
    expect(h.informer.backlog()).toEqual({ deltas: 0, notifications: 0 });
    h.run();
    await h.clock.flush();
    lw.add(pod("b"));
    lw.add(pod("c"));
    await h.clock.flush();
    // The first handler still holds "a": "b" and "c" wait for it; the second handler is done.
    expect(h.informer.backlog()).toEqual({ deltas: 0, notifications: 2 });
    release();
    await h.clock.flush();
    expect(h.informer.backlog()).toEqual({ deltas: 0, notifications: 0 });
  });

  it("whenSynced resolves once the initial list is in the cache, with no timer of its own", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")] });
    const h = setup(lw);
    let synced: number | undefined;
    void h.informer.whenSynced().then(() => (synced = h.informer.getIndexer().listKeys().length));
    await Promise.resolve();
    expect(synced).toBeUndefined();
    h.run();
    await h.clock.flush();
    expect(synced).toBe(2);
    expect(h.informer.whenSynced()).toBe(h.informer.whenSynced());
  });

  it("whenSynced resolves for an empty initial list", async () => {
    const h = setup(new FakeListerWatcher<Pod>());
    h.run();
    await h.clock.flush();
    let resolved = false;
    await h.informer.whenSynced().then(() => (resolved = true));
    expect(resolved).toBe(true);
    expect(h.informer.hasSynced()).toBe(true);
  });

  it("a registration has synced only after its handler has handled every initial add", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")] });
    const h = setup(lw);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = h.informer.addEventHandler({ onAdd: () => gate });
    const fast = h.informer.addEventHandler({});
    expect(slow.hasSynced()).toBe(false);
    h.run();
    await h.clock.flush();
    expect(h.informer.hasSynced()).toBe(true);
    expect(fast.hasSynced()).toBe(true);
    expect(slow.hasSynced()).toBe(false);
    release();
    await h.clock.flush();
    expect(slow.hasSynced()).toBe(true);
  });

  it("a handler added after start gets an initial add for every cached object", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")] });
    const h = setup(lw);
    h.run();
    await h.clock.flush();
    const late = recorder();
    const registration = h.informer.addEventHandler(late);
    expect(registration.hasSynced()).toBe(false);
    await h.clock.flush();
    expect(registration.hasSynced()).toBe(true);
    lw.add(pod("c"));
    await h.clock.flush();
    expect(late.calls).toEqual(["add a true", "add b true", "add c false"]);
  });

  it("removeEventHandler stops delivery and ignores unknown or removed registrations", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const kept = recorder();
    const removed = recorder();
    h.informer.addEventHandler(kept);
    const registration = h.informer.addEventHandler(removed);
    h.run();
    await h.clock.flush();
    h.informer.removeEventHandler(registration);
    h.informer.removeEventHandler(registration);
    h.informer.removeEventHandler({ hasSynced: () => true });
    lw.add(pod("b"));
    await h.clock.flush();
    expect(removed.calls).toEqual(["add a true"]);
    expect(kept.calls).toEqual(["add a true", "add b false"]);
  });

  it("registers the same handler twice as two independent registrations", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler);
    h.informer.addEventHandler(handler);
    h.run();
    await h.clock.flush();
    expect(handler.calls).toEqual(["add a true", "add a true"]);
  });

  it("resyncs only the handlers that are due, as onUpdate(o, o)", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const every2s = recorder();
    const every5s = recorder();
    const never = recorder();
    h.informer.addEventHandler(every2s, { resyncPeriodMs: 2000 });
    h.informer.addEventHandler(every5s, { resyncPeriodMs: 5000 });
    h.informer.addEventHandler(never, { resyncPeriodMs: 0 });
    h.run();
    await h.clock.flush();
    await h.clock.advance(6000);
    expect(every2s.calls).toEqual(["add a true", "update a 1->1", "update a 1->1", "update a 1->1"]);
    expect(every5s.calls).toEqual(["add a true", "update a 1->1"]);
    expect(never.calls).toEqual(["add a true"]);
  });

  it("does not resync at all when the informer and its handlers ask for no resync", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler);
    h.run();
    await h.clock.flush();
    await h.clock.advance(3_600_000);
    expect(handler.calls).toEqual(["add a true"]);
  });

  it("raises a resync period under 1s to 1s", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler, { resyncPeriodMs: 10 });
    h.run();
    await h.clock.flush();
    await h.clock.advance(999);
    expect(handler.calls).toEqual(["add a true"]);
    await h.clock.advance(1);
    expect(handler.calls).toEqual(["add a true", "update a 1->1"]);
  });

  it("raises a shorter period asked for after start to the informer's check period", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw, { resyncPeriodMs: 10_000 });
    h.run();
    await h.clock.flush();
    const handler = recorder();
    h.informer.addEventHandler(handler, { resyncPeriodMs: 1000 });
    await h.clock.advance(9000);
    expect(handler.calls).toEqual(["add a true"]);
    await h.clock.advance(1000);
    expect(handler.calls).toEqual(["add a true", "update a 1->1"]);
  });

  it("rejects an infinite resync period where it is given, not later in run", () => {
    const lw = new FakeListerWatcher<Pod>();
    expect(() => new SharedIndexInformer<Pod>({ listerWatcher: lw, resyncPeriodMs: Infinity })).toThrow(
      "SharedIndexInformer: resyncPeriodMs must be a finite non-negative number, got Infinity",
    );
    const informer = new SharedIndexInformer<Pod>({ listerWatcher: lw });
    expect(() => informer.addEventHandler({}, { resyncPeriodMs: Infinity })).toThrow(
      "addEventHandler: resyncPeriodMs must be a finite non-negative number, got Infinity",
    );
  });

  it.each([
    { desired: 0, check: 1000, expected: 0 },
    { desired: 1000, check: 0, expected: 0 },
    { desired: 1000, check: 5000, expected: 5000 },
    { desired: 5000, check: 1000, expected: 5000 },
  ])("determineResyncPeriod($desired, $check) = $expected", ({ desired, check, expected }) => {
    expect(determineResyncPeriod(desired, check)).toBe(expected);
  });

  it("delivers a tombstone for an object deleted while the watch was down (and the relist re-delivers unchanged objects as onUpdate(o, o), as client-go does)", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")], historySize: 1 });
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler);
    h.run();
    await h.clock.flush();
    // The watch breaks; meanwhile b is deleted and the history moves on, so the re-watch gets 410.
    lw.failNextWatch(new Error("ECONNREFUSED"));
    lw.breakWatches();
    lw.delete("ns/b");
    lw.add(pod("c"));
    await h.clock.flush();
    await h.clock.advance(800);
    await h.clock.advance(1600);
    expect(handler.calls).toEqual([
      "add a true",
      "add b true",
      "update a 1->1",
      "add c false",
      "delete-tombstone ns/b 2",
    ]);
    expect(h.informer.getIndexer().listKeys().sort()).toEqual(["ns/a", "ns/c"]);
  });

  it("a handler that throws is reported and neither the informer nor other handlers notice", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const other = recorder();
    let calls = 0;
    h.informer.addEventHandler({
      onAdd: () => {
        calls++;
        throw new Error("handler bug");
      },
    });
    h.informer.addEventHandler({ onAdd: async () => Promise.reject(new Error("async handler bug")) });
    h.informer.addEventHandler(other);
    h.run();
    await h.clock.flush();
    lw.add(pod("b"));
    await h.clock.flush();
    expect(calls).toBe(2);
    expect(other.calls).toEqual(["add a true", "add b false"]);
    expect(h.handlerErrors.map((e) => (e as Error).message).sort()).toEqual([
      "async handler bug",
      "async handler bug",
      "handler bug",
      "handler bug",
    ]);
  });

  it("without error handlers, logs handler and watch errors on its logger (410s aside) and never on the console", async () => {
    const records: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (obj, msg) => void records.push(`warn ${msg} ${(obj.err as Error).message}`),
      error: (obj, msg) => void records.push(`error ${msg} ${(obj.err as Error).message}`),
      child: () => logger,
    };
    const console = vi.spyOn(globalThis.console, "warn");
    const consoleError = vi.spyOn(globalThis.console, "error");
    try {
      const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
      lw.failNextList(new Error("forbidden"));
      const h = setup(lw, { watchErrorHandler: undefined, handlerErrorHandler: undefined, logger });
      h.informer.addEventHandler({
        onAdd: () => {
          throw new Error("handler bug");
        },
      });
      h.run();
      await h.clock.advance(800);
      expect(records).toEqual([
        "warn watch of pods failed; retrying forbidden",
        "error informer pods: event handler onAdd failed handler bug",
      ]);
      const quiet = setup(new FakeListerWatcher<Pod>({ objects: [pod("a")] }), {
        watchErrorHandler: undefined,
        handlerErrorHandler: undefined,
      });
      quiet.informer.addEventHandler({
        onAdd: () => {
          throw new Error("handler bug");
        },
      });
      quiet.run();
      await quiet.clock.flush();
      expect(console).not.toHaveBeenCalled();
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      console.mockRestore();
      consoleError.mockRestore();
    }
  });

  it("a slow handler does not hold back the others", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw);
    const fast = recorder();
    let slowCalls = 0;
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    h.informer.addEventHandler({
      onAdd: () => {
        slowCalls++;
        return stuck;
      },
    });
    h.informer.addEventHandler(fast);
    h.run();
    await h.clock.flush();
    for (let i = 0; i < 100; i++) lw.add(pod(`p${i}`));
    await h.clock.flush();
    expect(slowCalls).toBe(1);
    expect(fast.calls).toHaveLength(101);
    release();
    await h.clock.flush();
    expect(slowCalls).toBe(101);
  });

  it("applies the transform before caching and before handlers see the object", async () => {
    const lw = new FakeListerWatcher<Pod>({
      objects: [{ metadata: { namespace: "ns", name: "a", managedFields: [{ manager: "kubectl" }] } }],
    });
    const h = setup(lw);
    h.informer.setTransform((p) => {
      if (p.metadata) delete p.metadata.managedFields;
      return p;
    });
    const seen: DeepReadonly<Pod>[] = [];
    h.informer.addEventHandler({ onAdd: (p) => void seen.push(p) });
    h.run();
    await h.clock.flush();
    expect(seen[0]?.metadata?.managedFields).toBeUndefined();
    expect(h.informer.getIndexer().getByKey("ns/a")?.metadata?.managedFields).toBeUndefined();
    expect(() => h.informer.setTransform((p) => p)).toThrow("has already started");
    expect(() => h.informer.setWatchErrorHandler(() => {})).toThrow("has already started");
  });

  it("with the mutation detector on, mutating a cached object throws", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a", { app: "web" })] });
    const h = setup(lw);
    let mutation: unknown;
    h.informer.addEventHandler({
      onAdd: (p) => {
        try {
          (p as Pod).metadata!.labels!.app = "changed";
        } catch (error) {
          mutation = error;
        }
      },
    });
    h.run();
    await h.clock.flush();
    expect(mutation).toBeInstanceOf(TypeError);
    expect(h.informer.getIndexer().getByKey("ns/a")?.metadata?.labels).toEqual({ app: "web" });
  });

  it("reports a failing first list through the watch-error handler and keeps retrying until it works", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    lw.failNextList(new Error("forbidden"));
    lw.failNextList(new Error("forbidden"));
    const h = setup(lw);
    const handler = recorder();
    h.informer.addEventHandler(handler);
    h.run();
    await h.clock.flush();
    expect(h.informer.hasSynced()).toBe(false);
    expect((h.informer.lastWatchError() as Error).message).toBe("forbidden");
    await h.clock.advance(800 + 1600);
    expect(h.watchErrors).toHaveLength(2);
    expect(h.informer.hasSynced()).toBe(true);
    expect(handler.calls).toEqual(["add a true"]);
  });

  it("run settles after abort with no timer left; it cannot run twice; handlers cannot join after stop", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = setup(lw, { resyncPeriodMs: 5000 });
    h.informer.addEventHandler({ onAdd: () => new Promise<void>((resolve) => setTimeout(resolve, 1)) });
    h.run();
    await h.clock.flush();
    await expect(h.informer.run(new AbortController().signal)).rejects.toThrow("has already started");
    harnesses.splice(harnesses.indexOf(h), 1);
    await h.stop();
    expect(lw.openWatches).toBe(0);
    expect(h.informer.isStopped()).toBe(true);
    expect(() => h.informer.addEventHandler({})).toThrow("has stopped already");
  });

  it("adds indexers on a running informer and indexes what is cached", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a", { app: "web" }), pod("b", { app: "db" })] });
    const h = setup(lw);
    h.run();
    await h.clock.flush();
    h.informer.addIndexers({ byApp: (p) => [p.metadata?.labels?.app ?? ""] });
    expect(h.informer.getIndexer().indexKeys("byApp", "web")).toEqual(["ns/a"]);
    lw.add(pod("c", { app: "web" }));
    await h.clock.flush();
    expect(h.informer.getIndexer().indexKeys("byApp", "web")).toEqual(["ns/a", "ns/c"]);
  });

  it("sends its selectors on both list and watch", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a", { app: "web" }), pod("b", { app: "db" })] });
    const h = setup(lw, { labelSelector: "app=web" });
    h.run();
    await h.clock.flush();
    lw.add(pod("c", { app: "db" }));
    lw.add(pod("d", { app: "web" }));
    await h.clock.flush();
    expect(lw.listCalls[0]?.labelSelector).toBe("app=web");
    expect(lw.watchCalls[0]?.labelSelector).toBe("app=web");
    expect(h.informer.getIndexer().listKeys().sort()).toEqual(["ns/a", "ns/d"]);
  });
  it("asks list and watch for frozen objects when it freezes its cache itself and has no transform, or when told", async () => {
    const asked = async (options: Partial<SharedIndexInformerOptions<Pod>>) => {
      const lw = new FakeListerWatcher<Pod>({ objects: [pod("a", { app: "web" })] });
      const h = setup(lw, options);
      h.run();
      await h.clock.flush();
      await h.stop();
      return [lw.listCalls[0]?.acceptFrozen, lw.watchCalls[0]?.acceptFrozen];
    };
    expect(await asked({})).toEqual([true, true]);
    expect(await asked({ detectMutations: false })).toEqual([undefined, undefined]);
    expect(await asked({ transform: (p) => p })).toEqual([undefined, undefined]);
    expect(await asked({ detectMutations: false, acceptFrozen: true })).toEqual([true, true]);
    expect(await asked({ acceptFrozen: false })).toEqual([undefined, undefined]);
  });
});
