import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { FaultProxy, type FaultProxyOptions } from "./fault-proxy.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

interface Upstream {
  url: string;
  /** `METHOD path body` of every request the server received. */
  seen: string[];
  /** Open watch responses, to write events into. */
  watches: http.ServerResponse[];
}

/** A server that answers `{"ok":true,"path":...}`, and holds `?watch=true` requests open. */
async function upstream(): Promise<Upstream> {
  const seen: string[] = [];
  const watches: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`.trim());
      if (req.url?.includes("watch=true")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        watches.push(res);
        return;
      }
      res.writeHead(201, { "content-type": "application/json", "x-answer": "yes" });
      res.end(JSON.stringify({ ok: true, path: req.url, padding: "x".repeat(200) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, watches };
}

async function proxyFor(target: string, options: Partial<FaultProxyOptions> = {}): Promise<FaultProxy> {
  const proxy = await FaultProxy.start({ target, ...options });
  closers.push(() => proxy.close());
  return proxy;
}

interface Outcome {
  code?: number;
  headers?: http.IncomingHttpHeaders;
  body: string;
  /** The error the request or the response body failed with. */
  error?: string;
}

/** Sends one request on a fresh connection and collects whatever comes back. */
function send(url: string, path: string, method = "POST", body = "{}"): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(`${url}${path}`, { method, agent: false });
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ body: "", error: error.code ?? error.message }),
    );
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      const outcome = (): Outcome => ({
        code: response.statusCode ?? 0,
        headers: response.headers,
        body: Buffer.concat(chunks).toString(),
      });
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve(outcome()));
      response.on("error", (error: NodeJS.ErrnoException) =>
        resolve({ ...outcome(), error: error.code ?? error.message }),
      );
    });
    request.end(body);
  });
}

/** Lets I/O run until `condition` holds (no timers involved). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition never held");
}

describe("FaultProxy", () => {
  it("passes requests and answers through untouched when no fault is set", async () => {
    const server = await upstream();
    const proxy = await proxyFor(server.url);
    const outcome = await send(proxy.url, "/api/v1/pods?limit=1", "POST", '{"a":1}');
    expect(outcome.code).toBe(201);
    expect(outcome.headers?.["x-answer"]).toBe("yes");
    expect(JSON.parse(outcome.body)).toMatchObject({ ok: true, path: "/api/v1/pods?limit=1" });
    expect(server.seen).toEqual(['POST /api/v1/pods?limit=1 {"a":1}']);
    expect(proxy.counts.none).toBe(1);
  });

  it("reset: the connection is reset and nothing reaches the server", async () => {
    const server = await upstream();
    const proxy = await proxyFor(server.url, { faults: { reset: 1 } });
    expect(await send(proxy.url, "/x")).toEqual({ body: "", error: "ECONNRESET" });
    expect(server.seen).toEqual([]);
    expect(proxy.counts.reset).toBe(1);
  });

  it.each([
    ["serverError", 500, "InternalError", undefined],
    ["unavailable", 503, "ServiceUnavailable", "7"],
    ["tooManyRequests", 429, "TooManyRequests", "7"],
  ] as const)("%s: answers %i with a Status and Retry-After %s, without forwarding", async (kind, code, reason, retryAfter) => {
    const server = await upstream();
    const proxy = await proxyFor(server.url, { faults: { [kind]: 1 }, retryAfterSeconds: 7 });
    const outcome = await send(proxy.url, "/x");
    expect(outcome.code).toBe(code);
    expect(outcome.headers?.["retry-after"]).toBe(retryAfter);
    expect(JSON.parse(outcome.body)).toMatchObject({ kind: "Status", code, reason });
    expect(server.seen).toEqual([]);
  });

  it("dropResponse: the server applies the request, then the connection is reset", async () => {
    const server = await upstream();
    const proxy = await proxyFor(server.url, { faults: { dropResponse: 1 } });
    expect(await send(proxy.url, "/x", "POST", '{"b":2}')).toEqual({ body: "", error: "ECONNRESET" });
    expect(server.seen).toEqual(['POST /x {"b":2}']);
  });

  it("truncate: the headers and part of the body arrive, then the connection is reset", async () => {
    const server = await upstream();
    const proxy = await proxyFor(server.url, { faults: { truncate: 1 }, seed: 7 });
    for (let i = 0; i < 5; i++) {
      const outcome = await send(proxy.url, "/x");
      expect(outcome.error).toMatch(/ECONNRESET|aborted/);
      const full = JSON.stringify({ ok: true, path: "/x", padding: "x".repeat(200) });
      expect(full.startsWith(outcome.body)).toBe(true);
      expect(outcome.body.length).toBeLessThan(full.length);
    }
    expect(server.seen).toHaveLength(5);
  });

  it("stall: part of the body arrives, the rest only after the stall or on heal", async () => {
    const server = await upstream();
    const clock = new FakeClock();
    const proxy = await proxyFor(server.url, { faults: { stall: 1 }, clock, maxStallMs: 1000 });
    let done = false;
    const first = send(proxy.url, "/x").then((outcome) => {
      done = true;
      return outcome;
    });
    await until(() => clock.pendingTimers().length === 1);
    expect(clock.pendingTimers()[0]!.at).toBeLessThanOrEqual(1000);
    expect(done).toBe(false);
    await clock.advance(1000);
    expect(JSON.parse((await first).body)).toMatchObject({ ok: true });

    const second = send(proxy.url, "/y");
    await until(() => clock.pendingTimers().length === 1);
    proxy.heal();
    expect(clock.pendingTimers()).toEqual([]);
    expect(JSON.parse((await second).body)).toMatchObject({ ok: true, path: "/y" });
  });

  it("cutWatch: a watch streams until its time is up, then is reset; heal cancels pending cuts", async () => {
    const server = await upstream();
    const clock = new FakeClock();
    const proxy = await proxyFor(server.url, { faults: { cutWatch: 1 }, clock, maxWatchLifeMs: 5000 });
    const received: string[] = [];
    let ended: string | undefined;
    const open = (path: string) =>
      new Promise<void>((resolve) => {
        const request = http.get(`${proxy.url}${path}`, { agent: false }, (response) => {
          response.on("data", (chunk: Buffer) => received.push(chunk.toString()));
          response.on("error", (error: NodeJS.ErrnoException) => (ended = error.code ?? error.message));
          resolve();
        });
        request.on("error", (error: NodeJS.ErrnoException) => (ended = error.code ?? error.message));
      });
    await open("/api/v1/pods?watch=true");
    await until(() => server.watches.length === 1 && clock.pendingTimers().length === 1);
    server.watches[0]!.write('{"type":"ADDED"}\n');
    await until(() => received.length === 1);
    await clock.advance(5000);
    await until(() => ended !== undefined);
    expect(ended).toMatch(/ECONNRESET|aborted/);

    // A plain request never draws cutWatch; a second watch's pending cut is cancelled by heal.
    expect((await send(proxy.url, "/x")).code).toBe(201);
    await open("/api/v1/pods?watch=true");
    await until(() => server.watches.length === 2 && clock.pendingTimers().length === 1);
    proxy.heal();
    expect(clock.pendingTimers()).toEqual([]);
    server.watches[1]!.write('{"type":"MODIFIED"}\n');
    await until(() => received.length === 2);
    expect(received).toEqual(['{"type":"ADDED"}\n', '{"type":"MODIFIED"}\n']);
  });

  it("draws the same faults for the same seed, and none after heal", async () => {
    const server = await upstream();
    const faults = { reset: 0.3, serverError: 0.3 };
    const outcomes = async (proxy: FaultProxy) => {
      const codes: (number | string | undefined)[] = [];
      for (let i = 0; i < 12; i++) {
        const outcome = await send(proxy.url, "/x");
        codes.push(outcome.error ?? outcome.code);
      }
      return codes;
    };
    const first = await outcomes(await proxyFor(server.url, { faults, seed: 42 }));
    const second = await outcomes(await proxyFor(server.url, { faults, seed: 42 }));
    expect(second).toEqual(first);
    expect(new Set(first)).toEqual(new Set(["ECONNRESET", 500, 201]));
    const healed = await proxyFor(server.url, { faults, seed: 42 });
    healed.heal();
    expect(await outcomes(healed)).toEqual(Array(12).fill(201));
  });

  it("rejects rates outside [0, 1] and rates that add up to more than 1", async () => {
    const server = await upstream();
    await expect(FaultProxy.start({ target: server.url, faults: { reset: 1.5 } })).rejects.toThrow(
      "the rate of reset must be in [0, 1], got 1.5",
    );
    const proxy = await proxyFor(server.url);
    expect(() => proxy.setFaults({ reset: 0.6, truncate: 0.6 })).toThrow(
      "the fault rates add up to 1.2, more than 1",
    );
  });
});
