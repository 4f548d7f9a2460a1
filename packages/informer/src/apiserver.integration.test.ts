// The informer against the embedded API server: the failure modes users of
// other Node.js informers hit, each forced and observed. Failures the server
// cannot produce on demand (a cut connection, a stall, 429s) are injected by
// a ListerWatcher decorator around the server's client.
import {
  type DeepReadonly,
  isDeletedFinalStateUnknown,
  type ListerWatcher,
  type ListOptions,
  newForbidden,
  newInternalError,
  newTooManyRequests,
  type Pod,
  pods,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { listerWatcher, type ResourceClient } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { IdleWatchError, WatchStreamError } from "./reflector.js";
import { SharedIndexInformer, type SharedIndexInformerOptions } from "./shared-informer.js";

/** Wraps a ListerWatcher to inject failures and count calls. */
class FaultyListerWatcher implements ListerWatcher<Pod> {
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: (WatchOptions & { at: number })[] = [];
  readonly listFailures: unknown[] = [];
  readonly watchFailures: unknown[] = [];
  /** Runs before each list is sent to the server. */
  beforeList: (() => Promise<void>) | undefined;
  readonly #cuts = new Set<(error: unknown) => void>();
  readonly #stalls = new Set<{ stalled: boolean }>();

  constructor(
    readonly inner: ListerWatcher<Pod>,
    readonly clock: FakeClock,
  ) {}

  async list(options: ListOptions) {
    this.listCalls.push(options);
    await this.beforeList?.();
    const failure = this.listFailures.shift();
    if (failure !== undefined) throw failure;
    return this.inner.list(options);
  }

  async watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<Pod>>> {
    this.watchCalls.push({ ...options, at: this.clock.now() });
    const failure = this.watchFailures.shift();
    if (failure !== undefined) throw failure;
    const stream = await this.inner.watch(options);
    const iterator = stream[Symbol.asyncIterator]();
    let cut: ((error: unknown) => void) | undefined;
    const cutPromise = new Promise<never>((_, reject) => (cut = reject));
    cutPromise.catch(() => {});
    this.#cuts.add(cut!);
    const state = { stalled: false };
    this.#stalls.add(state);
    const self = this;
    return {
      [Symbol.asyncIterator]: () => ({
        async next() {
          for (;;) {
            const next = await Promise.race([iterator.next(), cutPromise]);
            if (!state.stalled || next.done) return next;
            // Stalled: the event is lost, and the stream goes on "waiting".
          }
        },
        async return() {
          self.#cuts.delete(cut!);
          self.#stalls.delete(state);
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      }),
    };
  }

  /** Open watches go silent forever without ending, as over a dead TCP connection. */
  stallWatches(): void {
    for (const state of this.#stalls) state.stalled = true;
  }

  /** Cuts every open watch mid-stream, as a dropped connection does. */
  cutWatches(error: unknown = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })): void {
    for (const cut of this.#cuts) cut(error);
    this.#cuts.clear();
  }
}

function pod(name: string, labels: Record<string, string> = {}): Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: "c", image: "nginx" }] } };
}

