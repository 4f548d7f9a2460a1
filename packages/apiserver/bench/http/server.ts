// The API server of the HTTP benchmark, in its own process so that the
// clients' CPU is measured alone. Started by http.bench.ts with fork(); it
// creates `pods` pods through the in-process client, listens on loopback and
// answers the parent's messages:
//   { kind: "update", round }  applies one MODIFIED update to every pod, as fast
//                              as it can, and answers with the resourceVersions
//                              it produced and how long the writes took.
// The pods are created through the registry (validation, defaults), but the
// updates go straight to the storage: the registry's write path manages about
// 5k updates/s on this machine, which would make the watch measure the server,
// not the clients. Every update still reaches the clients through the
// registry's watch and the HTTP server's serialization, as any other would.
//   { kind: "stop" }           closes the server and exits.
import { type Pod, pods } from "@reconcile/api";
import { ApiServer } from "../../src/api-server.js";
import { listen } from "../../src/http/server.js";
import { benchNamespace, benchPod } from "./pod.js";

export type ServerRequest = { kind: "update"; round: number } | { kind: "stop" };

export type ServerMessage =
  | {
      kind: "ready";
      url: string;
      kubeconfig: string;
      resourceVersion: string;
      podBytes: number;
      seedMs: number;
    }
  | { kind: "updated"; fromResourceVersion: string; toResourceVersion: string; writeMs: number };

const podCount = Number(process.argv[2]);
if (!(podCount > 0)) throw new Error("usage: server.ts <pods>");
/** Updates in flight at once: enough to keep the registry busy, few enough to keep their order cheap. */
const window = 64;

function send(message: ServerMessage): void {
  process.send?.(message);
}

const apiServer = new ApiServer({
  // Every event of one round must stay buffered for a watcher that reads more slowly than we write.
  watchBufferSize: podCount + 1_000,
  historySize: podCount + 1_000,
  garbageCollection: false,
});
const client = apiServer.client().resource(pods, benchNamespace);

const latest: Pod[] = new Array(podCount);
const seedStart = performance.now();
await inWindows(podCount, async (i) => {
  latest[i] = await client.create(benchPod(i));
});
const seedMs = performance.now() - seedStart;
const listening = await listen(apiServer, { host: "127.0.0.1", port: 0 });
const head = await client.list({ limit: 1 });
send({
  kind: "ready",
  url: listening.url,
  kubeconfig: listening.kubeconfig(),
  resourceVersion: head.metadata.resourceVersion ?? "",
  podBytes: Math.round(JSON.stringify(latest[0]).length),
  seedMs,
});

process.on("message", (message: ServerRequest) => {
  if (message.kind === "stop") {
    void listening
      .close()
      .then(() => apiServer.close())
      .then(() => process.exit(0));
    return;
  }
  void update(message.round);
});

async function update(round: number): Promise<void> {
  const from = (await client.list({ limit: 1 })).metadata.resourceVersion ?? "";
  const start = performance.now();
  for (let i = 0; i < podCount; i++) {
    const pod = latest[i]!;
    const key = apiServer.registry.keyOf(pods, benchNamespace, pod.metadata?.name ?? "");
    const next: Pod = {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: { ...pod.metadata?.annotations, "bench/round": String(round) },
      },
    };
    latest[i] = (await apiServer.storage.update(key, next)) as Pod;
    // Let the HTTP server write what is queued while the updates go on.
    if (i % 1_000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  const writeMs = performance.now() - start;
  const to = (await client.list({ limit: 1 })).metadata.resourceVersion ?? "";
  send({ kind: "updated", fromResourceVersion: from, toResourceVersion: to, writeMs });
}

/** Runs `task(0..count-1)` with at most `window` calls in flight. */
async function inWindows(count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
}
