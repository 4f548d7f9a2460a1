// The kubelet's status manager (`pkg/kubelet/status`): caches the latest
// status the kubelet generated for each pod, patches `pods/<name>/status`
// only when it changed, keeps `startTime` and each condition's
// `lastTransitionTime`, and, once a deleted pod has finished on this node,
// deletes it with grace period 0 and a UID precondition.
import { type DeepReadonly, isConflict, isNotFound, jsonEqual, pods } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import { type Logger, noopLogger } from "@reconcile/controller";
import type { ContainerStatus, Pod, PodCondition, PodStatus } from "kubernetes-types/core/v1.js";
import { kubeletConditionTypes, seconds } from "./pod-status.js";

export interface StatusManagerOptions {
  client: Client;
  /**
   * The pod as the API server holds it (the kubelet's informer cache), for the
   * patch's base and deletion checks: a static pod's mirror pod, undefined while it has none.
   */
  getPod: (uid: string) => DeepReadonly<Pod> | undefined;
  /** Whether the UID is a static pod's, whose status goes to its mirror pod. Default: none is. */
  isStaticPod?: ((uid: string) => boolean) | undefined;
  /** Retry period for statuses that failed to write (`syncPeriod`). Default 10,000 ms. */
  syncPeriodMs?: number | undefined;
  clock?: Clock | undefined;
  logger?: Logger | undefined;
}

interface Entry {
  namespace: string;
  name: string;
  status: PodStatus;
  version: number;
  /** The status as last written to the API server. */
  apiStatus: DeepReadonly<PodStatus> | undefined;
  apiVersion: number;
  /** Set by `terminatePod`: the pod may be deleted once its API phase is terminal. */
  podIsFinished: boolean;
  /** A write of this pod is in flight. */
  syncing: boolean;
}

/** Counters for tests and benchmarks. */
export interface StatusManagerStats {
  patches: number;
  deletes: number;
}

/** See the file comment. */
export class StatusManager {
  readonly stats: StatusManagerStats = { patches: 0, deletes: 0 };
  readonly #client: Client;
  readonly #getPod: StatusManagerOptions["getPod"];
  readonly #isStaticPod: (uid: string) => boolean;
  readonly #syncPeriodMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #entries = new Map<string, Entry>();
  readonly #dirty = new Set<string>();
  /** Pods whose write failed: retried at the next sync period. */
  readonly #failed = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  #flushScheduled = false;
  #signal: AbortSignal | undefined;

  constructor(options: StatusManagerOptions) {
    this.#client = options.client;
    this.#getPod = options.getPod;
    this.#isStaticPod = options.isStaticPod ?? (() => false);
    this.#syncPeriodMs = options.syncPeriodMs ?? 10_000;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
  }

  /** Retries failed writes every sync period until `signal` aborts; resolves once writes in flight are done. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    this.#signal = signal;
    while (!signal.aborted) {
      try {
        await this.#clock.sleep(this.#syncPeriodMs, { signal });
      } catch {
        break;
      }
      for (const [uid, entry] of this.#entries) if (entry.version > entry.apiVersion) this.#dirty.add(uid);
      for (const uid of this.#failed) if (this.#entries.has(uid)) this.#dirty.add(uid);
      this.#failed.clear();
      this.#flush();
    }
    await Promise.allSettled([...this.#inFlight]);
  }

  /** The cached status of a pod, if the kubelet generated one. */
  getPodStatus(uid: string): DeepReadonly<PodStatus> | undefined {
    return this.#entries.get(uid)?.status;
  }

