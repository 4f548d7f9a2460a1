import type * as http from "node:http";
import type { Socket } from "node:net";

/** Sockets that have carried an authorized request; the connection limit spares them longest. */
const authorizedSockets = new WeakSet<Socket>();

/** Records that `socket` carried an authorized request. */
export function markAuthorized(socket: Socket): void {
  authorizedSockets.add(socket);
}

/** Sockets whose request body is still arriving, in the order their bodies began. */
const readingBody = new Map<Socket, true>();

/**
 * Marks `socket` as reading a request body until the returned function is
 * called: nothing of that request has been done yet, so under a flood the
 * connection limit may cut it (a slow-body flood must not hold every slot).
 */
export function readingRequestBody(socket: Socket): () => void {
  readingBody.set(socket, true);
  return () => {
    readingBody.delete(socket);
  };
}

/**
 * Holds the number of open connections at a cap. A connection beyond it
 * displaces the oldest idle one (no request in flight), first among those
 * that never carried an authorized request; with none idle, the oldest one
 * still receiving a request body (nothing of that request has been done); with
 * neither it is refused. A flood of idle connections or of slow bodies so
 * cannot lock out clients, nor exhaust file descriptors, while connections
 * busy with requests being served or watches are never cut.
 */
export class ConnectionLimiter {
  readonly #max: number;
  /** Idle connections in the order they became idle (a Map keeps insertion order). */
  readonly #idle = new Map<Socket, true>();
  readonly #inFlight = new Map<Socket, number>();
  #open = 0;

  constructor(max: number) {
    if (!(Number.isInteger(max) && max >= 1))
      throw new RangeError(`maxConnections must be a positive integer, got ${max}`);
    this.#max = max;
  }

  accept(socket: Socket): void {
    if (this.#open >= this.#max) {
      const victim = this.#oldestIdle() ?? this.#oldestBodyReader();
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      this.#forget(victim);
      victim.destroy();
    }
    this.#open++;
    this.#idle.set(socket, true);
    socket.once("close", () => this.#forget(socket));
  }

  /** A request on `socket` runs until `response` closes. */
  busy(socket: Socket, response: http.ServerResponse): void {
    if (!this.#idle.delete(socket) && !this.#inFlight.has(socket)) return; // already displaced
    this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 0) + 1);
    response.once("close", () => {
      const left = (this.#inFlight.get(socket) ?? 1) - 1;
      if (left > 0) {
        this.#inFlight.set(socket, left);
        return;
      }
      if (!this.#inFlight.delete(socket) || socket.destroyed) return;
      this.#idle.set(socket, true);
    });
  }

  #oldestIdle(): Socket | undefined {
    let oldest: Socket | undefined;
    for (const socket of this.#idle.keys()) {
      if (!authorizedSockets.has(socket)) return socket;
      oldest ??= socket;
    }
    return oldest;
  }

  #oldestBodyReader(): Socket | undefined {
    let oldest: Socket | undefined;
    for (const socket of readingBody.keys()) {
      if (!this.#inFlight.has(socket)) continue; // another server's
      if (!authorizedSockets.has(socket)) return socket;
      oldest ??= socket;
    }
    return oldest;
  }

  #forget(socket: Socket): void {
    if (this.#idle.delete(socket) || this.#inFlight.delete(socket)) this.#open--;
  }
}
