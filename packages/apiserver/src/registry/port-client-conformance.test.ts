import { MessageChannel } from "node:worker_threads";
import { isNotFound, isServiceUnavailable, type Pod, pods } from "@reconcile/api";
import { portClient, servePort } from "@reconcile/client";
import { describeClientConformance } from "@reconcile/client/testing";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

/** The in-process client served over a MessageChannel, as a worker thread reaches it. */
function overPort(server: ApiServer) {
  const { port1, port2 } = new MessageChannel();
  const stop = new AbortController();
  const serving = servePort(server.client(), port1, { signal: stop.signal });
  const client = portClient(port2);
  return {
    client,
    stop,
    async close() {
      stop.abort();
      await serving;
      client.close();
      port1.close();
      port2.close();
    },
  };
}

describeClientConformance("port client over a MessageChannel", async () => {
  const server = new ApiServer();
  const target = overPort(server);
  return {
    client: target.client,
    async close() {
      await target.close();
      await server.close();
    },
  };
});

describe("port client", () => {
  it("rejects with the server's StatusError", async () => {
    const server = new ApiServer();
    const target = overPort(server);
    const error = await target.client
      .resource(pods, "default")
      .get("missing")
      .catch((e: unknown) => e);
    expect(isNotFound(error)).toBe(true);
    expect((error as { status: { message: string } }).status.message).toBe('pods "missing" not found');
    await target.close();
    await server.close();
  });

  it("ends a watch when the server stops serving and rejects later calls once closed", async () => {
    const server = new ApiServer();
    const target = overPort(server);
    const podClient = target.client.resource(pods, "default");
    const events = await podClient.watch({});
    await podClient.create({ metadata: { name: "a" }, spec: { containers: [{ name: "c", image: "i" }] } });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of events) seen.push(`${event.type} ${(event.object as Pod).metadata?.name}`);
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    target.stop.abort();
    await reading;
    expect(seen).toEqual(["ADDED a"]);
    target.client.close();
    const error = await podClient.get("a").catch((e: unknown) => e);
    expect(isServiceUnavailable(error)).toBe(true);
    await target.close();
    await server.close();
  });

  it("cancels a watch whose signal aborts, on both ends", async () => {
    const server = new ApiServer();
    const target = overPort(server);
    const podClient = target.client.resource(pods, "default");
    const abort = new AbortController();
    const events = await podClient.watch({ signal: abort.signal });
    const reading = (async () => {
      const seen: string[] = [];
      for await (const event of events) seen.push(event.type);
      return seen;
    })();
    abort.abort();
    expect(await reading).toEqual([]);
    // Another call still works after the cancel.
    const list = await podClient.list();
    expect(list.items).toEqual([]);
    await target.close();
    await server.close();
  });
});

describe("port client and a long-lived signal", () => {
  it("leaves no listener on the signal once a call has settled or a watch has ended", async () => {
    const server = new ApiServer();
    const target = overPort(server);
    const podClient = target.client.resource(pods, "default");
    const run = new AbortController();
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const add = run.signal.addEventListener.bind(run.signal);
    const remove = run.signal.removeEventListener.bind(run.signal);
    run.signal.addEventListener = ((type: string, listener: unknown, options: unknown) => {
      added.push(listener);
      add(type, listener as () => void, options as { once?: boolean });
    }) as typeof run.signal.addEventListener;
    run.signal.removeEventListener = ((type: string, listener: unknown) => {
      removed.push(listener);
      remove(type, listener as () => void);
    }) as typeof run.signal.removeEventListener;
    for (let i = 0; i < 5; i++) await podClient.list({ signal: run.signal });
    await podClient.get("missing", { signal: run.signal }).catch(() => undefined);
    const events = await podClient.watch({ signal: run.signal });
    expect(removed.length).toBe(6);
    target.stop.abort();
    for await (const _ of events);
    expect(new Set(removed)).toEqual(new Set(added));
    expect(added.length).toBe(7);
    await target.close();
    await server.close();
  });
});
