// The other end of a `portClient`: answers the calls that arrive on a port
// with a Client of this thread (the embedded API server's in-process client,
// or an HttpClient), and streams watches back.
import { newBadRequest, newInternalError, type Status, StatusError } from "@reconcile/api";
import type { Client, ResourceClient } from "../client.js";
import { type MessagePortLike, Outbox, optionsIndex, type Reply, type Request } from "./protocol.js";

export interface ServePortOptions {
  /** Stops answering: every call in flight is cancelled and every watch closed. */
  signal: AbortSignal;
}

/**
 * Serves `client` to the `portClient` at the other end of `port` until
 * `signal` aborts or the port closes; resolves once every call and watch
 * it started has settled.
 */
export async function servePort(
  client: Client,
  port: MessagePortLike,
  { signal }: ServePortOptions,
): Promise<void> {
  const outbox = new Outbox<Reply>(port);
  const resources = new Map<number, ResourceClient>();
  const running = new Map<number, AbortController>();
  const settled = new Set<Promise<void>>();

  const answer = (request: Request & { op: "call" }): Promise<void> => {
    const target = resources.get(request.rid);
    const method = target?.[request.verb as keyof ResourceClient];
    if (!(request.verb in optionsIndex) || typeof method !== "function") {
      outbox.send({
        id: request.id,
        ok: false,
        status: newBadRequest(`unsupported call ${request.verb}`).status,
      });
      return Promise.resolve();
    }
    const args = request.args;
    // Watches and lists run long enough to be worth cancelling; a cancelled
    // short call has already been rejected on the client's side.
    if (request.verb === "watch" || request.verb === "list") {
      const controller = new AbortController();
      running.set(request.id, controller);
      const at = optionsIndex[request.verb];
      args[at] = { ...(args[at] as object | undefined), signal: controller.signal };
    }
    const call = (method as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    const done =
      request.verb === "watch"
        ? stream(request.id, call as Promise<AsyncIterable<Reply & { event: unknown }>>)
        : call.then(
            (value) => outbox.send({ id: request.id, ok: true, value }),
            (error: unknown) => outbox.send({ id: request.id, ok: false, status: statusOf(error) }),
          );
    return done.finally(() => running.delete(request.id));
  };

  const stream = async (id: number, opening: Promise<AsyncIterable<unknown>>): Promise<void> => {
    let events: AsyncIterable<unknown>;
    try {
      events = await opening;
    } catch (error) {
      outbox.send({ id, ok: false, status: statusOf(error) });
      return;
    }
    outbox.send({ id, ok: true, value: undefined });
    try {
      for await (const event of events) outbox.send({ id, event } as Reply);
      outbox.send({ id, end: true });
    } catch (error) {
      outbox.send({ id, end: true, status: statusOf(error) });
    }
  };

  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onMessage = (message: unknown): void => {
    for (const request of message as Request[]) {
      if (request.op === "resource") {
        resources.set(request.rid, client.resource(request.resource, request.namespace));
      } else if (request.op === "cancel") {
        running.get(request.id)?.abort();
      } else {
        const done = answer(request);
        settled.add(done);
        void done.finally(() => settled.delete(done));
      }
    }
  };
  port.on("message", onMessage);
  port.on("close", stop);
  if (signal.aborted) stop();
  else signal.addEventListener("abort", stop, { once: true });
  await stopped;
  port.off("message", onMessage);
  port.off("close", stop);
  signal.removeEventListener("abort", stop);
  for (const controller of running.values()) controller.abort();
  await Promise.allSettled([...settled]);
  outbox.close();
}

function statusOf(error: unknown): Status {
  return (StatusError.isInstance(error) ? error : newInternalError(error)).status;
}
