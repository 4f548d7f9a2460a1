// A Client whose calls travel over a MessagePort to a `servePort` on the
// other end: how a worker thread (or any isolate) reaches the API server of
// the thread that started it, with no HTTP, no JSON and no authentication in
// between. Objects are structured-cloned, so each side owns its copies.
import {
  type KubeObject,
  newServiceUnavailable,
  type ResourceDescriptor,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import type { Client, ResourceClient } from "../client.js";
import {
  type MessagePortLike,
  Outbox,
  optionsIndex,
  type Reply,
  type Request,
  type Verb,
  withoutSignal,
} from "./protocol.js";

/** A {@link Client} over a port, which it stops using on `close()`. */
export interface PortClient extends Client {
  /** Rejects every call still waiting and ends every watch; later calls reject. */
  close(): void;
}

/** See the file comment. The other end must be served by `servePort`. */
export function portClient(port: MessagePortLike): PortClient {
  return new PortConnection(port);
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set for a watch: where its events go once it is established. */
  stream?: WatchStream | undefined;
}

class PortConnection implements PortClient {
  readonly #port: MessagePortLike;
  readonly #outbox: Outbox<Request>;
  readonly #rids = new Map<string, number>();
  readonly #pending = new Map<number, Pending>();
  readonly #watches = new Map<number, WatchStream>();
  #nextId = 1;
  #closed: StatusError | undefined;

  constructor(port: MessagePortLike) {
    this.#port = port;
    this.#outbox = new Outbox(port);
    port.on("message", this.#onMessage);
    port.on("close", this.#onClose);
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    const key = `${resource.group}/${resource.version}/${resource.plural}\0${namespace ?? ""}`;
    let rid = this.#rids.get(key);
    if (rid === undefined) {
      rid = this.#nextId++;
      this.#rids.set(key, rid);
      const { __type: _type, ...descriptor } = resource;
      this.#outbox.send({ op: "resource", rid, resource: descriptor, namespace });
    }
    const id = rid;
    const call =
      (verb: Verb) =>
      (...args: unknown[]) =>
        this.#call(id, verb, args);
    return {
      resource,
      namespace,
      list: call("list"),
      watch: call("watch"),
      get: call("get"),
      create: call("create"),
      update: call("update"),
      updateStatus: call("updateStatus"),
      finalize: call("finalize"),
      patch: call("patch"),
      delete: call("delete"),
      deleteCollection: call("deleteCollection"),
      getScale: call("getScale"),
      updateScale: call("updateScale"),
    } as unknown as ResourceClient<T>;
  }

  close(): void {
    this.#shut(newServiceUnavailable("the client was closed"));
  }

  #call(rid: number, verb: Verb, args: unknown[]): Promise<unknown> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    const at = optionsIndex[verb];
    const options = args[at] as { signal?: AbortSignal } | undefined;
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    args[at] = withoutSignal(options);
    return new Promise((resolve, reject) => {
      if (signal === undefined) {
        this.#pending.set(id, {
          resolve,
          reject,
          stream: verb === "watch" ? new WatchStream(() => this.#cancel(id)) : undefined,
        });
        this.#outbox.send({ op: "call", id, rid, verb, args });
        return;
      }
      // The signal's listener goes when the call settles (or its watch ends): a
      // component's long-lived signal would otherwise gather one per call.
      const onAbort = () => {
        const waiting = this.#pending.get(id);
        if (waiting !== undefined) {
          this.#pending.delete(id);
          this.#cancel(id);
          waiting.reject(signal.reason);
          return;
        }
        // An established watch: stop it on the serving side too, then end it here.
        const stream = this.#watches.get(id);
        if (stream === undefined) return;
        this.#cancel(id);
        stream.end(undefined);
      };
      const forget = () => signal.removeEventListener("abort", onAbort);
      const stream = verb === "watch" ? new WatchStream(() => this.#cancel(id), forget) : undefined;
      this.#pending.set(id, {
        resolve: (value) => {
          if (stream === undefined) forget();
          resolve(value);
        },
        reject: (error) => {
          forget();
          reject(error);
        },
        stream,
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.#outbox.send({ op: "call", id, rid, verb, args });
    });
  }

  #cancel(id: number): void {
    this.#watches.delete(id);
    if (this.#closed === undefined) this.#outbox.send({ op: "cancel", id });
  }

  readonly #onMessage = (message: unknown): void => {
    for (const reply of message as Reply[]) {
      if ("event" in reply) {
        this.#watches.get(reply.id)?.push(reply.event);
      } else if ("end" in reply) {
        const stream = this.#watches.get(reply.id);
        this.#watches.delete(reply.id);
        stream?.end(reply.status === undefined ? undefined : new StatusError(reply.status));
      } else {
        const pending = this.#pending.get(reply.id);
        if (pending === undefined) continue;
        this.#pending.delete(reply.id);
        if (!reply.ok) {
          pending.reject(new StatusError(reply.status));
        } else if (pending.stream !== undefined) {
          this.#watches.set(reply.id, pending.stream);
          pending.resolve(pending.stream);
        } else {
          pending.resolve(reply.value);
        }
      }
    }
  };

  readonly #onClose = (): void => {
    this.#shut(newServiceUnavailable("the connection to the API server closed"));
  };

  #shut(error: StatusError): void {
    if (this.#closed !== undefined) return;
    this.#closed = error;
    this.#outbox.close();
    this.#port.off("message", this.#onMessage);
    this.#port.off("close", this.#onClose);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const stream of this.#watches.values()) stream.end(undefined);
    this.#watches.clear();
  }
}

/** A watch's events as an async iterable: buffered until read, ended by the server, the reader or an abort. */
class WatchStream implements AsyncIterable<WatchEvent> {
  #events: WatchEvent[] = [];
  #head = 0;
  #ended = false;
  #error: StatusError | undefined;
  #wake: (() => void) | undefined;
  readonly #onReturn: () => void;
  readonly #onEnd: (() => void) | undefined;

  /** `onReturn` when the reader stops first; `onEnd` whenever the stream ends. */
  constructor(onReturn: () => void, onEnd?: () => void) {
    this.#onReturn = onReturn;
    this.#onEnd = onEnd;
  }

  push(event: WatchEvent): void {
    if (this.#ended) return;
    this.#events.push(event);
    this.#wake?.();
  }

  end(error: StatusError | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#onEnd?.();
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    try {
      while (true) {
        if (this.#head < this.#events.length) {
          const event = this.#events[this.#head++]!;
          if (this.#head === this.#events.length) {
            this.#events = [];
            this.#head = 0;
          }
          yield event;
          continue;
        }
        if (this.#ended) {
          if (this.#error !== undefined) throw this.#error;
          return;
        }
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      if (!this.#ended) {
        this.#ended = true;
        this.#onEnd?.();
        this.#onReturn();
      }
    }
  }
}
