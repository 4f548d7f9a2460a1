import {
  type ListerWatcher,
  type ListOptions,
  newInvalid,
  type Pod,
  pods,
  type WatchOptions,
} from "@reconcile/api";
import { ApiServer, listen } from "@reconcile/apiserver";
import { HttpClient, listerWatcher, loadKubeConfig } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";
import { SharedIndexInformer } from "./shared-informer.js";
import { waitForCacheSync } from "./wait-for-cache-sync.js";

// Informers that sync by watch list (client-go's WatchListClient): one watch
// with sendInitialEvents streams the state, replaced into the cache at the
// bookmark that ends it, with no LIST; a server that refuses the watch list
// gets a LIST instead.

const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

/** Records the calls made through `inner`; `refuseWatchList` answers a watch list with upstream's 422. */
function recorded(inner: ListerWatcher<Pod>, refuseWatchList = false) {
  const lists: ListOptions[] = [];
  const watches: WatchOptions[] = [];
  const lw: ListerWatcher<Pod> = {
    list: (options) => {
      lists.push(options);
      return inner.list(options);
    },
    watch: (options) => {
      watches.push({ ...options, signal: undefined });
      if (refuseWatchList && options.sendInitialEvents) {
        return Promise.reject(
          newInvalid({ group: "meta.k8s.io", kind: "ListOptions" }, "", [
            {
              type: "FieldValueForbidden",
              field: "sendInitialEvents",
              message:
                "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            },
          ]),
        );
      }
      return inner.watch(options);
    },
  };
  return { lw, lists, watches };
}

async function serverWithPods(count: number) {
  const api = new ApiServer();
  stops.push(() => api.close());
  const client = api.client().resource(pods, "default");
  for (let i = 0; i < count; i++) {
    await client.create({
      metadata: { name: `p${i}` },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
  }
  return { api, client };
}

async function startInformer(lw: ListerWatcher<Pod>, errors?: unknown[]) {
  const informer = new SharedIndexInformer<Pod>({
    listerWatcher: lw,
    resource: pods,
    useWatchList: true,
    ...(errors === undefined ? {} : { watchErrorHandler: (error: unknown) => errors.push(error) }),
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  stops.push(async () => {
    stop.abort();
    await running;
  });
  expect(await waitForCacheSync(AbortSignal.timeout(10_000), informer)).toBe(true);
  return informer;
}

const names = (informer: SharedIndexInformer<Pod>) =>
  informer
    .getStore()
    .list()
    .map((pod) => pod.metadata?.name)
    .sort();

describe("useWatchList", () => {
  it("syncs from one watch list over HTTP, with no LIST, and goes on watching it", async () => {
    const { api, client } = await serverWithPods(3);
    const listening = await listen(api);
    const http = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml: listening.kubeconfig() }) });
    const { lw, lists, watches } = recorded(listerWatcher(http, pods, { namespace: "default" }));
    const informer = await startInformer(lw);
    expect(names(informer)).toEqual(["p0", "p1", "p2"]);
    expect(lists).toEqual([]);
    expect(watches).toHaveLength(1);
    expect(watches[0]).toMatchObject({
      resourceVersion: "",
      sendInitialEvents: true,
      resourceVersionMatch: "NotOlderThan",
      allowWatchBookmarks: true,
    });
    const created = await client.create({
      metadata: { name: "p3" },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    await expect.poll(() => names(informer), { timeout: 5_000 }).toContain("p3");
    expect(informer.lastSyncResourceVersion()).toBe(created.metadata?.resourceVersion);
    expect(watches).toHaveLength(1);
  });

  it("falls back to LIST when the server refuses the watch list", async () => {
    const { api } = await serverWithPods(2);
    const { lw, lists, watches } = recorded(
      listerWatcher(api.client(), pods, { namespace: "default" }),
      true,
    );
    const informer = await startInformer(lw);
    expect(names(informer)).toEqual(["p0", "p1"]);
    expect(lists).toHaveLength(1);
    expect(watches.map((w) => w.sendInitialEvents ?? false)).toEqual([true, false]);
  });

  it("LISTs that round when the watch list ends before its state does, and syncs", async () => {
    const { api } = await serverWithPods(2);
    const {
      lw: inner,
      lists,
      watches,
    } = recorded(listerWatcher(api.client(), pods, { namespace: "default" }));
    // The first watch list is cut after one object: no initial-events-end bookmark.
    let cut = false;
    const lw: ListerWatcher<Pod> = {
      list: inner.list,
      watch: async (options) => {
        const stream = await inner.watch(options);
        if (!options.sendInitialEvents || cut) return stream;
        cut = true;
        return (async function* () {
          for await (const event of stream) {
            yield event;
            return;
          }
        })();
      },
    };
    const errors: unknown[] = [];
    const informer = await startInformer(lw, errors);
    expect(names(informer)).toEqual(["p0", "p1"]);
    expect(lists).toHaveLength(1);
    expect(watches[0]?.sendInitialEvents).toBe(true);
    expect(errors.map((error) => (error as Error).message)).toEqual([
      `${informer.name}: the watch list ended before its initial events did`,
    ]);
  });
});
