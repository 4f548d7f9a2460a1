import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

const servers: ApiServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.close();
});

describe("a slow-body flood", () => {
  it("cannot hold every connection slot: the oldest body still arriving gives way to a new client", async () => {
    const server = new ApiServer();
    servers.push(server);
    const http = await server.listen({ maxConnections: 20 });
    const url = new URL(http.url);
    // Every slot taken by a request whose body never finishes (the loopback listener trusts them all).
    const cut: Promise<number>[] = [];
    for (let i = 0; i < 20; i++) {
      const socket = connect(Number(url.port), url.hostname);
      socket.on("error", () => {});
      sockets.push(socket);
      cut.push(new Promise((resolve) => socket.once("close", () => resolve(i))));
      socket.write(
        `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
    }
    // Socket I/O, not a timer of the server's: give the server a moment to read every request's headers.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const legit = await fetch(`${http.url}/api/v1/namespaces/default/configmaps`, {
      signal: AbortSignal.timeout(5_000),
    });
    expect(legit.status).toBe(200);
    // The slot came from the first slow body.
    expect(await Promise.race(cut)).toBe(0);
  });
});
