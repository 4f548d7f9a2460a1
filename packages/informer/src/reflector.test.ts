import {
  newInternalError,
  newResourceExpired,
  newTooManyRequests,
  type Pod,
  StatusError,
} from "@reconcile/api";
import { pod as buildPod } from "@reconcile/api/testing";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import {
  IdleWatchError,
  Reflector,
  type ReflectorOptions,
  VeryShortWatchError,
  WatchStreamError,
} from "./reflector.js";
import { FakeListerWatcher } from "./testing/index.js";

const pod = (name: string, labels: Record<string, string> = {}): Pod =>
  buildPod(name, { namespace: "ns", labels });

class RecordingStore {
  readonly ops: string[] = [];
  replaced: { names: string[]; resourceVersion: string }[] = [];
  resyncs = 0;
  onReplace: (() => void) | undefined;
  add(p: Pod) {
    if (p.metadata?.name === "poison") throw new Error("poisoned object");
    this.ops.push(`add ${p.metadata?.name}`);
  }
  update(p: Pod) {
    this.ops.push(`update ${p.metadata?.name}`);
  }
  delete(p: Pod) {
    this.ops.push(`delete ${p.metadata?.name}`);
  }
  replace(list: Pod[], resourceVersion: string) {
    this.replaced.push({ names: list.map((p) => p.metadata!.name!), resourceVersion });
    this.onReplace?.();
  }
  resync() {
    this.resyncs++;
  }
}

interface Harness {
  clock: FakeClock;
  lw: FakeListerWatcher<Pod>;
  store: RecordingStore;
  reflector: Reflector<Pod>;
  errors: unknown[];
  stop: () => Promise<void>;
}

const running: Harness[] = [];
afterEach(async () => {
  for (const h of running.splice(0)) await h.stop();
});

function start(lw = new FakeListerWatcher<Pod>(), options: Partial<ReflectorOptions<Pod>> = {}): Harness {
  const clock = new FakeClock(1_000_000);
  const store = new RecordingStore();
  const errors: unknown[] = [];
  const reflector = new Reflector<Pod>({
    listerWatcher: lw,
    store,
    name: "pods",
    clock,
    random: () => 0,
    watchErrorHandler: (error) => errors.push(error),
    ...options,
  });
  const controller = new AbortController();
  const done = reflector.run({ signal: controller.signal });
  const harness = {
    clock,
    lw,
    store,
    reflector,
    errors,
    stop: async () => {
      controller.abort();
      await done;
      expect(clock.pendingTimers()).toEqual([]);
    },
  };
  running.push(harness);
  return harness;
}

