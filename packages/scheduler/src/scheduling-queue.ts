import type { DeepReadonly, Pod } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { hasPodAffinity, podAffinityTermsOrNone, termMatches } from "./affinity-terms.js";
import type { ClusterEvent } from "./framework.js";
import { Heap } from "./heap.js";

/** A pod in the queue, with what the queue knows of its attempts (upstream `QueuedPodInfo`). */
export interface QueuedPodInfo {
  pod: DeepReadonly<Pod>;
  /** The pod's uid. */
  readonly key: string;
  /** When the pod entered the queue, refreshed on every re-add after a failure (orders activeQ and backoff). */
  timestamp: number;
  /** When the pod first entered activeQ; never reset. */
  initialAttemptTimestamp: number | undefined;
  /** Pops so far. */
  attempts: number;
  /** Plugins that rejected the last attempt; empty after an error. */
  unschedulablePlugins: Set<string>;
  /** Waiting for its scheduling gates to go; never attempted meanwhile. */
  gated: boolean;
}

export interface SchedulingQueueOptions {
  /** For timestamps, backoff and the periodic flushes. Default `realClock`. */
  clock?: Clock | undefined;
  /** Which cluster events may help a pod each plugin rejected (the plugins' `events`). Default: none. */
  pluginEvents?: ReadonlyMap<string, ReadonlySet<ClusterEvent>> | undefined;
  /** Backoff after the first failed attempt, doubling per attempt. Default 1,000 ms (`podInitialBackoffSeconds` 1). */
  podInitialBackoffMs?: number | undefined;
  /** The backoff's ceiling. Default 10,000 ms (`podMaxBackoffSeconds` 10). */
  podMaxBackoffMs?: number | undefined;
  /** A parked pod is retried after this long without a helpful event. Default 300,000 ms (5 min). */
  podMaxInUnschedulablePodsDurationMs?: number | undefined;
}

/** Sizes of the sub-queues, as `scheduler_pending_pods{queue}` reports them. */
export interface PendingPods {
  active: number;
  backoff: number;
  unschedulable: number;
  gated: number;
}

const backoffFlushPeriodMs = 1000;
const unschedulableFlushPeriodMs = 30_000;

/**
 * kube-scheduler's scheduling queue (upstream `PriorityQueue`, with
 * QueueingHints off): activeQ ordered by priority then queue time; backoffQ
 * for pods waiting out `min(1 s · 2^(attempts−1), 10 s)`; and unschedulable
 * pods parked until a cluster event that could help them (one of the rejecting
 * plugins' `events`, passing `preCheck`) or 5 minutes pass. A pod that failed
 * while a move request happened during its attempt goes to backoffQ instead of
 * parking, so the event is not lost. All time is `clock`'s.
 */
export class SchedulingQueue {
  readonly #clock: Clock;
  readonly #pluginEvents: ReadonlyMap<string, ReadonlySet<ClusterEvent>>;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxUnschedulableMs: number;
  readonly #activeQ = new Heap<QueuedPodInfo>((info) => info.key, activeLess);
  readonly #backoffQ: Heap<QueuedPodInfo>;
  readonly #unschedulable = new Map<string, QueuedPodInfo>();
  readonly #inFlight = new Set<string>();
  readonly #waiters: (() => void)[] = [];
  #schedulingCycle = 0;
  #moveRequestCycle = -1;
  #closed = false;

