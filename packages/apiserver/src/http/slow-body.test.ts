import * as http from "node:http";
import { connect, type Socket } from "node:net";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListenOptions } from "./server.js";

const servers: ApiServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: Omit<ListenOptions, "signal"> = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  servers.push(server);
  const listening = await server.listen(options);
  return { clock, listening, port: listening.port, host: new URL(listening.url).host };
}

/** A raw connection, with what it received and a promise of its close. */
async function open(port: number) {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  sockets.push(socket);
  let received = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve) => {
    socket.once("connect", () => resolve());
    socket.once("close", () => resolve());
  });
  return {
    socket,
    closed,
    get received() {
      return received;
    },
  };
}

function connectionCount(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** A body announced at 100 kB of which one byte is sent. */
const slowPost = (host: string, headers = "") =>
  `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${host}\r\n${headers}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;

describe("a slow-body flood", () => {
  it("cannot hold every connection slot: the oldest body still arriving gives way to a new client", async () => {
    // One address may hold every slot here: this is the overall cap's case.
    const { listening, port, host } = await start({
      maxConnections: 20,
      maxUnauthenticatedConnections: 20,
      maxUnauthenticatedConnectionsPerAddress: 20,
    });
    // Every slot taken by a request whose body never finishes (the loopback listener trusts them all).
    const cut: Promise<number>[] = [];
    for (let i = 0; i < 20; i++) {
      const connection = await open(port);
      cut.push(connection.closed.then(() => i));
      connection.socket.write(slowPost(host));
    }
    // Socket I/O, not a timer of the server's: give the server a moment to read every request's headers.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const legit = await fetch(`${listening.url}/api/v1/namespaces/default/configmaps`, {
      signal: AbortSignal.timeout(5_000),
    });
    expect(legit.status).toBe(200);
    // The slot came from the first slow body.
    expect(await Promise.race(cut)).toBe(0);
  });

  it("answers a body still arriving after bodyTimeoutMs with a 408 and closes its connection", async () => {
    const { clock, port, host } = await start();
    const connection = await open(port);
    connection.socket.write(slowPost(host));
    await vi.waitFor(() => expect(clock.pendingTimers().map((timer) => timer.in)).toContain(15_000));
    await clock.advance(15_000);
    await connection.closed;
    expect(connection.received.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(JSON.parse(connection.received.slice(connection.received.indexOf("\r\n\r\n") + 4))).toMatchObject({
      kind: "Status",
      code: 408,
      reason: "Timeout",
      message: "Timeout: the request body did not arrive within 15s",
    });
  });

  it("closes the connection of a request refused before its body was read: an anonymous 403 is not held open by a trickle", async () => {
    const { port, host } = await start({ token: "t0ken" });
    const connection = await open(port);
    connection.socket.write(slowPost(host));
    await connection.closed;
    expect(connection.received.split("\r\n")[0]).toBe("HTTP/1.1 403 Forbidden");
    expect(connection.received).toMatch(/\r\nConnection: close\r\n/i);
  });
});

describe("connections not yet authorized", () => {
  it("hold at most an eighth of maxConnections from one address, the oldest displaced", async () => {
    const { listening, port } = await start({ token: "t0ken", maxConnections: 64 });
    const flood = [];
    for (let i = 0; i < 40; i++) flood.push(await open(port));
    await vi.waitFor(async () => expect(await connectionCount(listening.server)).toBe(8));
    // The newest eight are the ones held.
    await Promise.all(flood.slice(0, 32).map((connection) => connection.closed));
    expect(flood.slice(32).every((connection) => !connection.socket.destroyed)).toBe(true);
    const answer = await fetch(`${listening.url}/api/v1/namespaces`, {
      headers: { authorization: "Bearer t0ken" },
      signal: AbortSignal.timeout(5_000),
    });
    expect(answer.status).toBe(200);
  });

  it("hold at most half of maxConnections, so authorized clients keep the other half", async () => {
    const { listening, port } = await start({
      token: "t0ken",
      maxConnections: 16,
      maxUnauthenticatedConnectionsPerAddress: 16,
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const get = () =>
      new Promise<{ code: number; reused: boolean }>((resolve, reject) => {
        const request = http.get(
          { port, path: "/api/v1/namespaces", agent, headers: { authorization: "Bearer t0ken" } },
          (response) => {
            response.resume();
            response.on("end", () =>
              resolve({ code: response.statusCode ?? 0, reused: request.reusedSocket }),
            );
          },
        );
        request.on("error", reject);
      });
    // Four authorized keep-alive connections.
    expect((await Promise.all([get(), get(), get(), get()])).map((answer) => answer.code)).toEqual([
      200, 200, 200, 200,
    ]);
    for (let i = 0; i < 30; i++) await open(port);
    await vi.waitFor(async () => expect(await connectionCount(listening.server)).toBe(4 + 8));
    const again = await Promise.all([get(), get(), get(), get()]);
    expect(again).toEqual(Array(4).fill({ code: 200, reused: true }));
    agent.destroy();
  });
});