interface Harness {
  clock: FakeClock;
  server: ApiServer;
  podClient: ResourceClient<Pod>;
  lw: FaultyListerWatcher;
  informer: SharedIndexInformer<Pod>;
  watchErrors: unknown[];
  events: string[];
  /** Lets the informer and server catch up (no time passes). */
  settle: () => Promise<void>;
  stop: () => Promise<void>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

async function setup(
  options: {
    historySize?: number;
    labelSelector?: string;
    informer?: Partial<SharedIndexInformerOptions<Pod>>;
    before?: (lw: FaultyListerWatcher) => void;
  } = {},
): Promise<Harness> {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, historySize: options.historySize, garbageCollection: false });
  const client = server.client();
  const podClient = client.resource(pods, "default");
  const lw = new FaultyListerWatcher(
    listerWatcher(client, pods, { namespace: "default", labelSelector: options.labelSelector }),
    clock,
  );
  options.before?.(lw);
  const watchErrors: unknown[] = [];
  const events: string[] = [];
  const informer = new SharedIndexInformer<Pod>({
    listerWatcher: lw,
    resource: pods,
    clock,
    random: () => 0,
    detectMutations: true,
    watchErrorHandler: (error) => watchErrors.push(error),
    handlerErrorHandler: (error) => {
      throw error;
    },
    ...options.informer,
  });
  informer.addEventHandler({
    onAdd: (p) => void events.push(`add ${p.metadata?.name}`),
    onUpdate: (o, n) =>
      void events.push(
        `update ${n.metadata?.name} ${o.metadata?.labels?.v ?? "-"}->${n.metadata?.labels?.v ?? "-"}`,
      ),
    onDelete: (p) =>
      void events.push(
        isDeletedFinalStateUnknown(p) ? `delete-tombstone ${p.key}` : `delete ${p.metadata?.name}`,
      ),
  });
  const controller = new AbortController();
  const done = informer.run({ signal: controller.signal });
  const settle = async () => {
    for (let i = 0; i < 20; i++) await clock.flush();
  };
  const h: Harness = {
    clock,
    server,
    podClient,
    lw,
    informer,
    watchErrors,
    events,
    settle,
    stop: async () => {
      controller.abort();
      await done;
      await server.close();
    },
  };
  harnesses.push(h);
  await settle();
  return h;
}

function cachedNames(h: Harness): string[] {
  return h.informer
    .getIndexer()
    .list()
    .map((p: DeepReadonly<Pod>) => p.metadata!.name!)
    .sort();
}

