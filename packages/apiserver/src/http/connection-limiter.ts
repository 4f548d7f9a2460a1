import type * as http from "node:http";
import type { Socket } from "node:net";

/** Sockets that have carried an authorized request; the connection limit spares them longest. */
const authorizedSockets = new WeakSet<Socket>();
/** The limiter that holds each socket, told when the socket is first authorized. */
const limiterOf = new WeakMap<Socket, ConnectionLimiter>();

/** Records that `socket` carried an authorized request. */
export function markAuthorized(socket: Socket): void {
  if (authorizedSockets.has(socket)) return;
  authorizedSockets.add(socket);
  limiterOf.get(socket)?.authorized(socket);
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

/** The caps a {@link ConnectionLimiter} holds. */
export interface ConnectionLimits {
  /** Connections open at once. */
  readonly max: number;
  /** Of them, connections that have not carried an authorized request yet. Default: half of `max`. */
  readonly unauthenticated?: number | undefined;
  /** Of those, connections from one client address. Default: an eighth of `max`. */
  readonly unauthenticatedPerAddress?: number | undefined;
}

/**
 * Holds the number of open connections at caps.
 *
 * Connections that have not carried an authorized request yet (new ones, and
 * those only refused) may hold at most half the slots, and at most an eighth
 * from one address: past either cap a new connection displaces the oldest
 * such one in that scope. Past the overall cap a new connection displaces the
 * oldest idle one (no request in flight), first among those never authorized;
 * with none idle, the oldest one still receiving a request body (nothing of
 * that request has been done); with neither it is refused. A flood of idle
 * connections or of slow bodies so cannot lock out clients, nor exhaust file
 * descriptors, while connections busy with requests being served or watches
 * are never cut.
 */
export class ConnectionLimiter {
  readonly #max: number;
  readonly #maxUnauthenticated: number;
  readonly #maxUnauthenticatedPerAddress: number;
  /** Idle connections in the order they became idle (a Map keeps insertion order). */
  readonly #idle = new Map<Socket, true>();
  readonly #inFlight = new Map<Socket, number>();
  /** Open connections never authorized, oldest first; and the same by client address. */
  readonly #unauthenticated = new Map<Socket, string>();
  readonly #unauthenticatedByAddress = new Map<string, Map<Socket, true>>();
  #open = 0;

  constructor(limits: number | ConnectionLimits) {
    const { max, unauthenticated, unauthenticatedPerAddress } =
      typeof limits === "number" ? { max: limits } : limits;
    this.#max = positive("maxConnections", max);
    this.#maxUnauthenticated = positive(
      "maxUnauthenticatedConnections",
      unauthenticated ?? Math.ceil(max / 2),
    );
    this.#maxUnauthenticatedPerAddress = positive(
      "maxUnauthenticatedConnectionsPerAddress",
      unauthenticatedPerAddress ?? Math.ceil(max / 8),
    );
  }

  accept(socket: Socket): void {
    const address = socket.remoteAddress ?? "";
    const fromAddress = this.#unauthenticatedByAddress.get(address);
    if (fromAddress !== undefined && fromAddress.size >= this.#maxUnauthenticatedPerAddress)
      this.#cut(fromAddress.keys().next().value as Socket);
    if (this.#unauthenticated.size >= this.#maxUnauthenticated)
      this.#cut(this.#unauthenticated.keys().next().value as Socket);
    if (this.#open >= this.#max) {
      const victim = this.#oldestIdle() ?? this.#oldestBodyReader();
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      this.#cut(victim);
    }
    this.#open++;
    this.#idle.set(socket, true);
    if (!authorizedSockets.has(socket)) {
      limiterOf.set(socket, this);
      this.#unauthenticated.set(socket, address);
      let sockets = this.#unauthenticatedByAddress.get(address);
      if (sockets === undefined) this.#unauthenticatedByAddress.set(address, (sockets = new Map()));
      sockets.set(socket, true);
    }
    socket.once("close", () => this.#forget(socket));
  }

  /** `socket` carried its first authorized request: it no longer counts against the unauthenticated caps. */
  authorized(socket: Socket): void {
    this.#untrack(socket);
  }

  #untrack(socket: Socket): void {
    const address = this.#unauthenticated.get(socket);
    if (address === undefined) return;
    this.#unauthenticated.delete(socket);
    const sockets = this.#unauthenticatedByAddress.get(address);
    sockets?.delete(socket);
    if (sockets?.size === 0) this.#unauthenticatedByAddress.delete(address);
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

  #cut(socket: Socket): void {
    this.#forget(socket);
    socket.destroy();
  }

  #forget(socket: Socket): void {
    this.#untrack(socket);
    if (this.#idle.delete(socket) || this.#inFlight.delete(socket)) this.#open--;
  }
}

function positive(name: string, value: number): number {
  if (!(Number.isInteger(value) && value >= 1))
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