  constructor(options: SchedulingQueueOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#pluginEvents = options.pluginEvents ?? new Map();
    this.#initialBackoffMs = options.podInitialBackoffMs ?? 1000;
    this.#maxBackoffMs = options.podMaxBackoffMs ?? 10_000;
    this.#maxUnschedulableMs = options.podMaxInUnschedulablePodsDurationMs ?? 300_000;
    for (const [name, ms] of [
      ["podInitialBackoffMs", this.#initialBackoffMs],
      ["podMaxBackoffMs", this.#maxBackoffMs],
      ["podMaxInUnschedulablePodsDurationMs", this.#maxUnschedulableMs],
    ] as const) {
      if (!(ms > 0) || !Number.isFinite(ms)) {
        throw new RangeError(`SchedulingQueue: ${name} must be a positive number of ms, got ${ms}`);
      }
    }
    this.#backoffQ = new Heap<QueuedPodInfo>(
      (info) => info.key,
      (a, b) =>
        this.backoffExpiry(a) < this.backoffExpiry(b) ||
        (this.backoffExpiry(a) === this.backoffExpiry(b) && activeLess(a, b)),
    );
  }

  /**
   * Runs the periodic flushes (backoffQ every second, parked pods every 30
   * seconds) until `signal` aborts; then closes the queue, so `pop` resolves
   * undefined. Settles once no timer is left.
   */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    let lastLeftoverFlush = this.#clock.now();
    try {
      while (!signal.aborted) {
        try {
          await this.#clock.sleep(backoffFlushPeriodMs, { signal });
        } catch {
          break;
        }
        this.flushBackoffQCompleted();
        if (this.#clock.now() - lastLeftoverFlush >= unschedulableFlushPeriodMs) {
          lastLeftoverFlush = this.#clock.now();
          this.flushUnschedulablePodsLeftover();
        }
      }
    } finally {
      this.close();
    }
  }

  /** A new pod: to activeQ, or parked as gated while it has scheduling gates. */
  add(pod: DeepReadonly<Pod>): void {
    const key = pod.metadata?.uid ?? "";
    if (this.#has(key)) {
      this.update(undefined, pod);
      return;
    }
    const info: QueuedPodInfo = {
      pod,
      key,
      timestamp: this.#clock.now(),
      initialAttemptTimestamp: undefined,
      attempts: 0,
      unschedulablePlugins: new Set(),
      gated: false,
    };
    sequenceOf.set(info, sequence++);
    this.#enqueueActive(info);
  }

  /**
   * A changed pod: updated where it waits. A parked pod whose spec or
   * metadata changed (not just its status) is tried again, after any backoff
   * it still owes (upstream `Update` without QueueingHints).
   */
  update(oldPod: DeepReadonly<Pod> | undefined, newPod: DeepReadonly<Pod>): void {
    const key = newPod.metadata?.uid ?? "";
    const active = this.#activeQ.get(key);
    if (active !== undefined) {
      active.pod = newPod;
      this.#activeQ.push(active);
      return;
    }
    const backingOff = this.#backoffQ.get(key);
    if (backingOff !== undefined) {
      backingOff.pod = newPod;
      this.#backoffQ.push(backingOff);
      return;
    }
    const parked = this.#unschedulable.get(key);
    if (parked !== undefined) {
      const before = parked.pod;
      parked.pod = newPod;
      if (oldPod !== undefined && !isPodUpdated(oldPod, newPod) && !isPodUpdated(before, newPod)) return;
      if (parked.gated) {
        if (hasSchedulingGates(newPod)) return;
        this.#unschedulable.delete(key);
        parked.gated = false;
        this.#enqueueActive(parked);
        return;
      }
      this.#unschedulable.delete(key);
      this.#requeue(parked);
      return;
    }
    if (this.#inFlight.has(key)) return; // the failure handler reads the informer's copy
    this.add(newPod);
  }

  /** A deleted pod leaves every sub-queue. */
  delete(pod: DeepReadonly<Pod>): void {
    const key = pod.metadata?.uid ?? "";
    this.#activeQ.delete(key);
    this.#backoffQ.delete(key);
    this.#unschedulable.delete(key);
  }

  /**
   * The next pod to schedule, highest priority first; waits while activeQ is
   * empty. Resolves undefined once the queue is closed or `signal` aborts.
   * The pod counts as in flight until {@link done}.
   */
  async pop(signal?: AbortSignal): Promise<QueuedPodInfo | undefined> {
    while (this.#activeQ.length === 0) {
      if (this.#closed || signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener("abort", wake);
          resolve();
        };
        this.#waiters.push(wake);
        signal?.addEventListener("abort", wake, { once: true });
      });
    }
    return this.tryPop();
  }

