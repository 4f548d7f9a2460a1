// The messages between a `portClient` and the `servePort` that answers it.
// Each side posts arrays of messages (one array per burst of synchronous
// sends), structured-cloned by the port; objects travel as themselves.
import type { ResourceDescriptor, Status, WatchEvent } from "@reconcile/api";

/**
 * The part of a `MessagePort` (`node:worker_threads`, or a `MessageChannel`'s
 * end) that the transport uses.
 */
export interface MessagePortLike {
  postMessage(message: unknown): void;
  on(event: "message" | "close", listener: (message: unknown) => void): unknown;
  off(event: "message" | "close", listener: (message: unknown) => void): unknown;
}

/** The calls of a `ResourceClient` that travel, and where each takes its options. */
export const optionsIndex = {
  list: 0,
  watch: 0,
  deleteCollection: 0,
  get: 1,
  create: 1,
  update: 1,
  updateStatus: 1,
  finalize: 1,
  delete: 1,
  getScale: 1,
  patch: 2,
  updateScale: 2,
} as const;

export type Verb = keyof typeof optionsIndex;

export type Request =
  /** Names a resource client (a descriptor and a namespace) once; calls then refer to `rid`. */
  | { op: "resource"; rid: number; resource: ResourceDescriptor; namespace: string | undefined }
  | { op: "call"; id: number; rid: number; verb: Verb; args: unknown[] }
  | { op: "cancel"; id: number };

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; status: Status }
  /** A watch's next event. */
  | { id: number; event: WatchEvent }
  /** A watch ended: by the server, or with an error. */
  | { id: number; end: true; status?: Status };

/**
 * Posts messages in arrays, one per turn of the event loop's microtasks: a
 * burst of sends (a list's worth of watch events) costs one post.
 */
export class Outbox<M> {
  #pending: M[] = [];
  readonly #port: MessagePortLike;
  #closed = false;

  constructor(port: MessagePortLike) {
    this.#port = port;
  }

  send(message: M): void {
    if (this.#closed) return;
    this.#pending.push(message);
    if (this.#pending.length === 1) queueMicrotask(this.#flush);
  }

  close(): void {
    this.#flush();
    this.#closed = true;
  }

  readonly #flush = (): void => {
    if (this.#pending.length === 0 || this.#closed) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#port.postMessage(batch);
  };
}

/** Options without their `signal`, which cannot cross a port. */
export function withoutSignal(options: unknown): unknown {
  if (options === null || typeof options !== "object" || !("signal" in options)) return options;
  const { signal: _signal, ...rest } = options as { signal?: unknown };
  return rest;
}
