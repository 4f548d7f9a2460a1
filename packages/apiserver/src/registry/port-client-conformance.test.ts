import { MessageChannel } from "node:worker_threads";
import { isNotFound, isServiceUnavailable, type Pod, pods } from "@reconcile/api";
import { type Client, portClient, servePort } from "@reconcile/client";
import { describeClientConformance } from "@reconcile/client/testing";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

/** `served` (default: the server's own client) over a MessageChannel, as a worker thread reaches it. */
function overPort(server: ApiServer, served: Client = server.client()) {
  const { port1, port2 } = new MessageChannel();
  const stop = new AbortController();
  const serving = servePort(served, port1, { signal: stop.signal });
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
      await server.close();
    },
  };
}

/** Runs `test` with a fresh server served over a port, and closes both after it. */
async function withPort(
  test: (target: ReturnType<typeof overPort>) => Promise<void>,
  served?: (server: ApiServer) => Client,
) {
  const server = new ApiServer();
  const target = overPort(server, served?.(server));
  try {
    await test(target);
  } finally {
    await target.close();
  }
}

describeClientConformance("port client over a MessageChannel", async () => overPort(new ApiServer()));

describe("port client", () => {
  it("rejects with the server's StatusError", () =>
    withPort(async (target) => {
      const error = await target.client
        .resource(pods, "default")
        .get("missing")
        .catch((e: unknown) => e);
      expect(isNotFound(error)).toBe(true);
      expect((error as { status: { message: string } }).status.message).toBe('pods "missing" not found');
    }));

  it("ends a watch when the server stops serving and rejects later calls once closed", () =>
    withPort(async (target) => {
      const podClient = target.client.resource(pods, "default");
      const events = (await podClient.watch({}))[Symbol.asyncIterator]();
      await podClient.create({ metadata: { name: "a" }, spec: { containers: [{ name: "c", image: "i" }] } });
      const first = await events.next();
      expect(
        first.done ? undefined : `${first.value.type} ${(first.value.object as Pod).metadata?.name}`,
      ).toBe("ADDED a");
      target.stop.abort();
      expect(await events.next()).toEqual({ done: true, value: undefined });
      target.client.close();
      const error = await podClient.get("a").catch((e: unknown) => e);
      expect(isServiceUnavailable(error)).toBe(true);
    }));

  it("cancels a watch whose signal aborts, on both ends", async () => {
    // The served client hands out the signal each watch runs with on the serving side.
    const servedSignals: AbortSignal[] = [];
    const spying = (server: ApiServer): Client => ({
      resource: (descriptor, namespace) => {
        const inner = server.client().resource(descriptor, namespace);
        // Every other call runs on the real client (its private fields are not a proxy's).
        return new Proxy(inner, {
          get(target, property) {
            if (property === "watch")
              return (options: { signal: AbortSignal }) => {
                servedSignals.push(options.signal);
                return target.watch(options);
              };
            const value = Reflect.get(target, property);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      },
    });
    await withPort(async (target) => {
      const podClient = target.client.resource(pods, "default");
      const abort = new AbortController();
      const events = await podClient.watch({ signal: abort.signal });
      const reading = (async () => {
        const seen: string[] = [];
        for await (const event of events) seen.push(event.type);
        return seen;
      })();
      expect(servedSignals.map((signal) => signal.aborted)).toEqual([false]);
      abort.abort();
      expect(await reading).toEqual([]);
      // Another call still works after the cancel, and the cancel has reached the serving side by then.
      const list = await podClient.list();
      expect(list.items).toEqual([]);
      expect(servedSignals.map((signal) => signal.aborted)).toEqual([true]);
    }, spying);
  });
});

describe("port client and a long-lived signal", () => {
  it("leaves no listener on the signal once a call has settled or a watch has ended", () =>
    withPort(async (target) => {
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
    }));
});