describe("informer against the embedded API server", () => {
  it("delivers creates, updates with the old object, and deletes", async () => {
    const h = await setup();
    expect(h.informer.hasSynced()).toBe(true);
    const created = await h.podClient.create(pod("a", { v: "1" }));
    await h.podClient.update({ ...created, metadata: { ...created.metadata, labels: { v: "2" } } });
    await h.podClient.delete("a");
    await h.settle();
    expect(h.events).toEqual(["add a", "update a 1->2", "delete a"]);
    expect(cachedNames(h)).toEqual([]);
  });

  it("re-watches from the last resourceVersion after the watch is cut mid-stream, missing nothing", async () => {
    const h = await setup();
    await h.podClient.create(pod("a"));
    await h.settle();
    h.lw.cutWatches();
    await h.podClient.create(pod("b"));
    await h.settle();
    await h.clock.advance(800);
    await h.settle();
    expect(h.watchErrors[0]).toBeInstanceOf(WatchStreamError);
    expect(h.events).toEqual(["add a", "add b"]);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.lw.watchCalls).toHaveLength(2);
  });

  it("relists after a 410 forced by a tiny history, and the cache converges", async () => {
    const h = await setup({ historySize: 2 });
    await h.podClient.create(pod("a"));
    await h.settle();
    // The watch drops and cannot come back at once; meanwhile the history moves on.
    h.lw.watchFailures.push(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    h.lw.cutWatches();
    for (const name of ["b", "c", "d", "e"]) await h.podClient.create(pod(name));
    await h.podClient.delete("a");
    await h.settle();
    await h.clock.advance(800 + 1600 + 3200);
    await h.settle();
    expect(h.watchErrors.some((e) => (e as Error).message.startsWith("too old resource version"))).toBe(true);
    expect(h.lw.listCalls.length).toBe(2);
    expect(cachedNames(h)).toEqual(["b", "c", "d", "e"]);
    expect(h.events).toEqual(["add a", "add b", "add c", "add d", "add e", "delete-tombstone default/a"]);
  });

  it("delivers a tombstone for an object deleted during a relist", async () => {
    const h = await setup();
    await h.podClient.create(pod("a"));
    await h.podClient.create(pod("b"));
    await h.settle();
    // The watch fails with an error that requires a relist; the object goes away while it runs.
    h.lw.beforeList = async () => {
      h.lw.beforeList = undefined;
      await h.podClient.delete("a");
    };
    h.lw.watchFailures.push(newInternalError(new Error("etcd leader changed")));
    h.lw.cutWatches(newInternalError(new Error("etcd leader changed")));
    await h.settle();
    await h.clock.advance(800);
    await h.settle();
    expect(h.lw.listCalls).toHaveLength(2);
    expect(h.events.slice(0, 2)).toEqual(["add a", "add b"]);
    expect(h.events).toContain("delete-tombstone default/a");
    expect(cachedNames(h)).toEqual(["b"]);
  });

  it("backs off on 429 and re-watches without relisting", async () => {
    const h = await setup({
      before: (lw) => {
        for (let i = 0; i < 3; i++)
          lw.watchFailures.push(newTooManyRequests("too many requests, please try again later", 1));
      },
    });
    await h.podClient.create(pod("a"));
    await h.clock.advance(800 + 1600 + 3200);
    await h.settle();
    const gaps = h.lw.watchCalls.slice(1).map((call, i) => call.at - h.lw.watchCalls[i]!.at);
    expect(gaps).toEqual([800, 1600, 3200]);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.events).toEqual(["add a"]);
    expect(h.watchErrors).toHaveLength(3);
  });

  it("a slow handler does not hold back the other handlers", async () => {
    const h = await setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let slowSeen = 0;
    h.informer.addEventHandler({
      onAdd: async () => {
        slowSeen++;
        await gate;
      },
    });
    for (let i = 0; i < 20; i++) await h.podClient.create(pod(`p${i}`));
    await h.settle();
    expect(slowSeen).toBe(1);
    expect(h.events).toHaveLength(20);
    release();
    await h.settle();
    expect(slowSeen).toBe(20);
  });

  describe("pain points of @kubernetes/client-node's informer, absent here", () => {
    it("silent stall: a watch that stops delivering is detected and restarted, and the missed events arrive", async () => {
      const h = await setup({ informer: { idleTimeoutMs: 90_000 } });
      h.lw.stallWatches();
      await h.podClient.create(pod("lost-in-the-stall"));
      await h.settle();
      expect(h.events).toEqual([]);
      await h.clock.advance(90_000);
      await h.settle();
      expect(h.watchErrors.some((e) => e instanceof IdleWatchError)).toBe(true);
      expect(h.events).toEqual(["add lost-in-the-stall"]);
    });

    it("no reconnect backoff: a failing watch is retried with growing delays, not in a tight loop", async () => {
      const h = await setup({
        before: (lw) => {
          for (let i = 0; i < 50; i++)
            lw.watchFailures.push(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
        },
      });
      await h.clock.advance(60_000);
      await h.settle();
      const gaps = h.lw.watchCalls.slice(1).map((call, i) => call.at - h.lw.watchCalls[i]!.at);
      expect(gaps).toEqual([800, 1600, 3200, 6400, 12800, 25600]);
    });

    it("dead after a failed list: a failing first list is reported and retried until the informer syncs", async () => {
      const forbidden = newForbidden({ group: "", resource: "pods" }, "", "RBAC: access denied");
      const h = await setup({ before: (lw) => lw.listFailures.push(forbidden, forbidden, forbidden) });
      await h.podClient.create(pod("a"));
      expect(h.informer.hasSynced()).toBe(false);
      await h.clock.advance(800 + 1600 + 3200);
      await h.settle();
      expect(h.watchErrors).toEqual([forbidden, forbidden, forbidden]);
      expect(h.informer.hasSynced()).toBe(true);
      expect(h.events).toEqual(["add a"]);
    });

    it("selector not applied to the watch: the label selector filters both the list and the watch", async () => {
      const h = await setup({ labelSelector: "app=web" });
      await h.podClient.create(pod("web-1", { app: "web" }));
      await h.podClient.create(pod("db-1", { app: "db" }));
      await h.settle();
      expect(cachedNames(h)).toEqual(["web-1"]);
      expect(h.events).toEqual(["add web-1"]);
    });

    it("update without the old object: onUpdate receives the previous and the new state", async () => {
      const h = await setup();
      const seen: [string | undefined, string | undefined][] = [];
      h.informer.addEventHandler({
        onUpdate: (oldPod, newPod) =>
          void seen.push([oldPod.metadata?.labels?.v, newPod.metadata?.labels?.v]),
      });
      const created = await h.podClient.create(pod("a", { v: "1" }));
      await h.podClient.update({ ...created, metadata: { ...created.metadata, labels: { v: "2" } } });
      await h.settle();
      expect(seen).toEqual([["1", "2"]]);
    });
  });
});