  /**
   * The next pod to schedule if activeQ has one, else undefined at once; the
   * pod counts as in flight until {@link done}. Lets a caller run several
   * cycles in one turn of the event loop.
   */
  tryPop(): QueuedPodInfo | undefined {
    const info = this.#activeQ.pop();
    if (info === undefined) return undefined;
    info.attempts++;
    this.#schedulingCycle++;
    this.#inFlight.add(info.key);
    return info;
  }

  /** The attempt of this pod is over (upstream `Done`). */
  done(key: string): void {
    this.#inFlight.delete(key);
  }

  /** The number of the last pop; pass it back with the failed pod to {@link addUnschedulableIfNotPresent}. */
  schedulingCycle(): number {
    return this.#schedulingCycle;
  }

  /**
   * A pod whose attempt (popped in cycle `podSchedulingCycle`) failed: to
   * backoffQ after an error or when a move request came since that attempt
   * began; else parked until an event could help (upstream
   * `AddUnschedulableIfNotPresent`). Its queue time becomes now.
   */
  addUnschedulableIfNotPresent(info: QueuedPodInfo, podSchedulingCycle: number): void {
    if (this.#has(info.key)) return;
    info.timestamp = this.#clock.now();
    if (info.unschedulablePlugins.size === 0 || this.#moveRequestCycle >= podSchedulingCycle) {
      this.#backoffQ.push(info);
      return;
    }
    this.#unschedulable.set(info.key, info);
  }

  /**
   * A cluster event: every parked pod that a plugin interested in `event`
   * rejected, and that passes `preCheck`, goes to backoffQ if it still backs
   * off, else to activeQ (upstream `MoveAllToActiveOrBackoffQueue`).
   */
  moveAllToActiveOrBackoffQueue(event: ClusterEvent, preCheck?: (pod: DeepReadonly<Pod>) => boolean): void {
    const wildcard = event === "UnschedulableTimeout" || event === "ForceActivate";
    for (const [key, info] of this.#unschedulable) {
      if (info.gated) continue;
      if (!wildcard && !this.#interested(info, event)) continue;
      if (preCheck !== undefined && !preCheck(info.pod)) continue;
      this.#unschedulable.delete(key);
      this.#requeue(info);
    }
    this.#moveRequestCycle = this.#schedulingCycle;
  }

  /**
   * An assigned pod was added, or its labels changed (`AssignedPodAdd`,
   * `AssignedPodLabelChange`): only parked pods whose placement depends on
   * other pods can be helped — those PodTopologySpread rejected, in the
   * pod's namespace, and those with a required affinity term selecting it
   * (upstream `AssignedPodAdded` and `getUnschedulablePodsWithCrossTopologyTerm`).
   */
  movePodsWithCrossTopologyTerm(
    event: ClusterEvent,
    pod: DeepReadonly<Pod>,
    namespaceLabels: Readonly<Record<string, string>> | undefined,
  ): void {
    if (!this.#eventOfInterest(event)) return;
    this.#moveRequestCycle = this.#schedulingCycle;
    if (this.#unschedulable.size === 0) return;
    const namespace = pod.metadata?.namespace ?? "";
    for (const [key, info] of this.#unschedulable) {
      if (info.gated || !this.#interested(info, event)) continue;
      const spread =
        info.unschedulablePlugins.has("PodTopologySpread") &&
        (info.pod.metadata?.namespace ?? "") === namespace;
      if (!spread && !this.#affinityTermSelects(info, pod, namespaceLabels)) continue;
      this.#unschedulable.delete(key);
      this.#requeue(info);
    }
  }

  /** Moves pods whose backoff has expired to activeQ. */
  flushBackoffQCompleted(): void {
    const now = this.#clock.now();
    for (;;) {
      const head = this.#backoffQ.peek();
      if (head === undefined || this.backoffExpiry(head) > now) return;
      this.#backoffQ.pop();
      this.#enqueueActive(head);
    }
  }

  /** Retries pods parked longer than `podMaxInUnschedulablePodsDurationMs`. */
  flushUnschedulablePodsLeftover(): void {
    const now = this.#clock.now();
    for (const [key, info] of this.#unschedulable) {
      if (info.gated || now - info.timestamp <= this.#maxUnschedulableMs) continue;
      this.#unschedulable.delete(key);
      this.#requeue(info);
    }
  }

  /** When the pod's backoff ends: queue time + `min(initial · 2^(attempts−1), max)`. */
  backoffExpiry(info: QueuedPodInfo): number {
    return info.timestamp + this.backoffDuration(info.attempts);
  }

  backoffDuration(attempts: number): number {
    if (attempts <= 0) return 0;
    let duration = this.#initialBackoffMs;
    for (let i = 1; i < attempts; i++) {
      duration *= 2;
      if (duration >= this.#maxBackoffMs) return this.#maxBackoffMs;
    }
    return Math.min(duration, this.#maxBackoffMs);
  }

  pendingPods(): PendingPods {
    let gated = 0;
    for (const info of this.#unschedulable.values()) if (info.gated) gated++;
    return {
      active: this.#activeQ.length,
      backoff: this.#backoffQ.length,
      unschedulable: this.#unschedulable.size - gated,
      gated,
    };
  }

  /** Where the pod waits, if anywhere. */
  whereIs(key: string): "active" | "backoff" | "unschedulable" | "gated" | "inFlight" | undefined {
    if (this.#activeQ.has(key)) return "active";
    if (this.#backoffQ.has(key)) return "backoff";
    const parked = this.#unschedulable.get(key);
    if (parked !== undefined) return parked.gated ? "gated" : "unschedulable";
    return this.#inFlight.has(key) ? "inFlight" : undefined;
  }

  /** Wakes every `pop`; they resolve undefined once activeQ is empty. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #has(key: string): boolean {
    return this.#activeQ.has(key) || this.#backoffQ.has(key) || this.#unschedulable.has(key);
  }

  #eventOfInterest(event: ClusterEvent): boolean {
    for (const events of this.#pluginEvents.values()) if (events.has(event)) return true;
    return false;
  }

  #affinityTermSelects(
    info: QueuedPodInfo,
    pod: DeepReadonly<Pod>,
    namespaceLabels: Readonly<Record<string, string>> | undefined,
  ): boolean {
    if (!hasPodAffinity(info.pod)) return false;
    return podAffinityTermsOrNone(info.pod).required.some((term) => termMatches(term, pod, namespaceLabels));
  }

  #interested(info: QueuedPodInfo, event: ClusterEvent): boolean {
    for (const plugin of info.unschedulablePlugins) {
      if (this.#pluginEvents.get(plugin)?.has(event)) return true;
    }
    return false;
  }

  #requeue(info: QueuedPodInfo): void {
    if (this.backoffExpiry(info) > this.#clock.now()) this.#backoffQ.push(info);
    else this.#enqueueActive(info);
  }

  // PreEnqueue: a pod with scheduling gates is parked as gated instead.
  #enqueueActive(info: QueuedPodInfo): void {
    if (hasSchedulingGates(info.pod)) {
      info.gated = true;
      this.#unschedulable.set(info.key, info);
      return;
    }
    info.initialAttemptTimestamp ??= this.#clock.now();
    this.#activeQ.push(info);
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

let sequence = 0;
const sequenceOf = new WeakMap<QueuedPodInfo, number>();

// PrioritySort: higher priority first, then earlier queue time (then arrival, for determinism).
function activeLess(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
  const pa = a.pod.spec?.priority ?? 0;
  const pb = b.pod.spec?.priority ?? 0;
  if (pa !== pb) return pa > pb;
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp;
  return arrival(a) < arrival(b);
}

function arrival(info: QueuedPodInfo): number {
  return sequenceOf.get(info) ?? 0;
}

function hasSchedulingGates(pod: DeepReadonly<Pod>): boolean {
  return (pod.spec?.schedulingGates ?? []).length > 0;
}

// Whether anything but status, resourceVersion, generation and managedFields changed (upstream isPodUpdated).
function isPodUpdated(oldPod: DeepReadonly<Pod>, newPod: DeepReadonly<Pod>): boolean {
  const strip = (pod: DeepReadonly<Pod>) => {
    const { resourceVersion: _rv, generation: _g, managedFields: _m, ...metadata } = pod.metadata ?? {};
    return JSON.stringify({ metadata, spec: pod.spec });
  };
  return strip(oldPod) !== strip(newPod);
}
