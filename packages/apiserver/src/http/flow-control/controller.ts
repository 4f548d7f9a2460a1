import { createHash } from "node:crypto";
import { flowSchemas, isNotFound, type KubeObject, priorityLevelConfigurations } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock, TimerHandle } from "@reconcile/clock";
import type { FlowSchemaObject, PriorityLevelObject } from "../../kinds/flow-control-bootstrap.js";
import type { UserInfo } from "../auth/user.js";
import { watchKind } from "../auth/watch-kind.js";
import {
  borrowingAdjustmentPeriodMs,
  type LevelLimits,
  SeatDemandStats,
  updateBorrowing,
} from "./borrowing.js";
import { type Classification, FlowControlConfig, type RequestDigest } from "./classify.js";
import {
  FlowControlRejection,
  QueueSet,
  type QueuingShape,
  type SeatHolder,
  type SeatRequest,
} from "./queue-set.js";
import {
  estimateWork,
  maxSeatsOf,
  type ObjectCount,
  oneSeat,
  WatchTracker,
  type WorkEstimatorSources,
} from "./work-estimate.js";

const noRelease = () => {};
const noQuery = new URLSearchParams();

/** kube-apiserver's `--max-requests-inflight` plus `--max-mutating-requests-inflight` defaults. */
export const defaultServerConcurrencyLimit = 600;

export interface FlowControllerOptions {
  /** The server's own client, to watch FlowSchemas and PriorityLevelConfigurations with. */
  client: Client;
  clock: Clock;
  /** The seats shared by all limited priority levels. Default 600. */
  serverConcurrencyLimit?: number | undefined;
  /** How long a request may wait in a queue. Default 15,000 ms (a quarter of the request timeout). */
  queueWaitLimitMs?: number | undefined;
  /**
   * How many objects of a resource (`pods`, `deployments.apps`) are stored,
   * for what a list is estimated to cost. Default: not known (a list costs one seat).
   */
  objectCount?: ((groupResource: string) => ObjectCount) | undefined;
}

/**
 * A request to admit: its attributes (asked for only when its classification
 * needs them) and the signal of its client going away (asked for only when
 * it has to wait).
 */
export interface AdmittedRequest extends SeatHolder {
  attributes(): RequestDigest;
  /** Its query, for what a list is estimated to cost. */
  query?(): URLSearchParams;
  cancel(): AbortSignal;
}

/** A priority level as the debug dumps show it: its seats and queues, and whether it is going away. */
export interface LevelState {
  readonly name: string;
  readonly set: QueueSet;
  /** Deleted, and kept until the requests it holds are done. */
  readonly quiescing: boolean;
}

/** What admitting a request gives: where it went, and the seat to release when it is answered. */
export interface Admission {
  readonly classification: Classification;
  readonly release: () => void;
}

/**
 * API Priority and Fairness for one API server: the stored FlowSchemas and
 * PriorityLevelConfigurations (kept by watches on the server's own client,
 * started on first use), and one {@link QueueSet} per limited level, its
 * seats `ceil(serverConcurrencyLimit × nominalConcurrencyShares / Σ shares)`.
 */
