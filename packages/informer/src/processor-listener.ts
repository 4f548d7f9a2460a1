import type { DeepReadonly, DeletedFinalStateUnknown } from "@reconcile/api";
import { RingBuffer } from "./ring-buffer.js";

/**
 * What an informer calls on a change (client-go's `ResourceEventHandler`).
 * Each handler gets its notifications one at a time, in order; if a method
 * returns a promise, the next notification waits for it (only this
 * handler's). Objects are the cache's own: read-only.
 */
export interface ResourceEventHandler<T> {
  /** A new object; `isInInitialList` is true for objects of the first list (and for a handler added later, for every cached object). */
  onAdd?(obj: DeepReadonly<T>, isInInitialList: boolean): unknown;
  /** A changed object, or on resync/relist an unchanged one (`oldObj === newObj` by resourceVersion). */
  onUpdate?(oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>): unknown;
  /** A deleted object, or a tombstone when the delete itself was missed (the watch was down). */
  onDelete?(obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>): unknown;
}

/** Which handler method failed, for error reports. */
export type HandlerMethod = "onAdd" | "onUpdate" | "onDelete";

/** A notification for listeners: one object per change, shared by every listener. */
export interface Notification<T> {
  readonly method: HandlerMethod;
  readonly oldObj: DeepReadonly<T> | undefined;
  readonly obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>;
  readonly isInInitialList: boolean;
}

/**
 * What a handler is being told about, while it runs: the informer, the
 * change, and the object's key and resourceVersion. A controller that
 * enqueues a key from a handler records it as the reconcile's trigger: the
 * link from a write (its resourceVersion) to the reconcile it caused.
 */
export interface Delivery {
  /** The informer's name (its resource's plural). */
  readonly informer: string;
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  readonly key: string;
  readonly resourceVersion: string;
  /** Part of the first list (or a replay to a handler added late), not a change. */
  readonly initial: boolean;
}

// The notification being handed to a handler, set around each synchronous call.
let delivering: Notification<unknown> | undefined;
let deliveringInformer = "";

/**
 * The change the running event handler was called with, or undefined
 * outside a handler (and after a handler's first `await`). Built when
 * asked, so delivery itself allocates nothing.
 */
export function currentDelivery(): Delivery | undefined {
  const n = delivering;
  if (n === undefined) return undefined;
  const obj = n.obj as {
    key?: string;
    obj?: unknown;
    metadata?: { namespace?: string; name?: string; resourceVersion?: string };
  };
  // A tombstone carries its key and the last state the informer knew.
  const meta = obj.metadata ?? (obj.obj as { metadata?: typeof obj.metadata } | undefined)?.metadata ?? {};
  const key =
    typeof obj.key === "string"
      ? obj.key
      : meta.namespace
        ? `${meta.namespace}/${meta.name}`
        : (meta.name ?? "");
  return {
    informer: deliveringInformer,
    type: n.method === "onAdd" ? "ADDED" : n.method === "onUpdate" ? "MODIFIED" : "DELETED",
    key,
    resourceVersion: meta.resourceVersion ?? "",
    initial: n.isInInitialList,
  };
}

/**
 * One handler's own queue and delivery loop (client-go's `processorListener`):
 * an unbounded ring buffer, so a slow handler delays only itself.
 */
export class ProcessorListener<T> {
  readonly handler: ResourceEventHandler<T>;
  /** The period asked for; 0 means never. */
  readonly requestedResyncPeriodMs: number;
  /** The period in effect (see `determineResyncPeriod`). */
  resyncPeriodMs: number;
  nextResyncAt: number;
  /** Whether the current resync round includes this listener. */
  syncing = true;
  readonly #buffer = new RingBuffer<Notification<T>>(1024);
  readonly #onError: (error: unknown, method: HandlerMethod) => void;
  readonly #informer: string;
  #pendingInitial = 0;
  #wake: (() => void) | undefined;
  #stopped = false;
  #done: Promise<void> | undefined;

  constructor(
    handler: ResourceEventHandler<T>,
    requestedResyncPeriodMs: number,
    resyncPeriodMs: number,
    now: number,
    onError: (error: unknown, method: HandlerMethod) => void,
    informer = "",
  ) {
    this.handler = handler;
    this.#informer = informer;
    this.requestedResyncPeriodMs = requestedResyncPeriodMs;
    this.resyncPeriodMs = resyncPeriodMs;
    this.nextResyncAt = now + resyncPeriodMs;
    this.#onError = onError;
  }

  /** Notifications queued and not yet handled. */
  get pending(): number {
    return this.#buffer.length;
  }

  /** True once every initial-list add queued to this listener has been handled. */
  initialDelivered(): boolean {
    return this.#pendingInitial === 0;
  }

  add(notification: Notification<T>): void {
    if (this.#stopped) return;
    if (notification.isInInitialList) this.#pendingInitial++;
    this.#buffer.push(notification);
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake();
    }
  }

  shouldResync(now: number): boolean {
    return this.resyncPeriodMs !== 0 && now >= this.nextResyncAt;
  }

  determineNextResync(now: number): void {
    this.nextResyncAt = now + this.resyncPeriodMs;
  }

  /** Starts delivering; the promise settles after `stop()` once the handler call in flight has returned. */
  start(): Promise<void> {
    this.#done ??= this.#run();
    return this.#done;
  }

  /** Stops delivering; notifications not yet handled are dropped. */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#buffer.clear();
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
    return this.#done ?? Promise.resolve();
  }

  async #run(): Promise<void> {
    // Never call the handler from inside start() (e.g. inside addEventHandler).
    await undefined;
    while (!this.#stopped) {
      const notification = this.#buffer.shift();
      if (notification === undefined) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        continue;
      }
      try {
        const result = this.#dispatch(notification);
        if (isPromiseLike(result)) await result;
      } catch (error) {
        this.#report(error, notification.method);
      } finally {
        if (notification.isInInitialList) this.#pendingInitial--;
      }
    }
  }

  #dispatch(n: Notification<T>): unknown {
    const handler = this.handler;
    delivering = n as Notification<unknown>;
    deliveringInformer = this.#informer;
    try {
      switch (n.method) {
        case "onAdd":
          return handler.onAdd?.(n.obj as DeepReadonly<T>, n.isInInitialList);
        case "onUpdate":
          return handler.onUpdate?.(n.oldObj as DeepReadonly<T>, n.obj as DeepReadonly<T>);
        case "onDelete":
          return handler.onDelete?.(n.obj);
      }
    } finally {
      delivering = undefined;
    }
  }

  #report(error: unknown, method: HandlerMethod): void {
    try {
      this.#onError(error, method);
    } catch {
      // A failing error reporter must not stop delivery.
    }
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