describe("Reflector", () => {
  it("lists at resourceVersion 0 in pages of 500, then watches from the listed version with bookmarks", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b")] });
    const h = start(lw, { labelSelector: "app=web", fieldSelector: "spec.nodeName=n1", random: () => 0.5 });
    await h.clock.flush();
    expect(lw.listCalls.map(({ signal, ...o }) => o)).toEqual([
      { resourceVersion: "0", limit: 500, labelSelector: "app=web", fieldSelector: "spec.nodeName=n1" },
    ]);
    expect(lw.watchCalls.map(({ signal, ...o }) => o)).toEqual([
      {
        resourceVersion: "2",
        timeoutSeconds: 450,
        allowWatchBookmarks: true,
        labelSelector: "app=web",
        fieldSelector: "spec.nodeName=n1",
      },
    ]);
    expect(h.reflector.lastSyncResourceVersion()).toBe("2");
  });

  it("picks watch timeouts in [5, 10] minutes", async () => {
    for (const [random, expected] of [
      [0, 300],
      [0.999, 599],
    ] as const) {
      const h = start(new FakeListerWatcher<Pod>(), { random: () => random });
      await h.clock.flush();
      expect(h.lw.watchCalls[0]?.timeoutSeconds).toBe(expected);
      await h.stop();
    }
  });

  it("follows continue tokens and replaces the store with every page", async () => {
    const objects = Array.from({ length: 1200 }, (_, i) => pod(`p${i}`));
    const lw = new FakeListerWatcher<Pod>({ objects });
    const h = start(lw);
    await h.clock.flush();
    expect(lw.listCalls.map((o) => [o.resourceVersion, o.limit, o.continue])).toEqual([
      ["0", 500, undefined],
      [undefined, 500, "1200:500"],
      [undefined, 500, "1200:1000"],
    ]);
    expect(h.store.replaced).toHaveLength(1);
    expect(h.store.replaced[0]!.names).toHaveLength(1200);
    expect(h.store.replaced[0]!.resourceVersion).toBe("1200");
  });

  it("falls back to one full list at the requested version when a continuation expires", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: Array.from({ length: 3 }, (_, i) => pod(`p${i}`)) });
    lw.onList = (options) => {
      if (options.continue) lw.expireContinueTokens();
    };
    const h = start(lw, { pageSize: 2 });
    await h.clock.flush();
    expect(lw.listCalls.map((o) => [o.resourceVersion, o.limit, o.continue])).toEqual([
      ["0", 2, undefined],
      [undefined, 2, "3:2"],
      ["0", undefined, undefined],
    ]);
    expect(h.store.replaced[0]!.names).toEqual(["p0", "p1", "p2"]);
  });

  it('retries a list whose resourceVersion is too large at once with resourceVersion ""', async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    lw.failNextList(
      new StatusError({
        code: 504,
        reason: "Timeout",
        message: "Too large resource version: 9, current: 1",
        details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] },
      }),
    );
    const h = start(lw);
    await h.clock.flush();
    expect(lw.listCalls.map((o) => o.resourceVersion)).toEqual(["0", ""]);
    expect(h.errors).toEqual([]);
    expect(h.store.replaced).toHaveLength(1);
  });

  it("keeps paging relists at a specific version once a resourceVersion=0 list came back paginated", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a"), pod("b"), pod("c")] });
    const h = start(lw, { pageSize: 2 });
    await h.clock.flush();
    await h.clock.advance(10_000);
    lw.sendError({ code: 410, reason: "Expired", message: "too old" });
    await h.clock.flush();
    await h.clock.advance(800);
    expect(lw.listCalls.map((o) => [o.resourceVersion, o.limit])).toEqual([
      ["0", 2],
      [undefined, 2],
      ["3", 2],
      [undefined, 2],
    ]);
  });

  it("applies watch events to the store and advances the resourceVersion", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("b"));
    lw.modify(pod("a", { v: "2" }));
    lw.delete("ns/b");
    await h.clock.flush();
    expect(h.store.ops).toEqual(["add b", "update a", "delete b"]);
    expect(h.reflector.lastSyncResourceVersion()).toBe("4");
  });

  it("a bookmark advances the resourceVersion", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a", { app: "web" })] });
    const h = start(lw, { labelSelector: "app=web" });
    await h.clock.flush();
    // A change the watch does not see (its selector filters it out), then a bookmark at the new version.
    lw.add(pod("hidden", { app: "x" }));
    await h.clock.flush();
    expect(h.reflector.lastSyncResourceVersion()).toBe("1");
    lw.bookmark();
    await h.clock.flush();
    expect(h.store.ops).toEqual([]);
    expect(h.reflector.lastSyncResourceVersion()).toBe("2");
  });

  it("re-watches from the last version after a normal close, without relisting", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("b"));
    await h.clock.advance(60_000);
    lw.closeWatches();
    await h.clock.flush();
    expect(lw.listCalls).toHaveLength(1);
    expect(lw.watchCalls.map((o) => o.resourceVersion)).toEqual(["1", "2"]);
    expect(h.errors).toEqual([]);
  });

  it("relists after a watch that closes within a second without events", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.closeWatches();
    await h.clock.flush();
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(VeryShortWatchError);
    expect(VeryShortWatchError.isInstance(h.errors[0])).toBe(true);
    expect((h.errors[0] as VeryShortWatchError).code).toBe("informer.very-short-watch");
    expect((h.errors[0] as VeryShortWatchError).legacyCode).toBe("reflector.very-short-watch");
    await h.clock.advance(800);
    expect(lw.listCalls.map((o) => o.resourceVersion)).toEqual(["0", "1"]);
  });

  it("relists at the last version after a 410 on the watch, and from scratch only if that list expires too", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")], historySize: 1 });
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("b"));
    await h.clock.advance(10_000);
    lw.sendError({ code: 410, reason: "Expired", message: "too old resource version: 1 (2)" });
    lw.failNextList(newResourceExpired("too old resource version"));
    await h.clock.flush();
    expect(h.errors.map((e) => (e as Error).message)).toEqual(["too old resource version: 1 (2)"]);
    await h.clock.advance(800);
    expect(lw.listCalls.map((o) => [o.resourceVersion, o.limit])).toEqual([
      ["0", 500],
      ["2", undefined],
      ["", 500],
    ]);
    expect(h.store.replaced.map((r) => r.resourceVersion)).toEqual(["1", "2"]);
    expect(lw.watchCalls.map((o) => o.resourceVersion)).toEqual(["1", "2"]);
  });

  it("after a fallback list from scratch, the next relist is at the last synced version again", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")], historySize: 1 });
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("b"));
    await h.clock.advance(10_000);
    lw.sendError({ code: 410, reason: "Expired", message: "too old resource version: 1 (2)" });
    lw.failNextList(newResourceExpired("too old resource version"));
    await h.clock.advance(800);
    // The fallback list from "" succeeded at version 2; a later relist starts from there, not from "".
    lw.sendError({ code: 500, reason: "InternalError", message: "etcd is sad" });
    await h.clock.advance(10_000);
    expect(lw.listCalls.map((o) => o.resourceVersion)).toEqual(["0", "2", "", "2"]);
    expect(h.store.replaced.map((r) => r.resourceVersion)).toEqual(["1", "2", "2"]);
  });

  it("relists after a watch from a version that has left a tiny history", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")], historySize: 1 });
    const h = start(lw);
    // Between the list and the watch, two writes push the listed version out of the history.
    h.store.onReplace = () => {
      h.store.onReplace = undefined;
      lw.add(pod("b"));
      lw.add(pod("c"));
    };
    await h.clock.flush();
    expect(h.errors.map((e) => (e as Error).message)).toEqual(["too old resource version: 1 (3)"]);
    await h.clock.advance(800);
    expect(h.store.replaced.at(-1)).toEqual({ names: ["a", "b", "c"], resourceVersion: "3" });
  });

  it("backs off and re-watches on 429 without relisting", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    lw.failNextWatch(newTooManyRequests("slow down"));
    lw.failNextWatch(newTooManyRequests("slow down"));
    const h = start(lw);
    await h.clock.flush();
    expect(lw.watchCalls).toHaveLength(1);
    await h.clock.advance(799);
    expect(lw.watchCalls).toHaveLength(1);
    await h.clock.advance(1);
    expect(lw.watchCalls).toHaveLength(2);
    await h.clock.advance(1600);
    expect(lw.watchCalls).toHaveLength(3);
    expect(lw.openWatches).toBe(1);
    expect(lw.listCalls).toHaveLength(1);
    expect(h.errors).toHaveLength(2);
  });

  it("backs off and re-watches on a 429 error event without relisting", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.sendError({ code: 429, reason: "TooManyRequests", message: "slow down" });
    await h.clock.advance(800);
    expect(lw.watchCalls).toHaveLength(2);
    expect(lw.listCalls).toHaveLength(1);
  });

  it("reports a failed first list and retries it with growing jittered backoff", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    for (let i = 0; i < 3; i++) lw.failNextList(newInternalError(new Error(`list failure ${i}`)));
    const h = start(lw, { random: () => 0.5 });
    await h.clock.flush();
    expect(h.errors).toHaveLength(1);
    await h.clock.advance(1199);
    expect(lw.listCalls).toHaveLength(1);
    await h.clock.advance(1);
    expect(lw.listCalls).toHaveLength(2);
    await h.clock.advance(2400);
    expect(lw.listCalls).toHaveLength(3);
    await h.clock.advance(4800);
    expect(lw.listCalls).toHaveLength(4);
    expect(h.errors).toHaveLength(3);
    expect(h.store.replaced).toHaveLength(1);
    expect(lw.openWatches).toBe(1);
  });

  it("caps backoff at 30s (before jitter) and resets it after 2 quiet minutes", async () => {
    const lw = new FakeListerWatcher<Pod>();
    for (let i = 0; i < 8; i++) lw.failNextList(new Error("down"));
    const h = start(lw);
    await h.clock.flush();
    const gaps: number[] = [];
    let last = h.clock.now();
    while (lw.listCalls.length < 9) {
      const before = lw.listCalls.length;
      await h.clock.advance(100);
      if (lw.listCalls.length > before) {
        gaps.push(h.clock.now() - last);
        last = h.clock.now();
      }
    }
    expect(gaps).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    // Watching quietly for more than 2 minutes, then failing again, starts over at 800ms.
    await h.clock.advance(180_000);
    lw.failNextList(new Error("down again"));
    lw.sendError({ code: 500, reason: "InternalError", message: "boom" });
    await h.clock.flush();
    const relistAt = h.clock.now();
    await h.clock.advance(800);
    expect(lw.listCalls).toHaveLength(10);
    await h.clock.advance(1599);
    expect(lw.listCalls).toHaveLength(10);
    await h.clock.advance(1);
    expect(lw.listCalls).toHaveLength(11);
    expect(h.clock.now() - relistAt).toBe(2400);
  });

  it("relists after an error event other than 410 and 429", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.sendError({ code: 500, reason: "InternalError", message: "etcd is sad" });
    await h.clock.advance(800);
    expect(h.errors.map((e) => (e as Error).message)).toEqual(["etcd is sad"]);
    expect(lw.listCalls.map((o) => o.resourceVersion)).toEqual(["0", "1"]);
  });

  it("re-watches from the last version after the stream is cut, reporting the cut", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("b"));
    await h.clock.flush();
    lw.breakWatches(new Error("ECONNRESET"));
    await h.clock.flush();
    expect(h.errors[0]).toBeInstanceOf(WatchStreamError);
    expect((h.errors[0] as Error).message).toBe("pods: watch stream failed: ECONNRESET");
    await h.clock.advance(800);
    expect(lw.watchCalls.map((o) => o.resourceVersion)).toEqual(["1", "2"]);
    expect(lw.listCalls).toHaveLength(1);
    lw.add(pod("c"));
    await h.clock.flush();
    expect(h.store.ops).toEqual(["add b", "add c"]);
  });

  it("restarts a watch that stays silent longer than idleTimeoutMs", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw, { idleTimeoutMs: 60_000 });
    await h.clock.flush();
    await h.clock.advance(30_000);
    lw.add(pod("b"));
    await h.clock.advance(59_000);
    expect(lw.watchCalls).toHaveLength(1);
    await h.clock.advance(1_000);
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(IdleWatchError);
    expect(lw.watchCalls.map((o) => o.resourceVersion)).toEqual(["1", "2"]);
    expect(lw.openWatches).toBe(1);
    expect(lw.listCalls).toHaveLength(1);
  });

  it("by default treats a watch open 30s past its own timeout as stalled", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw);
    await h.clock.flush();
    await h.clock.advance(329_999);
    expect(lw.watchCalls).toHaveLength(1);
    await h.clock.advance(1);
    expect(lw.watchCalls).toHaveLength(2);
    expect(h.errors[0]).toBeInstanceOf(IdleWatchError);
  });

  it("resyncs the store every resyncPeriodMs while watching, when shouldResync allows", async () => {
    let allow = true;
    const h = start(new FakeListerWatcher<Pod>({ objects: [pod("a")] }), {
      resyncPeriodMs: 1000,
      shouldResync: () => allow,
    });
    await h.clock.flush();
    await h.clock.advance(3000);
    expect(h.store.resyncs).toBe(3);
    allow = false;
    await h.clock.advance(3000);
    expect(h.store.resyncs).toBe(3);
  });

  it("reports and skips an event the store rejects, and keeps watching", async () => {
    const lw = new FakeListerWatcher<Pod>();
    const h = start(lw);
    await h.clock.flush();
    lw.add(pod("poison"));
    lw.add(pod("fine"));
    await h.clock.flush();
    expect(h.errors.map((e) => (e as Error).message)).toEqual(["poisoned object"]);
    expect(h.store.ops).toEqual(["add fine"]);
  });

  it("settles run after abort with the watch closed and no timers left", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw, { resyncPeriodMs: 1000 });
    await h.clock.flush();
    expect(lw.openWatches).toBe(1);
    running.splice(running.indexOf(h), 1);
    await h.stop();
    expect(lw.openWatches).toBe(0);
  });

  it("settles run after abort even while backing off", async () => {
    const lw = new FakeListerWatcher<Pod>();
    lw.failNextList(new Error("down"));
    const h = start(lw);
    await h.clock.flush();
    expect(h.clock.pendingTimers()).toHaveLength(1);
    running.splice(running.indexOf(h), 1);
    await h.stop();
  });

  it("does not hang on a watch iterator that ignores its signal: the idle detector and abort still work", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    let watches = 0;
    const deaf = {
      list: lw.list.bind(lw),
      watch: async () => {
        watches++;
        return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => {}) }) };
      },
    };
    const h = start(lw, { listerWatcher: deaf, idleTimeoutMs: 10_000 });
    await h.clock.flush();
    await h.clock.advance(10_000);
    expect(watches).toBe(2);
    expect(h.errors[0]).toBeInstanceOf(IdleWatchError);
  });

  it("settles run after abort even if the watch iterator's return() throws", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const brittle = {
      list: lw.list.bind(lw),
      watch: async () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => new Promise<never>(() => {}),
          return: (): Promise<IteratorResult<never>> => {
            throw new Error("socket already destroyed");
          },
        }),
      }),
    };
    const h = start(lw, { listerWatcher: brittle });
    await h.clock.flush();
    running.splice(running.indexOf(h), 1);
    let settled = false;
    const stopped = h.stop().then(() => {
      settled = true;
    });
    await h.clock.flush();
    expect(settled).toBe(true);
    await stopped;
  });

  it("reports a malformed watch event and watches again, instead of rejecting unhandled", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    let watches = 0;
    const malformed = {
      list: lw.list.bind(lw),
      watch: async () => {
        watches++;
        let sent = false;
        return {
          [Symbol.asyncIterator]: () => ({
            next: (): Promise<IteratorResult<never>> => {
              if (sent) return new Promise<never>(() => {});
              sent = true;
              return Promise.resolve({ done: false, value: { type: "ERROR" } as never });
            },
          }),
        };
      },
    };
    const h = start(lw, { listerWatcher: malformed });
    await h.clock.flush();
    expect(watches).toBe(1);
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(WatchStreamError);
    await h.clock.advance(800);
    expect(watches).toBe(2);
  });

  it("idleTimeoutMs 0 turns the idle detector off instead of restarting the watch in a tight loop", async () => {
    const lw = new FakeListerWatcher<Pod>({ objects: [pod("a")] });
    const h = start(lw, { idleTimeoutMs: 0 });
    await h.clock.flush();
    await h.clock.advance(60_000);
    expect(lw.watchCalls).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  it("rejects invalid options with a message naming the option", () => {
    const lw = new FakeListerWatcher<Pod>();
    expect(
      () => new Reflector<Pod>({ listerWatcher: lw, store: new RecordingStore(), pageSize: -1 }),
    ).toThrow("pageSize must be a non-negative number");
  });
});