export class FlowController {
  readonly serverConcurrencyLimit: number;
  readonly queueWaitLimitMs: number;
  readonly #client: Client;
  /** The server's clock, which queue waits are measured on. */
  readonly clock: Clock;
  readonly #schemas = new Map<string, KubeObject>();
  readonly #levels = new Map<string, KubeObject>();
  #config: FlowControlConfig | undefined;
  readonly #queueSets = new Map<string, QueueSet>();
  /** Exempt levels' sets: every request seated at once, counted for the debug dumps. */
  readonly #exemptSets = new Map<string, QueueSet>();
  /** Each configured level's limits and seat demand, for the borrowing between levels. */
  readonly #limits = new Map<string, LevelLimits>();
  #fairFrac = 0;
  #adjustment: TimerHandle | undefined;
  readonly #hashes = new Map<string, bigint>();
  /** The watches being served, for what a write is estimated to cost. */
  readonly watches = new WatchTracker();
  /** The most seats one request may take, by queuing level (upstream's `MaxSeatsTracker`). */
  readonly #maxSeats = new Map<string, number>();
  /** The levels the limits were last dealt to: the configured ones and those deleted but draining. */
  #levelObjects = new Map<string, PriorityLevelObject>();
  readonly #sources: WorkEstimatorSources;
  readonly #counts = new Map<string, RequestCounts>();
  readonly #countsBySchema = new WeakMap<object, { level: object; key: string; counts: RequestCounts }>();
  #ready: Promise<void> | undefined;
  /** Whether the first lists are in: requests are admitted without waiting for them. */
  #synced = false;
  readonly #stop = new AbortController();
  #running: Promise<unknown> | undefined;

