// The pod lifecycle event generator (`pkg/kubelet/pleg`) and the runtime pod
// status cache it keeps fresh (`kubecontainer.Cache`). The generic PLEG
// relists the runtime every second, turns container state changes into
// events (ContainerStarted, ContainerDied, ContainerRemoved) and refreshes
// the cache entry of every pod that changed; `getNewerThan` is what a pod
// worker waits on before it syncs. When the runtime reports its own events
// (CRI's container events, upstream's EventedPLEG) a changed pod is refreshed
// at once instead of at the next relist.
import { type Clock, realClock } from "@reconcile/clock";
import type { PodStatusCache } from "./pod-workers/index.js";
import type { ContainerRecord, ContainerRuntime, PodSandbox } from "./runtime/runtime.js";

/** What the runtime knows of one pod (`kubecontainer.PodStatus`). */
export interface RuntimePodStatus {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  /** Newest first. */
  readonly sandboxes: readonly PodSandbox[];
  /** Newest first. */
  readonly containers: readonly ContainerRecord[];
  /** The newest ready sandbox's IPs. */
  readonly ips: readonly string[];
}

export type PodLifecycleEventType = "ContainerStarted" | "ContainerDied" | "ContainerRemoved";

export interface PodLifecycleEvent {
  readonly podUid: string;
  readonly type: PodLifecycleEventType;
  readonly containerId: string;
}

export interface PlegOptions {
  runtime: ContainerRuntime;
  /** Called with each batch of events of one relist. */
  onEvents: (events: readonly PodLifecycleEvent[]) => void;
  /** Relist period (`genericPlegRelistPeriod`). Default 1,000 ms. */
  relistPeriodMs?: number | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
}

/** Whether a status has no running container and no ready sandbox (`isPodStatusCacheTerminal`). */
export function isRuntimePodStatusTerminal(status: RuntimePodStatus): boolean {
  return (
    !status.containers.some((c) => c.state === "running") &&
    !status.sandboxes.some((s) => s.state === "ready")
  );
}

/** See the file comment. */
export class Pleg implements PodStatusCache<RuntimePodStatus> {
  readonly #runtime: ContainerRuntime;
  readonly #onEvents: (events: readonly PodLifecycleEvent[]) => void;
  readonly #relistPeriodMs: number;
  readonly #clock: Clock;
  readonly #cache = new Map<string, { status: RuntimePodStatus; modified: number }>();
  /** Container states seen by the last relist, per pod. */
  readonly #seen = new Map<string, Map<string, ContainerRecord["state"]>>();
  readonly #waiters = new Set<{ uid: string; minTime: number; resolve: (s: RuntimePodStatus) => void }>();
  readonly #dirtyPods = new Set<string>();
  #globalTimestamp = Number.NEGATIVE_INFINITY;
  #lastRelist = Number.NEGATIVE_INFINITY;
  /** The runtime's revision at the last full relist. */
  #listedRevision: number | undefined;
  #eventFlushScheduled = false;
  /** Pods whose sync ended with runtime changes not yet taken in. */
  readonly #endedDirty = new Set<string>();
  #endedFlushScheduled = false;

  constructor(options: PlegOptions) {
    this.#runtime = options.runtime;
    this.#onEvents = options.onEvents;
    this.#relistPeriodMs = options.relistPeriodMs ?? 1000;
    this.#clock = options.clock ?? realClock;
  }

