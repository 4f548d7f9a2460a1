import { type DeepReadonly, type Event, events, isNotFound, type KubeObject, rfc3339 } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import { TokenBucket } from "@reconcile/workqueue";
import type { ObjectReference } from "kubernetes-types/core/v1.js";
import { type Logger, noopLogger } from "./logger.js";

/** `Normal` or `Warning`, as core/v1 Events. */
export type EventType = "Normal" | "Warning";

/**
 * Records Events about objects (client-go's `record.EventRecorder`). Recording
 * never blocks and never fails the caller: writes happen in the background and
 * their errors are logged.
 */
export interface EventRecorder {
  /**
   * Records an event about `object`, which needs `kind` and `metadata.name`
   * (objects read from a cache may lack `kind`: pass a reference or set it).
   * `details` carries what only events.k8s.io Events hold (client-go's
   * `events.EventRecorder.Eventf`): the action taken and a related object;
   * a core/v1 recorder leaves them out.
   */
  event(
    object: KubeObject | DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    details?: EventDetails,
  ): void;
}

/** The parts of an event only the events.k8s.io API holds. */
export interface EventDetails {
  /** What was done or failed (`Binding`, `Scheduling`, `Preempting`). */
  action?: string | undefined;
  /** A second object the event is about (the preemptor of a preempted pod). */
  related?: KubeObject | DeepReadonly<KubeObject> | ObjectReference | undefined;
}

/** An {@link EventRecorder} that records nothing. */
export const noopEventRecorder: EventRecorder = { event() {} };

export interface ClientEventRecorderOptions {
  /** Where Events are written. Required. */
  client: Client;
  /** `source.component` / `reportingComponent`, e.g. "replicaset-controller". Required. */
  component: string;
  /** `source.host` / `reportingInstance`. Default "". */
  host?: string | undefined;
  /** Time of the events and of the spam filter. Default `realClock`. */
  clock?: Clock | undefined;
  /** Where failed writes are logged. Default: no logging. */
  logger?: Logger | undefined;
  /** Events allowed at once per involved object before the spam filter drops them. Default 25. */
  spamBurst?: number | undefined;
  /** Tokens per second the spam filter refills per involved object. Default 1/300 (one per 5 minutes). */
  spamQps?: number | undefined;
  /** How many distinct events are remembered for aggregation (least recently used evicted). Default 4096. */
  maxCachedEvents?: number | undefined;
}

interface SeenEvent {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
}

/**
 * An {@link EventRecorder} that writes core/v1 Events through a `Client`, as
 * client-go's broadcaster with its event correlator does: a repeat of an
 * identical event (same object, type, reason, message and source) patches the
 * earlier Event's `count` and `lastTimestamp` instead of creating a new one,
 * and a per-object token bucket (burst 25, refilled once per 5 minutes) drops
 * event storms. Writes for one event are serialised; `flush()` waits for all.
 */
export class ClientEventRecorder implements EventRecorder {
  readonly #client: Client;
  readonly #component: string;
  readonly #host: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #spamBurst: number;
  readonly #spamQps: number;
  readonly #maxCachedEvents: number;
  readonly #seen = new Map<string, SeenEvent>();
  readonly #spam = new Map<string, TokenBucket>();
  readonly #tails = new Map<string, Promise<void>>();
  #sequence = 0;

