// The pod garbage collector on the embedded API server and a FakeClock.
import { type Node, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { PodGCController } from "./pod-gc-controller.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start(threshold?: number) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = PodGCController.fromInformerFactory(factory, {
    client,
    clock,
    terminatedPodThreshold: threshold,
  });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

async function pod(
  client: Client,
  clock: FakeClock,
  name: string,
  nodeName: string | undefined,
  phase?: "Succeeded" | "Failed" | "Running",
) {
  const created = await client.resource(pods, namespace).create({
    metadata: { name, namespace },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: "c", image: "busybox" }] },
  } as Pod);
  await clock.advance(1_000);
  if (phase !== undefined)
    await client.resource(pods, namespace).updateStatus({ ...created, status: { phase } } as Pod);
}

const names = async (client: Client) =>
  (await client.resource(pods, namespace).list()).items.map((p) => p.metadata?.name).sort();

async function advance(clock: FakeClock, ms: number) {
  for (let done = 0; done < ms; done += 1_000) await clock.advance(1_000);
}

describe("PodGCController", () => {
  it("deletes the oldest terminated pods beyond the threshold, every 20 s", async () => {
    const { clock, client } = start(2);
    await client.resource(nodes).create({ metadata: { name: "node-1" } } as Node);
    for (const [name, phase] of [
      ["a", "Succeeded"],
      ["b", "Failed"],
      ["c", "Running"],
      ["d", "Succeeded"],
      ["e", "Failed"],
    ] as const)
      await pod(client, clock, name, "node-1", phase);
    await advance(clock, 21_000);
    // Four terminated, threshold 2: a and b (the oldest) go; the running pod stays.
    expect(await names(client)).toEqual(["c", "d", "e"]);
  });

  it("fails and deletes the pods of a node gone for 40 s", async () => {
    const { clock, client } = start();
    await client.resource(nodes).create({ metadata: { name: "node-1" } } as Node);
    await pod(client, clock, "kept", "node-1", "Running");
    await pod(client, clock, "orphan", "node-9", "Running");
    const watched: string[] = [];
    const stream = await client.resource(pods, namespace).watch({ resourceVersion: "0" });
    void (async () => {
      for await (const event of stream) {
        const p = event.object as Pod;
        if (p.metadata?.name === "orphan" && event.type === "MODIFIED")
          watched.push(
            `${p.status?.phase} ${p.status?.conditions?.map((c) => `${c.type}/${c.reason}/${c.message}`).join()}`,
          );
      }
    })();
    await advance(clock, 21_000);
    // Quarantine: the orphan waits 40 s after the pass that saw its node missing.
    expect(await names(client)).toContain("orphan");
    await advance(clock, 45_000);
    expect(await names(client)).toEqual(["kept"]);
    expect(watched).toContain("Failed DisruptionTarget/DeletionByPodGC/PodGC: node no longer exists");
  });
});