  /**
   * Caches `status` for `pod` and schedules a patch if it differs from the
   * cached one (`SetPodStatus`). `force` writes even an unchanged status.
   */
  setPodStatus(pod: DeepReadonly<Pod>, status: PodStatus, force = false): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const entry = this.#entries.get(uid);
    const old = entry?.status ?? (pod.status as PodStatus | undefined);
    if (old !== undefined && illegalTransition(pod, old, status)) {
      this.#logger.error(
        { pod: pod.metadata?.name },
        "status update refused: a terminated container cannot run again",
      );
      return;
    }
    const now = seconds(this.#clock.now());
    for (const condition of status.conditions ?? []) {
      // The kubelet never probes a condition: its zero lastProbeTime is null on the wire, as the API
      // server stores it, so an unchanged condition compares equal to the stored one.
      (condition as { lastProbeTime?: string | null }).lastProbeTime ??= null;
      const previous = old?.conditions?.find((c) => c.type === condition.type);
      condition.lastTransitionTime =
        previous !== undefined && previous.status === condition.status && previous.lastTransitionTime
          ? previous.lastTransitionTime
          : now;
    }
    status.startTime = old?.startTime ?? pod.status?.startTime ?? now;
    if (entry !== undefined && !force && statusEqual(entry.status, status)) return;
    const next: Entry = entry ?? {
      namespace: pod.metadata?.namespace ?? "",
      name: pod.metadata?.name ?? "",
      status,
      version: 0,
      apiStatus: pod.status,
      apiVersion: 0,
      podIsFinished: false,
      syncing: false,
    };
    next.status = status;
    next.version++;
    this.#entries.set(uid, next);
    this.#dirty.add(uid);
    this.#scheduleFlush();
  }

  /** Flips one container's `ready` and recomputes Ready/ContainersReady (`SetContainerReadiness`). */
  setContainerReadiness(pod: DeepReadonly<Pod>, containerId: string, ready: boolean): void {
    this.#setContainerFlag(pod, containerId, "ready", ready);
  }

  /** Flips one container's `started` (`SetContainerStartup`). */
  setContainerStartup(pod: DeepReadonly<Pod>, containerId: string, started: boolean): void {
    this.#setContainerFlag(pod, containerId, "started", started);
  }

  /**
   * Marks the pod finished on this node (`TerminatePod`): containers still
   * listed as not terminated become `ContainerStatusUnknown`, a non-terminal
   * phase becomes Failed, and the status is written; a deleted pod is then
   * deleted for good.
   */
  terminatePod(pod: DeepReadonly<Pod>, status: PodStatus): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    for (const list of [status.containerStatuses, status.initContainerStatuses]) {
      for (const container of list ?? []) {
        if (container.state?.terminated) continue;
        if (container.state?.waiting && list === status.initContainerStatuses) continue;
        container.state = {
          terminated: {
            reason: "ContainerStatusUnknown",
            message: "The container could not be located when the pod was terminated",
            exitCode: 137,
          },
        };
        container.ready = false;
      }
    }
    if (status.phase !== "Failed" && status.phase !== "Succeeded") status.phase = "Failed";
    this.setPodStatus(pod, status, true);
    const entry = this.#entries.get(uid);
    if (entry !== undefined) entry.podIsFinished = true;
  }

  /** Writes the pod's cached status again, even unchanged (a new mirror pod starts without it). */
  resync(uid: string): void {
    const entry = this.#entries.get(uid);
    if (entry === undefined) return;
    entry.apiVersion = Math.min(entry.apiVersion, entry.version - 1);
    entry.apiStatus = undefined;
    this.#dirty.add(uid);
    this.#scheduleFlush();
  }

  /** Forgets pods the kubelet no longer knows (`RemoveOrphanedStatuses`). */
  removeOrphanedStatuses(known: (uid: string) => boolean): void {
    for (const uid of this.#entries.keys()) {
      if (!known(uid)) {
        this.#entries.delete(uid);
        this.#dirty.delete(uid);
      }
    }
  }

  /** Resolves once every scheduled write has been attempted. */
  async flushed(): Promise<void> {
    while (this.#flushScheduled || this.#inFlight.size > 0) {
      await Promise.allSettled([...this.#inFlight]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #setContainerFlag(
    pod: DeepReadonly<Pod>,
    containerId: string,
    flag: "ready" | "started",
    value: boolean,
  ): void {
    const uid = pod.metadata?.uid;
    const entry = uid ? this.#entries.get(uid) : undefined;
    if (entry === undefined) return;
    const status = structuredClone(entry.status);
    const container = [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].find(
      (c) => c.containerID === containerId,
    );
    if (container === undefined || container[flag] === value) return;
    container[flag] = value;
    if (flag === "ready") recomputeReadiness(pod, status);
    this.setPodStatus(pod, status);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // Statuses set in one turn of the event loop are written together.
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /**
   * Starts a write for every changed pod not already being written. A pod's
   * status that changes while its write is in flight is written once that
   * write is done, and only its latest version: a pod is never written twice
   * at once, and intermediate statuses are skipped.
   */
  #flush(): void {
    if (this.#signal?.aborted) return;
    for (const uid of this.#dirty) {
      const entry = this.#entries.get(uid);
      if (entry === undefined || entry.syncing) continue;
      this.#dirty.delete(uid);
      entry.syncing = true;
      const sync = this.#syncPod(uid, entry).finally(() => {
        this.#inFlight.delete(sync);
        entry.syncing = false;
        if (this.#dirty.has(uid)) this.#scheduleFlush();
      });
      this.#inFlight.add(sync);
    }
  }

  async #syncPod(uid: string, entry: Entry): Promise<void> {
    const pod = this.#getPod(uid);
    const isStatic = this.#isStaticPod(uid);
    // A static pod without a mirror pod yet: the sync period retries it.
    if (isStatic && pod === undefined) return;
    const apiUid = pod?.metadata?.uid ?? uid;
    const version = entry.version;
    const apiBase = entry.apiStatus ?? pod?.status ?? {};
    const merged = mergeConditions(pod?.status?.conditions ?? apiBase.conditions, entry.status);
    const diff = mergePatchDiff(apiBase, merged);
    const resource = this.#client.resource(pods, entry.namespace);
    let written: DeepReadonly<Pod> | undefined;
    try {
      if (diff !== undefined) {
        this.stats.patches++;
        written = await resource.patch(
          entry.name,
          { metadata: { uid: apiUid }, status: diff },
          { type: "merge", subresource: "status", signal: this.#signal },
        );
        entry.apiStatus = written.status ?? merged;
      } else {
        written = pod;
      }
      entry.apiVersion = Math.max(entry.apiVersion, version);
    } catch (error) {
      if (isStatic && (isNotFound(error) || isConflict(error))) {
        // The mirror pod went or was replaced: written again once a new one is known.
        entry.apiStatus = undefined;
        return;
      }
      if (isNotFound(error) || (isConflict(error) && pod?.metadata?.uid !== uid)) {
        // The pod is gone (or was recreated under a new UID): nothing to write.
        this.#entries.delete(uid);
        return;
      }
      this.#logger.error({ err: error, pod: entry.name }, "failed to update the pod's status");
      this.#failed.add(uid);
      return;
    }
    if (written !== undefined && this.#canBeDeleted(written, entry)) {
      try {
        this.stats.deletes++;
        await resource.delete(entry.name, {
          gracePeriodSeconds: 0,
          preconditions: { uid },
          signal: this.#signal,
        });
        this.#entries.delete(uid);
      } catch (error) {
        if (isNotFound(error) || isConflict(error)) this.#entries.delete(uid);
        else {
          this.#logger.error({ err: error, pod: entry.name }, "failed to delete the finished pod");
          this.#failed.add(uid);
        }
      }
    }
  }

  #canBeDeleted(pod: DeepReadonly<Pod>, entry: Entry): boolean {
    const phase = pod.status?.phase;
    return (
      entry.podIsFinished &&
      pod.metadata?.deletionTimestamp !== undefined &&
      (phase === "Succeeded" || phase === "Failed") &&
      pod.metadata?.annotations?.["kubernetes.io/config.mirror"] === undefined
    );
  }
}

/**
 * The JSON merge patch that turns `from` into `to` (`CreateMergePatch`):
 * changed members, removed ones as null, arrays replaced whole; undefined
 * when nothing differs.
 */
export function mergePatchDiff(from: unknown, to: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(from) || !isPlainObject(to)) return undefined;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (!(key in to) || to[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    const old = from[key];
    if (isPlainObject(old) && isPlainObject(value)) {
      const inner = mergePatchDiff(old, value);
      if (inner !== undefined) patch[key] = inner;
    } else if (!jsonEqual(old, value)) patch[key] = value;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

/** Other writers' conditions first, then the kubelet's (`mergePodStatus`). */
function mergeConditions(
  apiConditions: readonly DeepReadonly<PodCondition>[] | undefined,
  status: PodStatus,
): PodStatus {
  const others = (apiConditions ?? []).filter((c) => !kubeletConditionTypes.includes(c.type));
  if (others.length === 0) return status;
  return { ...status, conditions: [...(others as PodCondition[]), ...(status.conditions ?? [])] };
}

function recomputeReadiness(pod: DeepReadonly<Pod>, status: PodStatus): void {
  const containersReady = status.conditions?.find((c) => c.type === "ContainersReady");
  const ready = status.conditions?.find((c) => c.type === "Ready");
  if (containersReady === undefined || ready === undefined) return;
  if (status.phase === "Failed" || status.phase === "Succeeded") return;
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  const unready = [
    ...sidecars
      .map((c) => c.name)
      .filter((name) => !(status.initContainerStatuses ?? []).find((s) => s.name === name)?.ready),
    ...(pod.spec?.containers ?? [])
      .map((c) => c.name)
      .filter((name) => !(status.containerStatuses ?? []).find((s) => s.name === name)?.ready),
  ];
  const set = (c: PodCondition, ok: boolean, message: string) => {
    c.status = ok ? "True" : "False";
    if (ok) {
      delete c.reason;
      delete c.message;
    } else {
      c.reason = "ContainersNotReady";
      c.message = message;
    }
  };
  const message = `containers with unready status: [${unready.join(" ")}]`;
  set(containersReady, unready.length === 0, message);
  const gatesOk = (pod.spec?.readinessGates ?? []).every(
    (gate) => pod.status?.conditions?.find((c) => c.type === gate.conditionType)?.status === "True",
  );
  set(ready, unready.length === 0 && gatesOk, message);
}

/** A terminated container of a pod that never restarts it may not run again (`checkContainerStateTransition`). */
function illegalTransition(pod: DeepReadonly<Pod>, old: DeepReadonly<PodStatus>, status: PodStatus): boolean {
  const policy = pod.spec?.restartPolicy ?? "Always";
  if (policy === "Always") return false;
  const check = (
    olds: readonly DeepReadonly<ContainerStatus>[] | undefined,
    news: ContainerStatus[] | undefined,
  ) =>
    (olds ?? []).some((o) => {
      const terminated = o.state?.terminated;
      if (terminated === undefined) return false;
      if (policy === "OnFailure" && terminated.exitCode !== 0) return false;
      const now = news?.find((n) => n.name === o.name);
      return now !== undefined && now.state?.terminated === undefined;
    });
  return check(old.containerStatuses, status.containerStatuses);
}

/** Equal for the status manager: kubelet conditions on type/status/reason/message, the rest deep. */
function statusEqual(a: DeepReadonly<PodStatus>, b: PodStatus): boolean {
  // Member by member, without copies: this runs for every status the kubelet works out.
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const key in ra) if (key !== "conditions" && !jsonEqual(ra[key], rb[key])) return false;
  for (const key in rb) if (key !== "conditions" && rb[key] !== undefined && !(key in ra)) return false;
  const ca = a.conditions ?? [];
  const cb = b.conditions ?? [];
  if (ca.length !== cb.length) return false;
  for (let i = 0; i < ca.length; i++) {
    const x = ca[i]!;
    const y = cb[i]!;
    if (x.type !== y.type || x.status !== y.status || x.reason !== y.reason || x.message !== y.message)
      return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