  constructor(options: FlowControllerOptions) {
    this.#client = options.client;
    this.clock = options.clock;
    this.serverConcurrencyLimit = options.serverConcurrencyLimit ?? defaultServerConcurrencyLimit;
    this.queueWaitLimitMs = options.queueWaitLimitMs ?? 15_000;
    const objectCount = options.objectCount ?? (() => "not-found" as const);
    this.#sources = {
      objectCount,
      watchCount: (digest) => this.watches.interestedCount(digest),
      maxSeats: (level) => this.#maxSeats.get(level) ?? 0,
    };
  }

  /** Starts the watches on first use; settles once both kinds are listed. */
  ready(): Promise<void> {
    this.#ready ??= this.#served()
      .then((served) => (served ? this.#watch() : undefined))
      .then(() => {
        this.#synced = true;
        if (!this.#stop.signal.aborted) this.#scheduleAdjustment();
      });
    return this.#ready;
  }

  /** Derives the current limits again every 10 s, until closed (upstream's `updateBorrowing` loop). */
  #scheduleAdjustment(): void {
    this.#adjustment = this.clock.setTimeout(() => {
      this.adjustLimits();
      this.#scheduleAdjustment();
    }, borrowingAdjustmentPeriodMs);
    // A pending adjustment does not keep the process alive.
    (this.#adjustment as { unref?: () => void }).unref?.();
  }

  /**
   * Lends and borrows seats between the levels by their seat demand since the
   * last adjustment (done every 10 s, and on every configuration change).
   */
  adjustLimits(): void {
    // A configuration rebuilt now adjusts the limits itself.
    if (this.#config === undefined) this.config();
    else this.#rebalance();
  }

  /** The current limits derived again from the demand since the last time, and given to the sets. */
  #rebalance(): void {
    this.#fairFrac = updateBorrowing([...this.#limits.values()]);
    for (const [name, limits] of this.#limits) {
      const set = limits.exempt ? undefined : this.#queueSets.get(name);
      if (set !== undefined && set.concurrencyLimit !== limits.current)
        set.reshape(limits.current, set.shape);
    }
  }

  /** Each configured level's seat limits and demand (the `apiserver_flowcontrol_*_seats` gauges), by name. */
  levelLimits(): ReadonlyMap<string, LevelLimits> {
    this.config();
    return this.#limits;
  }

  /** The fair proportion of the last adjustment (`apiserver_flowcontrol_seat_fair_frac`). */
  get fairFrac(): number {
    return this.#fairFrac;
  }

  #watch(): Promise<void> {
    const signal = this.#stop.signal;
    const keep = (into: Map<string, KubeObject>) => (type: string, object: KubeObject) => {
      if (type === "DELETED") into.delete(object.metadata?.name ?? "");
      else into.set(object.metadata?.name ?? "", object);
      this.#config = undefined;
    };
    const watches = [
      watchKind(this.#client, this.clock, flowSchemas, signal, keep(this.#schemas)),
      watchKind(this.#client, this.clock, priorityLevelConfigurations, signal, keep(this.#levels)),
    ];
    this.#running = Promise.allSettled(watches.map((w) => w.done));
    return Promise.all(watches.map((w) => w.synced)).then(() => undefined);
  }

  /** Whether the server serves the flow control kinds at all (one that serves a chosen few may not). */
  async #served(): Promise<boolean> {
    try {
      await this.#client.resource(flowSchemas).list({ limit: 1 });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      return true; // listed again by the watch until it works
    }
  }

  /** Stops the watches and the adjustments. */
  async close(): Promise<void> {
    this.#stop.abort();
    if (this.#adjustment !== undefined) this.clock.clearTimeout(this.#adjustment);
    await this.#running;
  }

  /**
   * The configuration now, rebuilt after a change: each level's nominal,
   * lower and upper limits set again from its shares (upstream's
   * `finishQueueSetReconfigsLocked`), a new level starting at its nominal
   * limit less half what it lends, and the current limits derived again.
   */
  config(): FlowControlConfig {
    if (this.#config !== undefined) return this.#config;
    const config = new FlowControlConfig(
      [...this.#schemas.values()] as FlowSchemaObject[],
      [...this.#levels.values()] as PriorityLevelObject[],
    );
    // A deleted level still holding requests keeps its share (its last spec) until it drains, as
    // upstream's quiescing levels do: the others get its seats back once it is idle.
    const levels = new Map(config.priorityLevels);
    for (const sets of [this.#exemptSets, this.#queueSets])
      for (const [name, set] of sets) {
        const last = this.#levelObjects.get(name);
        const busy = set.executing > 0 || set.waiting > 0;
        if (levels.has(name) || last === undefined || !busy) {
          set.onIdle = undefined;
          continue;
        }
        if ((last.spec?.type === "Limited") === (sets === this.#queueSets)) levels.set(name, last);
        set.onIdle = () => {
          this.#config = undefined;
        };
      }
    this.#levelObjects = levels;
    let shares = 0;
    for (const level of levels.values()) shares += nominalShares(level);
    for (const [name, level] of levels) {
      const exempt = level.spec?.type !== "Limited";
      const nominal = Math.ceil((this.serverConcurrencyLimit * nominalShares(level)) / Math.max(1, shares));
      const { lendable, borrowing } = lendingOf(level, nominal, this.serverConcurrencyLimit);
      const queuing = level.spec?.limited?.limitResponse;
      // At most 15 % of the nominal limit, and no more than a hand's share of it.
      if (!exempt && queuing?.type === "Queue") {
        const handSize = queuing.queuing?.handSize ?? 8;
        this.#maxSeats.set(
          name,
          Math.max(1, Math.min(Math.ceil(nominal * 0.15), Math.trunc(nominal / handSize))),
        );
      } else this.#maxSeats.delete(name);
      const sets = exempt ? this.#exemptSets : this.#queueSets;
      let set = sets.get(name);
      if (set === undefined) {
        set = exempt
          ? new QueueSet(Infinity, exemptShape, this.clock)
          : new QueueSet(nominal - Math.trunc(lendable / 2), queuingShape(level), this.clock);
        sets.set(name, set);
      } else if (!exempt) set.reshape(set.concurrencyLimit, queuingShape(level));
      // The same set: its demand statistics go on.
      const previous = this.#limits.get(name);
      const same = previous?.demand === set.demand ? previous : undefined;
      this.#limits.set(name, {
        exempt,
        nominal,
        lower: nominal - lendable,
        upper: nominal + borrowing,
        current: exempt ? (same?.current ?? 0) : set.concurrencyLimit,
        target: same?.target ?? 0,
        stats: same?.stats ?? new SeatDemandStats(),
        demand: set.demand,
      });
    }
    for (const name of this.#limits.keys()) if (!levels.has(name)) this.#limits.delete(name);
    for (const name of this.#maxSeats.keys()) if (!levels.has(name)) this.#maxSeats.delete(name);
    this.#config = config;
    this.#reap();
    this.#rebalance();
    return config;
  }

  /**
   * Each level's set and whether it is the configured level's: a set whose
   * level is gone, or changed between exempt and limited, is quiescing.
   */
  #sets(): { name: string; set: QueueSet; sets: Map<string, QueueSet>; current: boolean }[] {
    const levels = this.config().priorityLevels;
    const all = [];
    for (const sets of [this.#exemptSets, this.#queueSets])
      for (const [name, set] of sets) {
        const level = levels.get(name);
        const current =
          level !== undefined && (level.spec?.type === "Limited") === (sets === this.#queueSets);
        all.push({ name, set, sets, current });
      }
    return all;
  }

  /** Drops the quiescing sets that hold no request, as upstream reaps a level once idle. */
  #reap(): void {
    for (const { name, set, sets, current } of this.#sets())
      if (!current && set.executing === 0 && set.waiting === 0) sets.delete(name);
  }

  /** Each limited level's seats, waiting and executing requests, and counts, by name. */
  queueSets(): ReadonlyMap<string, QueueSet> {
    this.config();
    return this.#queueSets;
  }

  /**
   * Every priority level with its set, by name: the configured ones (exempt
   * and limited) and those deleted but still holding requests.
   */
  levelStates(): LevelState[] {
    this.#reap();
    return this.#sets()
      .map(({ name, set, current }) => ({ name, set, quiescing: !current }))
      .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  }

  /**
   * Classifies the request and takes a seat in its level (none for an exempt
   * level): at once when one is free (no promise), else once one frees.
   * Throws or rejects with a `FlowControlRejection` carrying the
   * classification when the level refuses it.
   */
  admit(user: UserInfo, request: AdmittedRequest): Admission | Promise<Admission> {
    if (!this.#synced) return this.ready().then(() => this.admit(user, request));
    const classification = this.config().classify(user, request);
    const level = classification.priorityLevel;
    const counts = this.#countsOf(classification);
    const name = level.metadata?.name ?? "";
    const set = level.spec?.type === "Limited" ? this.#queueSets.get(name) : this.#exemptSets.get(name);
    if (set === undefined) return { classification, release: executing(counts, noRelease, 1) };
    const seatRequest: SeatRequest = {
      flowSchema: classification.flowSchema.metadata?.name ?? "",
      flowDistinguisher: classification.flowDistinguisher,
      // Only a level with queues deals them from the hash.
      hash: level.spec?.type === "Limited" ? this.#flowHash(classification) : 0n,
      arrived: this.clock.now(),
      priorityLevel: name,
      asked: request,
      // An exempt level limits nothing: its requests count one seat each, unestimated.
      work:
        level.spec?.type === "Limited"
          ? estimateWork(request.attributes(), request.query?.() ?? noQuery, name, this.#sources)
          : oneSeat,
    };
    try {
      const seats = maxSeatsOf(seatRequest.work!);
      const seat = set.acquire(seatRequest, this.queueWaitLimitMs, request);
      if (!(seat instanceof Promise)) return { classification, release: executing(counts, seat, seats) };
      counts.waiting++;
      counts.waitingSeats += seats;
      return seat.then(
        (release) => {
          counts.waiting--;
          counts.waitingSeats -= seats;
          return { classification, release: executing(counts, release, seats) };
        },
        (error: unknown) => {
          counts.waiting--;
          counts.waitingSeats -= seats;
          return refused(error, classification);
        },
      );
    } catch (error) {
      return refused(error, classification);
    }
  }

  /**
   * Requests executing and waiting now, by priority level and FlowSchema
   * (upstream's `current_executing_requests` and `current_inqueue_requests`);
   * a pair seen once stays, at zero.
   */
  requestCounts(): Iterable<RequestCounts> {
    return this.#counts.values();
  }

  #countsOf({ priorityLevel, flowSchema }: Classification): RequestCounts {
    // A FlowSchema object names one level for as long as it is current: its counts are found by it.
    const known = this.#countsBySchema.get(flowSchema);
    if (known?.level === priorityLevel && this.#counts.get(known.key) === known.counts) return known.counts;
    const key = `${priorityLevel.metadata?.name ?? ""}\u0000${flowSchema.metadata?.name ?? ""}`;
    let counts = this.#counts.get(key);
    if (counts === undefined) {
      if (this.#counts.size >= 10_000) this.#counts.clear();
      counts = {
        priorityLevel: priorityLevel.metadata?.name ?? "",
        flowSchema: flowSchema.metadata?.name ?? "",
        executing: 0,
        waiting: 0,
        executingSeats: 0,
        waitingSeats: 0,
      };
      this.#counts.set(key, counts);
    }
    this.#countsBySchema.set(flowSchema, { level: priorityLevel, key, counts });
    return counts;
  }

  /** upstream's `hashFlowID`: the first 8 bytes, little-endian, of SHA-256(schema name, NUL, distinguisher). */
  #flowHash({ flowSchema, flowDistinguisher }: Classification): bigint {
    const key = `${flowSchema.metadata?.name ?? ""}\u0000${flowDistinguisher}`;
    let hash = this.#hashes.get(key);
    if (hash === undefined) {
      hash = createHash("sha256").update(key).digest().readBigUInt64LE(0);
      if (this.#hashes.size > 10_000) this.#hashes.clear();
      this.#hashes.set(key, hash);
    }
    return hash;
  }
}

/** How many requests of one priority level and FlowSchema execute and wait now. */
export interface RequestCounts {
  readonly priorityLevel: string;
  readonly flowSchema: string;
  executing: number;
  waiting: number;
  /** The seats they hold and wait for. */
  executingSeats: number;
  waitingSeats: number;
}

/** `release`, counting the request and its seats as executing until it is called (once). */
function executing(counts: RequestCounts, release: () => void, seats: number): () => void {
  counts.executing++;
  counts.executingSeats += seats;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    counts.executing--;
    counts.executingSeats -= seats;
    release();
  };
}

/** A level's refusal, told where the request was classified. */
function refused(error: unknown, classification: Classification): never {
  if (error instanceof FlowControlRejection) throw new FlowControlRejection(error.reason, classification);
  throw error;
}

/**
 * The seats a level lends and may borrow (upstream's `lendablePercent` and
 * `borrowingLimitPercent` of its nominal limit; without a borrowing limit, as
 * many as the whole server has).
 */
function lendingOf(
  level: PriorityLevelObject,
  nominal: number,
  serverConcurrencyLimit: number,
): { lendable: number; borrowing: number } {
  const spec = level.spec;
  const config = spec?.type === "Limited" ? spec.limited : spec?.exempt;
  const lendablePercent = config?.lendablePercent;
  const borrowingLimitPercent = spec?.type === "Limited" ? spec.limited?.borrowingLimitPercent : undefined;
  return {
    lendable: lendablePercent == null ? 0 : Math.round((nominal * lendablePercent) / 100),
    borrowing:
      borrowingLimitPercent == null
        ? serverConcurrencyLimit
        : Math.round((nominal * borrowingLimitPercent) / 100),
  };
}

function nominalShares(level: PriorityLevelObject): number {
  const spec = level.spec;
  if (spec?.type === "Limited") return spec.limited?.nominalConcurrencyShares ?? 30;
  return spec?.exempt?.nominalConcurrencyShares ?? 0;
}

/** An exempt level's set: no queues, no limit. */
const exemptShape: QueuingShape = { reject: true, queues: 0, handSize: 0, queueLengthLimit: 0 };

function queuingShape(level: PriorityLevelObject): QueuingShape {
  const response = level.spec?.limited?.limitResponse;
  const queuing = response?.queuing;
  return {
    reject: response?.type !== "Queue",
    queues: queuing?.queues ?? 64,
    handSize: queuing?.handSize ?? 8,
    queueLengthLimit: queuing?.queueLengthLimit ?? 50,
  };
}
