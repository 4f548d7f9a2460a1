import { hostname } from "node:os";
import { type DeepReadonly, eventsV1Events, isNotFound, type KubeObject, rfc3339Micro } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import type { ObjectReference } from "kubernetes-types/core/v1.js";
import type { Event as EventsV1Event } from "kubernetes-types/events/v1.js";
import {
  type EventDetails,
  type EventRecorder,
  type EventType,
  eventObjectName,
  referenceOf,
} from "./event-recorder.js";
import { type Logger, noopLogger } from "./logger.js";

// events.k8s.io/v1 Events as client-go's tools/events writes them (the
// recorder kube-scheduler uses): an event names its action, its reporting
// controller and instance, and a repeat of the same action and reason about
// the same objects within six minutes becomes a series on the first Event
// instead of a new Event.

/** How long an event stays open to repeats that join its series (upstream's `finishTime`). */
export const eventSeriesFinishMs = 6 * 60 * 1000;
/** How often an open series' count is written again (upstream's `refreshTime`). */
export const eventSeriesRefreshMs = 30 * 60 * 1000;

export interface ClientEventsV1RecorderOptions {
  /** Where Events are written. Required. */
  client: Client;
  /** `reportingController`, e.g. "default-scheduler". Required. */
  reportingController: string;
  /** `reportingInstance`. Default `<reportingController>-<hostname>`, as upstream's `NewRecorder`. */
  reportingInstance?: string | undefined;
  /** Time of the events and of their series. Default `realClock`. */
  clock?: Clock | undefined;
  /** Where failed writes are logged. Default: no logging. */
  logger?: Logger | undefined;
  /** How many open events are remembered (least recently used dropped). Default 4096. */
  maxCachedEvents?: number | undefined;
}

interface OpenEvent {
  namespace: string;
  name: string;
  /** The series so far; undefined until a repeat. */
  series: { count: number; lastObservedTime: string } | undefined;
  lastObservedMs: number;
  /** When the series was last written. */
  writtenMs: number;
}

/**
 * An {@link EventRecorder} writing events.k8s.io/v1 Events. A repeat (same
 * action, reason, reporting controller, regarding and related object; the
 * note may differ) within {@link eventSeriesFinishMs} of the last one
 * patches the first Event's `series` (count 2) once, then only counts,
 * writing the count again once {@link eventSeriesRefreshMs} has passed since
 * the last write. Writes for one event are serialised; `flush()` waits for all.
 */
export class ClientEventsV1Recorder implements EventRecorder {
  readonly #client: Client;
  readonly #controller: string;
  readonly #instance: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #maxCachedEvents: number;
  readonly #open = new Map<string, OpenEvent>();
  readonly #tails = new Map<string, Promise<void>>();
  #sequence = 0;

  constructor(options: ClientEventsV1RecorderOptions) {
    if (!options.reportingController)
      throw new TypeError("ClientEventsV1Recorder: reportingController is required");
    this.#client = options.client;
    this.#controller = options.reportingController;
    this.#instance = options.reportingInstance ?? `${options.reportingController}-${hostname()}`;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.#maxCachedEvents = options.maxCachedEvents ?? 4096;
  }

  event(
    object: KubeObject | DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    details: EventDetails = {},
  ): void {
    const regarding = referenceOf(object);
    const related = details.related === undefined ? undefined : referenceOf(details.related);
    if (regarding === undefined) {
      this.#logger.error(
        { reason, message },
        "cannot record an event: the object has no kind or no metadata.name",
      );
      return;
    }
    const action = details.action || reason;
    // Whole references, resourceVersion included, as upstream compares its cache keys.
    const key = `${action}\u0000${reason}\u0000${referenceKey(regarding)}\u0000${related === undefined ? "" : referenceKey(related)}`;
    const now = this.#clock.now();
    const write = (this.#tails.get(key) ?? Promise.resolve()).then(() =>
      this.#record(key, { regarding, related, type, reason, message, action }, now),
    );
    this.#tails.set(key, write);
    void write.then(() => {
      if (this.#tails.get(key) === write) this.#tails.delete(key);
    });
  }

  /** Resolves once every event recorded so far has been written (or failed and been logged). */
  async flush(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }

  async #record(
    key: string,
    event: {
      regarding: ObjectReference;
      related: ObjectReference | undefined;
      type: EventType;
      reason: string;
      message: string;
      action: string;
    },
    now: number,
  ): Promise<void> {
    try {
      const open = this.#open.get(key);
      if (open !== undefined && now - open.lastObservedMs <= eventSeriesFinishMs) {
        const count = (open.series?.count ?? 1) + 1;
        open.series = { count, lastObservedTime: rfc3339Micro(now) };
        open.lastObservedMs = now;
        this.#touch(key, open);
        // The first repeat is written at once; later ones once the refresh time has passed.
        if (count > 2 && now - open.writtenMs < eventSeriesRefreshMs) return;
        try {
          await this.#client
            .resource(eventsV1Events, open.namespace)
            .patch(open.name, { series: open.series }, { type: "merge" });
          open.writtenMs = now;
          return;
        } catch (error) {
          if (!isNotFound(error)) throw error;
          // The Event is gone (expired or deleted): start a new one.
        }
      }
      const namespace = event.regarding.namespace || "default";
      const created = await this.#client.resource(eventsV1Events, namespace).create({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: this.#eventName(event.regarding.name ?? "", now), namespace },
        eventTime: rfc3339Micro(now),
        reportingController: this.#controller,
        reportingInstance: this.#instance,
        action: event.action,
        reason: event.reason,
        regarding: event.regarding,
        ...(event.related === undefined ? {} : { related: event.related }),
        note: event.message,
        type: event.type,
      } satisfies EventsV1Event & KubeObject);
      this.#touch(key, {
        namespace,
        name: created.metadata?.name ?? "",
        series: undefined,
        lastObservedMs: now,
        writtenMs: now,
      });
    } catch (error) {
      try {
        this.#logger.error(
          {
            err: error,
            reason: event.reason,
            regarding: `${event.regarding.namespace ?? ""}/${event.regarding.name ?? ""}`,
          },
          "failed to write event",
        );
      } catch {
        // A throwing logger must not reject this write: later events for the key chain on it.
      }
    }
  }

  /** Remembers `open` as the most recently used. */
  #touch(key: string, open: OpenEvent): void {
    this.#open.delete(key);
    this.#open.set(key, open);
    if (this.#open.size > this.#maxCachedEvents) this.#open.delete(this.#open.keys().next().value!);
  }

  #eventName(objectName: string, now: number): string {
    return eventObjectName(objectName, now, this.#sequence++);
  }
}

/** Every field of a reference, in a fixed order. */
function referenceKey(ref: ObjectReference): string {
  return `${ref.apiVersion ?? ""}\u0001${ref.kind ?? ""}\u0001${ref.namespace ?? ""}\u0001${ref.name ?? ""}\u0001${ref.uid ?? ""}\u0001${ref.resourceVersion ?? ""}\u0001${ref.fieldPath ?? ""}`;
}