  constructor(options: ClientEventRecorderOptions) {
    if (!options.component) throw new TypeError("ClientEventRecorder: component is required");
    this.#client = options.client;
    this.#component = options.component;
    this.#host = options.host ?? "";
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.#spamBurst = options.spamBurst ?? 25;
    this.#spamQps = options.spamQps ?? 1 / 300;
    // Checked here, not when the first bucket is made: recording an event never throws.
    new TokenBucket({ qps: this.#spamQps, burst: this.#spamBurst });
    this.#maxCachedEvents = options.maxCachedEvents ?? 4096;
  }

  event(
    object: KubeObject | DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): void {
    const involved = referenceOf(object);
    if (involved === undefined) {
      this.#logger.error(
        { reason, message },
        "cannot record an event: the object has no kind or no metadata.name",
      );
      return;
    }
    const objectKey = [
      involved.apiVersion,
      involved.kind,
      involved.namespace,
      involved.name,
      involved.uid,
    ].join("\u0000");
    if (!this.#allow(objectKey)) return;
    const key = [this.#component, this.#host, objectKey, type, reason, message].join("\u0000");
    const timestamp = rfc3339(this.#clock.now());
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const write = previous.then(() => this.#write(key, involved, type, reason, message, timestamp));
    this.#tails.set(key, write);
    void write.then(() => {
      if (this.#tails.get(key) === write) this.#tails.delete(key);
    });
  }

  /** Resolves once every event recorded so far has been written (or failed and been logged). */
  async flush(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }

  // The spam filter: a token bucket per involved object (client-go's EventSourceObjectSpamFilter).
  #allow(objectKey: string): boolean {
    let bucket = this.#spam.get(objectKey);
    if (bucket === undefined) {
      bucket = new TokenBucket({ qps: this.#spamQps, burst: this.#spamBurst, clock: this.#clock });
      this.#spam.set(objectKey, bucket);
      if (this.#spam.size > this.#maxCachedEvents) this.#spam.delete(this.#spam.keys().next().value!);
    }
    return bucket.tryTake();
  }

  async #write(
    key: string,
    involved: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    timestamp: string,
  ): Promise<void> {
    const seen = this.#seen.get(key);
    try {
      if (seen !== undefined) {
        this.#seen.delete(key); // re-inserted below: the map's order is the LRU order
        try {
          await this.#client
            .resource(events, seen.namespace)
            .patch(
              seen.name,
              { count: seen.count + 1, lastTimestamp: timestamp, message },
              { type: "merge" },
            );
          this.#remember(key, { ...seen, count: seen.count + 1 });
          return;
        } catch (error) {
          if (!isNotFound(error)) throw error;
          // The earlier Event is gone (expired or deleted): start a new one.
        }
      }
      const namespace = involved.namespace || "default";
      const created = await this.#client.resource(events, namespace).create({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: this.#eventName(involved.name ?? ""), namespace },
        involvedObject: involved,
        reason,
        message,
        type,
        source: { component: this.#component, ...(this.#host ? { host: this.#host } : {}) },
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        count: 1,
        reportingComponent: this.#component,
        reportingInstance: this.#host,
      } satisfies Event);
      this.#remember(key, {
        namespace,
        name: created.metadata?.name ?? "",
        count: created.count ?? 1,
        firstTimestamp: timestamp,
      });
    } catch (error) {
      try {
        this.#logger.error(
          { err: error, reason, involvedObject: `${involved.namespace ?? ""}/${involved.name ?? ""}` },
          "failed to write event",
        );
      } catch {
        // A throwing logger must not reject this write: later events for the key chain on it.
      }
    }
  }

  #remember(key: string, seen: SeenEvent): void {
    this.#seen.set(key, seen);
    if (this.#seen.size > this.#maxCachedEvents) this.#seen.delete(this.#seen.keys().next().value!);
  }

  #eventName(objectName: string): string {
    return eventObjectName(objectName, this.#clock.now(), this.#sequence++);
  }
}

/**
 * `<object name>.<hex nanoseconds>`, as client-go names events, with
 * `sequence` in the sub-millisecond digits so that names stay unique within
 * one millisecond. A clock may give fractions of a millisecond (a FakeClock
 * advanced by them): whole ones name the event.
 */
export function eventObjectName(objectName: string, nowMs: number, sequence: number): string {
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(sequence % 1_000_000);
  return `${objectName}.${nanos.toString(16)}`;
}

export function referenceOf(
  object: KubeObject | DeepReadonly<KubeObject> | ObjectReference,
): ObjectReference | undefined {
  if ("metadata" in object && object.metadata !== undefined) {
    const meta = object.metadata;
    if (!object.kind || !meta.name) return undefined;
    // Assigned one by one, in this order: spreading optional parts costs several times more per event.
    const reference: { -readonly [K in keyof ObjectReference]: ObjectReference[K] } = {};
    if (object.apiVersion) reference.apiVersion = object.apiVersion;
    reference.kind = object.kind;
    reference.name = meta.name;
    if (meta.namespace) reference.namespace = meta.namespace;
    if (meta.uid) reference.uid = meta.uid;
    if (meta.resourceVersion) reference.resourceVersion = meta.resourceVersion;
    return reference;
  }
  const reference = object as ObjectReference;
  if (!reference.kind || !reference.name) return undefined;
  return { ...reference };
}
