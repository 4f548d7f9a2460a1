// One client of the HTTP benchmark, in its own process so that its CPU time is
// its own: `client.ts <ours|client-node>`, with the kubeconfig in the
// BENCH_KUBECONFIG environment variable. It answers the parent's messages:
//   { kind: "list", limit? }        lists every pod (in pages of `limit` if given)
//   { kind: "watch", resourceVersion, expected }
//                                   opens a watch from resourceVersion, answers
//                                   { kind: "watching" } once the server has
//                                   answered, then { kind: "watched", ... } once
//                                   `expected` events have arrived.
//   { kind: "stop" }                exits.
import { CoreV1Api, KubeConfig, Watch } from "@kubernetes/client-node";
import { type Pod, pods } from "@reconcile/api";
import { HttpClient } from "../../../client/src/http/http-client.js";

export type Implementation = "ours" | "client-node";

export type ClientRequest =
  | { kind: "list"; limit?: number | undefined }
  | { kind: "watch"; resourceVersion: string; expected: number }
  | { kind: "stop" };

export type ClientMessage =
  | { kind: "started" }
  | { kind: "listed"; wallMs: number; cpuMs: number; count: number; pages: number }
  | { kind: "watching" }
  | {
      kind: "watched";
      /** From the first event received to the last. */
      wallMs: number;
      /** CPU of the whole process from opening the watch to the last event. */
      cpuMs: number;
      count: number;
      /** Every event MODIFIED, resourceVersions strictly increasing, each pod seen once. */
      inOrder: boolean;
      distinctPods: number;
      firstResourceVersion: string;
      lastResourceVersion: string;
    }
  | { kind: "failed"; message: string };

const implementation = process.argv[2] as Implementation;
if (implementation !== "ours" && implementation !== "client-node") {
  throw new Error("usage: client.ts <ours|client-node>");
}
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(process.env.BENCH_KUBECONFIG ?? "");

// Ours without its client-side rate limit: client-node has none, and 200 pages at 5 QPS would measure the limiter.
const ours = new HttpClient({ kubeConfig, qps: Number.POSITIVE_INFINITY });
const core = kubeConfig.makeApiClient(CoreV1Api);

function send(message: ClientMessage): void {
  process.send?.(message);
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function list(limit: number | undefined): Promise<void> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  let count = 0;
  let pages = 0;
  let token: string | undefined;
  do {
    if (implementation === "ours") {
      const page = await ours.resource(pods).list({ limit, continue: token });
      count += page.items.length;
      token = page.metadata.continue || undefined;
    } else {
      const page = await core.listPodForAllNamespaces({
        ...(limit === undefined ? {} : { limit }),
        ...(token === undefined ? {} : { _continue: token }),
      });
      count += page.items.length;
      token = page.metadata?._continue || undefined;
    }
    pages++;
  } while (token !== undefined);
  send({ kind: "listed", wallMs: performance.now() - start, cpuMs: cpuMsSince(cpu), count, pages });
}

/** Checks each event as it arrives and reports once `expected` have. */
class WatchCheck {
  count = 0;
  inOrder = true;
  firstResourceVersion = "";
  lastResourceVersion = "";
  private readonly names = new Set<string>();
  private last = -1;
  private first = 0;
  private readonly cpu = process.cpuUsage();
  private readonly expected: number;
  private readonly onDone: () => void;

  constructor(expected: number, onDone: () => void) {
    this.expected = expected;
    this.onDone = onDone;
  }

  event(type: string, received: unknown): void {
    const now = performance.now();
    const object = received as Pod;
    if (this.count === 0) {
      this.first = now;
      this.firstResourceVersion = object.metadata?.resourceVersion ?? "";
    }
    this.count++;
    const resourceVersion = Number(object.metadata?.resourceVersion);
    if (type !== "MODIFIED" || !(resourceVersion > this.last)) this.inOrder = false;
    this.last = resourceVersion;
    this.names.add(object.metadata?.name ?? "");
    if (this.count === this.expected) {
      this.lastResourceVersion = object.metadata?.resourceVersion ?? "";
      send({
        kind: "watched",
        wallMs: now - this.first,
        cpuMs: cpuMsSince(this.cpu),
        count: this.count,
        inOrder: this.inOrder,
        distinctPods: this.names.size,
        firstResourceVersion: this.firstResourceVersion,
        lastResourceVersion: this.lastResourceVersion,
      });
      this.onDone();
    }
  }
}

async function watch(resourceVersion: string, expected: number): Promise<void> {
  if (implementation === "ours") {
    const stop = new AbortController();
    const check = new WatchCheck(expected, () => stop.abort());
    const events = await ours.resource(pods).watch({ resourceVersion, signal: stop.signal });
    send({ kind: "watching" });
    for await (const event of events) {
      check.event(event.type, event.object);
      if (check.count >= expected) break;
    }
  } else {
    let controller: AbortController | undefined;
    let done = false;
    const check = new WatchCheck(expected, () => {
      done = true;
      controller?.abort();
    });
    controller = await new Watch(kubeConfig).watch(
      "/api/v1/pods",
      { resourceVersion },
      (type, object) => check.event(type, object),
      (error) => {
        if (!done && error) send({ kind: "failed", message: `client-node watch ended: ${String(error)}` });
      },
    );
    send({ kind: "watching" });
  }
}

process.on("message", (message: ClientRequest) => {
  const run =
    message.kind === "list"
      ? list(message.limit)
      : message.kind === "watch"
        ? watch(message.resourceVersion, message.expected)
        : Promise.resolve(process.exit(0));
  run.catch((error: unknown) => send({ kind: "failed", message: String(error) }));
});
send({ kind: "started" });