  /** Relists every period until `signal` aborts; resolves once stopped. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    const stop = this.start();
    try {
      while (!signal.aborted) {
        this.relist();
        try {
          await this.#clock.sleep(this.#relistPeriodMs, { signal });
        } catch {
          break;
        }
      }
    } finally {
      stop();
    }
  }

  /**
   * Listens to the runtime's events without relisting on a timer, for an
   * owner that calls {@link relist} from its own tick (the kubelet shares one
   * timer among its loops). The returned function stops listening and
   * releases every waiter.
   */
  start(): () => void {
    const unsubscribe = this.#runtime.onEvent?.((event) => this.#podChanged(event.podUid));
    return () => {
      unsubscribe?.();
      for (const waiter of this.#waiters) waiter.resolve(this.#statusOrEmpty(waiter.uid));
      this.#waiters.clear();
    };
  }

  /** The relist period this PLEG was given. */
  get relistPeriodMs(): number {
    return this.#relistPeriodMs;
  }

  /** When the last relist ran (for the `PLEG is not healthy` check). */
  lastRelistTime(): number {
    return this.#lastRelist;
  }

  /**
   * Why the PLEG is not healthy (upstream's `Healthy`): no relist for more
   * than 3 minutes; undefined when healthy or before the first relist.
   */
  unhealthy(): string | undefined {
    const last = this.#lastRelist;
    if (!Number.isFinite(last)) return undefined;
    const since = this.#clock.now() - last;
    return since > 180_000
      ? `PLEG is not healthy: pleg was last seen active ${Math.round(since / 1000)}s ago; threshold is 3m0s`
      : undefined;
  }

  /** Lists the runtime, records events for what changed and refreshes those pods' cache entries. */
  relist(): void {
    const now = this.#clock.now();
    const revision = this.#runtime.revision;
    if (revision !== undefined && revision === this.#listedRevision && this.#dirtyPods.size === 0) {
      // Nothing changed since the last relist: it would find no event and refresh no entry.
      this.#lastRelist = now;
      this.#globalTimestamp = now;
      this.#wake();
      return;
    }
    this.#listedRevision = revision;
    const byPod = groupByPod(this.#runtime);
    const events: PodLifecycleEvent[] = [];
    for (const [uid, listed] of byPod) this.#refresh(uid, listed, now, events);
    for (const uid of this.#seen.keys()) if (!byPod.has(uid)) this.#refresh(uid, undefined, now, events);
    this.#dirtyPods.clear();
    this.#lastRelist = now;
    this.#globalTimestamp = now;
    this.#wake();
    if (events.length > 0) this.#onEvents(events);
  }

  /**
   * A sync of the pod ended: if the runtime reported changes to it (the sync's
   * own doing, most often), they are taken in at once — after the sync, so the
   * refreshed entry is newer than it — instead of at the next turn's relist.
   */
  syncEnded(uid: string): void {
    if (!this.#dirtyPods.has(uid)) return;
    this.#endedDirty.add(uid);
    if (this.#endedFlushScheduled) return;
    this.#endedFlushScheduled = true;
    queueMicrotask(() => {
      this.#endedFlushScheduled = false;
      const now = this.#clock.now();
      const events: PodLifecycleEvent[] = [];
      for (const uid of this.#endedDirty) {
        if (!this.#dirtyPods.has(uid)) continue; // a relist took it in first
        this.#refresh(uid, listedOf(this.#runtime, uid), now, events);
        this.#dirtyPods.delete(uid);
      }
      this.#endedDirty.clear();
      this.#wake();
      if (events.length > 0) this.#onEvents(events);
    });
  }

  /** One pod of a relist: its events since the last look, and its cache entry if it changed. */
  #refresh(uid: string, listed: ListedPod | undefined, now: number, events: PodLifecycleEvent[]): void {
    const before = this.#seen.get(uid);
    // Most pods of a relist have not changed: that is found without building anything.
    if (listed !== undefined && before !== undefined && sameStates(before, listed.containers)) {
      const cached = this.#cache.get(uid);
      if (cached !== undefined) {
        if (this.#dirtyPods.has(uid))
          this.#cache.set(uid, { status: statusFrom(uid, listed), modified: now });
        return;
      }
    }
    const current = listed === undefined ? undefined : statusFrom(uid, listed);
    const after = new Map<string, ContainerRecord["state"]>();
    for (const container of current?.containers ?? []) after.set(container.id, container.state);
    let changed = current === undefined || before === undefined || !this.#cache.has(uid);
    for (const id of new Set([...(before?.keys() ?? []), ...after.keys()])) {
      const generated = eventsFor(uid, id, before?.get(id), after.get(id));
      if (generated.length > 0 || before?.get(id) !== after.get(id)) changed = true;
      events.push(...generated);
    }
    if (current === undefined) {
      this.#seen.delete(uid);
      this.#cache.delete(uid);
      return;
    }
    this.#seen.set(uid, after);
    if (changed || this.#dirtyPods.has(uid)) this.#cache.set(uid, { status: current, modified: now });
  }

  get(uid: string): RuntimePodStatus | undefined {
    return this.#cache.get(uid)?.status;
  }

  /** The runtime's status of a pod right now, bypassing the cache (`GetPodStatus`), and caches it. */
  inspect(uid: string, name: string, namespace: string): RuntimePodStatus {
    const status = statusOf(this.#runtime, uid) ?? emptyStatus(uid, name, namespace);
    this.#cache.set(uid, { status, modified: this.#clock.now() });
    return status;
  }

  getNewerThan(uid: string, minTime: number, signal: AbortSignal): Promise<RuntimePodStatus> {
    const ready = this.#ifNewerThan(uid, minTime);
    if (ready !== undefined) return Promise.resolve(ready);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter = {
        uid,
        minTime,
        resolve: (status: RuntimePodStatus) => {
          signal.removeEventListener("abort", onAbort);
          resolve(status);
        },
      };
      const onAbort = () => {
        this.#waiters.delete(waiter);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  /** A runtime event: refresh that pod soon, without waiting for the next relist. */
  #podChanged(uid: string): void {
    this.#dirtyPods.add(uid);
    if (this.#eventFlushScheduled) return;
    this.#eventFlushScheduled = true;
    // A macrotask, as an event stream delivers: the sync that caused the change finishes first,
    // so the refreshed entry is newer than that sync and the next one need not wait for a relist.
    setImmediate(() => {
      this.#eventFlushScheduled = false;
      if (this.#dirtyPods.size > 0) this.relist();
    });
  }

  #ifNewerThan(uid: string, minTime: number): RuntimePodStatus | undefined {
    const entry = this.#cache.get(uid);
    // As kubecontainer.Cache: a global timestamp after minTime vouches for every pod.
    if (this.#globalTimestamp > minTime) return entry?.status ?? emptyStatus(uid, "", "");
    if (entry !== undefined && entry.modified >= minTime) return entry.status;
    return undefined;
  }

  #wake(): void {
    for (const waiter of this.#waiters) {
      const status = this.#ifNewerThan(waiter.uid, waiter.minTime);
      if (status === undefined) continue;
      this.#waiters.delete(waiter);
      waiter.resolve(status);
    }
  }

  #statusOrEmpty(uid: string): RuntimePodStatus {
    return this.#cache.get(uid)?.status ?? emptyStatus(uid, "", "");
  }
}

/** The events of one container between two relists (`generateEvents`). */
function eventsFor(
  podUid: string,
  containerId: string,
  before: ContainerRecord["state"] | undefined,
  after: ContainerRecord["state"] | undefined,
): PodLifecycleEvent[] {
  const was = plegState(before);
  const now = plegState(after);
  if (was === now) return [];
  const event = (type: PodLifecycleEventType): PodLifecycleEvent => ({ podUid, type, containerId });
  switch (now) {
    case "running":
      return [event("ContainerStarted")];
    case "exited":
      return [event("ContainerDied")];
    case "unknown":
      return []; // ContainerChanged is never sent on the channel
    case "non-existent":
      if (was === "exited") return [event("ContainerRemoved")];
      if (was === "running") return [event("ContainerDied"), event("ContainerRemoved")];
      return [];
  }
}

function plegState(
  state: ContainerRecord["state"] | undefined,
): "running" | "exited" | "unknown" | "non-existent" {
  if (state === undefined) return "non-existent";
  if (state === "created") return "unknown";
  return state;
}

/** One pod's sandboxes and containers as the runtime lists them, in no order. */
interface ListedPod {
  readonly sandboxes: PodSandbox[];
  readonly containers: ContainerRecord[];
}

/** Whether `containers` are exactly the containers, in the states, of `seen`. */
function sameStates(
  seen: ReadonlyMap<string, ContainerRecord["state"]>,
  containers: readonly ContainerRecord[],
) {
  if (seen.size !== containers.length) return false;
  for (const container of containers) if (seen.get(container.id) !== container.state) return false;
  return true;
}

function groupByPod(runtime: ContainerRuntime): Map<string, ListedPod> {
  const sandboxes = new Map<string, PodSandbox[]>();
  for (const sandbox of runtime.listPodSandboxes()) {
    const list = sandboxes.get(sandbox.podUid);
    if (list === undefined) sandboxes.set(sandbox.podUid, [sandbox]);
    else list.push(sandbox);
  }
  const containers = new Map<string, ContainerRecord[]>();
  for (const container of runtime.listContainers()) {
    const list = containers.get(container.podUid);
    if (list === undefined) containers.set(container.podUid, [container]);
    else list.push(container);
  }
  const result = new Map<string, ListedPod>();
  for (const [uid, podSandboxes] of sandboxes) {
    result.set(uid, { sandboxes: podSandboxes, containers: containers.get(uid) ?? [] });
  }
  return result;
}

function listedOf(runtime: ContainerRuntime, uid: string): ListedPod | undefined {
  const sandboxes = runtime.listPodSandboxes({ podUid: uid });
  if (sandboxes.length === 0) return undefined;
  return { sandboxes: [...sandboxes], containers: [...runtime.listContainers({ podUid: uid })] };
}

function statusOf(runtime: ContainerRuntime, uid: string): RuntimePodStatus | undefined {
  const listed = listedOf(runtime, uid);
  return listed === undefined ? undefined : statusFrom(uid, listed);
}

function statusFrom(uid: string, { sandboxes, containers }: ListedPod): RuntimePodStatus {
  // Newest first; creation times can tie on a clock that stands still, so the attempt breaks ties.
  sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  containers.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  const newest = sandboxes[0];
  const ready = newest?.state === "ready" ? newest : undefined;
  return {
    uid,
    name: newest?.name ?? "",
    namespace: newest?.namespace ?? "",
    sandboxes,
    containers,
    ips: ready?.ip !== undefined ? [ready.ip, ...(ready.additionalIPs ?? [])] : [],
  };
}

export function emptyStatus(uid: string, name: string, namespace: string): RuntimePodStatus {
  return { uid, name, namespace, sandboxes: [], containers: [], ips: [] };
}
