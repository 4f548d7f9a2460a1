import {
  type KubeObject,
  type ListOptions,
  type Namespace,
  namespaces,
  newForbidden,
  type Pod,
  pods,
  type ReplicaSet,
  type ResourceDescriptor,
  replicaSets,
  type WatchOptions,
} from "@reconcile/api";
import type { Client, ResourceClient } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { SharedInformerFactory } from "./informer-factory.js";
import { FakeListerWatcher } from "./testing/index.js";
import { CacheSyncTimeoutError } from "./wait-for-cache-sync.js";

/** A Client whose list/watch are FakeListerWatchers, one per resource; records the namespace asked for. */
function fakeClient(sources: Record<string, FakeListerWatcher<KubeObject>>) {
  const scopes: string[] = [];
  const client: Client = {
    resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
      scopes.push(`${resource.plural}:${namespace ?? "*"}`);
      const source = sources[resource.plural];
      if (source === undefined) throw new Error(`no fake source for ${resource.plural}`);
      return {
        list: (options?: ListOptions) => source.list(options ?? {}),
        watch: (options?: WatchOptions) => source.watch(options ?? {}),
      } as unknown as ResourceClient<T>;
    },
  };
  return { client, scopes };
}

describe("SharedInformerFactory", () => {
  it("shares one informer per resource and starts only those not started", async () => {
    const podSource = new FakeListerWatcher<KubeObject>({
      objects: [{ metadata: { namespace: "a", name: "p", labels: { app: "web" } } }],
    });
    const rsSource = new FakeListerWatcher<KubeObject>();
    const { client, scopes } = fakeClient({ pods: podSource, replicasets: rsSource });
    const clock = new FakeClock();
    const factory = new SharedInformerFactory({ client, clock, namespace: "a", labelSelector: "app=web" });
    const first = factory.forResource<Pod>(pods);
    expect(factory.forResource<Pod>(pods)).toBe(first);
    const controller = new AbortController();
    factory.start(controller.signal);
    factory.start(controller.signal);
    await clock.flush();
    expect(podSource.listCalls).toHaveLength(1);
    factory.forResource<ReplicaSet>(replicaSets);
    factory.start(controller.signal);
    const waiting = factory.waitForCacheSync(controller.signal);
    await clock.advance(100);
    expect(await waiting).toEqual({ pods: true, "replicasets.apps": true });
    expect(scopes).toEqual(["pods:a", "replicasets:a"]);
    expect(podSource.watchCalls[0]?.labelSelector).toBe("app=web");
    expect(factory.lister<Pod>(pods).byNamespace("a").get("p").metadata?.name).toBe("p");
    controller.abort();
    await factory.shutdown();
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("lists the informers made so far, and with running only those started", async () => {
    const { client } = fakeClient({
      pods: new FakeListerWatcher<KubeObject>(),
      replicasets: new FakeListerWatcher<KubeObject>(),
    });
    const factory = new SharedInformerFactory({ client, clock: new FakeClock() });
    const podInformer = factory.forResource<Pod>(pods);
    expect(factory.informers()).toEqual([["pods", podInformer]]);
    expect(factory.informers({ running: true })).toEqual([]);
    const controller = new AbortController();
    factory.start(controller.signal);
    const rsInformer = factory.forResource<ReplicaSet>(replicaSets);
    expect(factory.informers()).toEqual([
      ["pods", podInformer],
      ["replicasets.apps", rsInformer],
    ]);
    expect(factory.informers({ running: true })).toEqual([["pods", podInformer]]);
    controller.abort();
    await factory.shutdown();
  });

  it("run({ signal }) starts the informers and settles only after abort and a full stop", async () => {
    const podSource = new FakeListerWatcher<KubeObject>({
      objects: [{ metadata: { namespace: "a", name: "p" } }],
    });
    const { client } = fakeClient({ pods: podSource });
    const clock = new FakeClock();
    const factory = new SharedInformerFactory({ client, clock });
    const informer = factory.forResource<Pod>(pods);
    const controller = new AbortController();
    let settled = false;
    const running = factory.run({ signal: controller.signal }).then(() => {
      settled = true;
    });
    await informer.whenSynced();
    expect(informer.hasSynced()).toBe(true);
    await clock.flush();
    expect(settled).toBe(false);
    controller.abort();
    await running;
    expect(podSource.watchCalls).toHaveLength(1);
    expect(clock.pendingTimers()).toEqual([]);
    factory.start(new AbortController().signal);
    expect(podSource.listCalls).toHaveLength(1); // nothing starts again after the run ended
  });

  it("does not scope cluster-scoped resources to the factory's namespace", () => {
    const { client, scopes } = fakeClient({ namespaces: new FakeListerWatcher() });
    const factory = new SharedInformerFactory({ client, namespace: "a" });
    factory.forResource<Namespace>(namespaces);
    expect(scopes).toEqual(["namespaces:*"]);
  });

  it("names the informers that did not sync, with their last error, on timeout", async () => {
    const podSource = new FakeListerWatcher<KubeObject>();
    const rsSource = new FakeListerWatcher<KubeObject>();
    for (let i = 0; i < 10; i++)
      rsSource.failNextList(newForbidden({ group: "apps", resource: "replicasets" }, "", "RBAC says no"));
    const { client } = fakeClient({ pods: podSource, replicasets: rsSource });
    const clock = new FakeClock();
    const factory = new SharedInformerFactory({ client, clock, watchErrorHandler: () => {} });
    factory.forResource<Pod>(pods);
    factory.forResource<ReplicaSet>(replicaSets);
    factory.start(new AbortController().signal);
    const waiting = factory.waitForCacheSync(new AbortController().signal, { timeoutMs: 5000 });
    const settled = waiting.catch((error: unknown) => error);
    await clock.advance(5000);
    const error = await settled;
    expect(error).toBeInstanceOf(CacheSyncTimeoutError);
    expect((error as Error).message).toMatch(
      /^caches did not sync within 5000ms: replicasets\.apps \(last error: replicasets\.apps "" is forbidden: RBAC says no\)$/,
    );
    await factory.shutdown();
  });

  it("waits on the informers' synced signal: no timer without a timeout, so an unadvanced FakeClock does not hang it", async () => {
    const source = new FakeListerWatcher<KubeObject>({
      objects: [{ metadata: { namespace: "a", name: "p" } }],
    });
    const { client } = fakeClient({ pods: source });
    const clock = new FakeClock();
    const factory = new SharedInformerFactory({ client, clock });
    factory.forResource<Pod>(pods);
    const controller = new AbortController();
    factory.start(controller.signal);
    expect(factory.forResource<Pod>(pods).hasSynced()).toBe(false);
    // Resolves although the clock never moves (a 100 ms poll on it would wait for ever).
    expect(await factory.waitForCacheSync(controller.signal)).toEqual({ pods: true });
    controller.abort();
    await factory.shutdown();
  });

  it("resolves with false entries when the signal aborts the wait", async () => {
    const source = new FakeListerWatcher<KubeObject>();
    source.failNextList(new Error("down"));
    const { client } = fakeClient({ pods: source });
    const clock = new FakeClock();
    const factory = new SharedInformerFactory({ client, clock, watchErrorHandler: () => {} });
    factory.forResource<Pod>(pods);
    factory.start(new AbortController().signal);
    const controller = new AbortController();
    const waiting = factory.waitForCacheSync(controller.signal);
    await clock.advance(300);
    controller.abort();
    expect(await waiting).toEqual({ pods: false });
    await factory.shutdown();
  });

  it("starts nothing after shutdown", async () => {
    const source = new FakeListerWatcher<KubeObject>();
    const { client } = fakeClient({ pods: source });
    const factory = new SharedInformerFactory({ client, clock: new FakeClock() });
    await factory.shutdown();
    const informer = factory.forResource<Pod>(pods);
    factory.start(new AbortController().signal);
    expect(source.listCalls).toHaveLength(0);
    // Not started at all (a run on the aborted signal would list nothing either): a started informer refuses a transform.
    expect(() => informer.setTransform((obj) => obj)).not.toThrow();
    expect(informer.isStopped()).toBe(false);
  });
});
