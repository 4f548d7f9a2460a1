// The scheduler end to end on the embedded API server: informers watch the
// server, bindings and conditions go through the in-process client, and time
// is a FakeClock the tests advance.
import { events as eventsResource, type Node, nodes, type Pod, pods, replicaSets } from "@reconcile/api";
import { ApiServer, listen } from "@reconcile/apiserver";
import { type Client, HttpClient, loadKubeConfig } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "./scheduler.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start(options: { schedulerName?: string } = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const scheduler = Scheduler.fromInformerFactory(factory, {
    client,
    clock,
    random: () => 0,
    ...(options.schedulerName ? { schedulerName: options.schedulerName } : {}),
  });
  const abort = new AbortController();
  factory.start(abort.signal);
  const run = scheduler.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
    // A full stop: the queue's flush timers and every other timer are gone.
    expect(clock.pendingTimers()).toEqual([]);
  });
  return { clock, client, scheduler };
}

function node(name: string, cpu = "4", memory = "32Gi"): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
    status: { capacity: { cpu, memory, pods: "110" }, allocatable: { cpu, memory, pods: "110" } },
  };
}

function pod(name: string, cpu = "100m", extra: Partial<Pod["spec"]> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      containers: [{ name: "app", image: "pause", resources: { requests: { cpu, memory: "500Mi" } } }],
      ...extra,
    },
  };
}

async function eventually(clock: FakeClock, check: () => Promise<boolean>, limitMs = 60_000): Promise<void> {
  for (let elapsed = 0; elapsed <= limitMs; elapsed += 10) {
    if (await check()) return;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within ${limitMs} ms of fake time`);
}

async function nodeOf(client: Client, name: string): Promise<string | undefined> {
  return (await client.resource(pods, namespace).get(name)).spec?.nodeName;
}

async function eventsFor(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((event) => event.involvedObject?.name === name)
    .map((event) => `${event.type} ${event.reason} ${event.message}`);
}

describe("Scheduler on the embedded API server", () => {
  it("binds pods, spreading a ReplicaSet's pods across nodes, with a Scheduled event and PodScheduled=True", async () => {
    const { clock, client } = start();
    for (const name of ["n1", "n2", "n3"]) await client.resource(nodes).create(node(name));
    // A ReplicaSet nobody reconciles: the test creates its pods (the garbage collector needs the owner to exist).
    const rs = await client.resource(replicaSets, namespace).create({
      metadata: { name: "web", namespace },
      spec: {
        replicas: 6,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image: "pause" }] },
        },
      },
    });
    const owner = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: "web",
      uid: rs.metadata!.uid!,
      controller: true,
    };
    for (let i = 0; i < 6; i++) {
      const p = pod(`web-${i}`);
      p.metadata!.ownerReferences = [owner];
      await client.resource(pods, namespace).create(p);
    }
    await eventually(clock, async () => {
      const list = await client.resource(pods, namespace).list();
      return list.items.every((p) => p.spec?.nodeName);
    });
    const list = await client.resource(pods, namespace).list();
    const perNode = new Map<string, number>();
    for (const p of list.items) perNode.set(p.spec!.nodeName!, (perNode.get(p.spec!.nodeName!) ?? 0) + 1);
    expect([...perNode.values()].sort()).toEqual([2, 2, 2]);
    const first = list.items.find((p) => p.metadata?.name === "web-0")!;
    expect(first.status?.conditions?.find((c) => c.type === "PodScheduled")?.status).toBe("True");
    await eventually(clock, async () => (await eventsFor(client, "web-0")).length > 0);
    expect(await eventsFor(client, "web-0")).toEqual([
      `Normal Scheduled Successfully assigned default/web-0 to ${first.spec?.nodeName}`,
    ]);
  });

  it("reports an unschedulable pod with upstream's message, then schedules it when a node that fits appears", async () => {
    const { clock, client } = start();
    for (const name of ["n1", "n2", "n3"]) await client.resource(nodes).create(node(name, "1"));
    await client.resource(pods, namespace).create(pod("big", "2"));
    const message =
      "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
    await eventually(clock, async () => (await eventsFor(client, "big")).length > 0);
    expect(await eventsFor(client, "big")).toEqual([`Warning FailedScheduling ${message}`]);
    await eventually(clock, async () => {
      const current = await client.resource(pods, namespace).get("big");
      return current.status?.conditions?.some((c) => c.type === "PodScheduled") ?? false;
    });
    const condition = (await client.resource(pods, namespace).get("big")).status?.conditions?.find(
      (c) => c.type === "PodScheduled",
    );
    expect(condition).toMatchObject({ status: "False", reason: "Unschedulable", message });
    await client.resource(nodes).create(node("n4", "4"));
    await eventually(clock, async () => (await nodeOf(client, "big")) === "n4");
  });

  it("leaves pods for another scheduler alone", async () => {
    const { clock, client } = start();
    await client.resource(nodes).create(node("n1"));
    await client.resource(pods, namespace).create(pod("mine"));
    await client
      .resource(pods, namespace)
      .create(pod("theirs", "100m", { schedulerName: "other-scheduler" }));
    await eventually(clock, async () => (await nodeOf(client, "mine")) === "n1");
    await clock.advance(30_000);
    expect(await nodeOf(client, "theirs")).toBeUndefined();
    expect(await eventsFor(client, "theirs")).toEqual([]);
  });

  it("counts an assumed pod against its node before the binding is observed", async () => {
    const { clock, client } = start();
    await client.resource(nodes).create(node("n1", "1"));
    await client.resource(nodes).create(node("n2", "1"));
    for (const name of ["a", "b"]) await client.resource(pods, namespace).create(pod(name, "600m"));
    await eventually(clock, async () => Boolean((await nodeOf(client, "a")) && (await nodeOf(client, "b"))));
    expect(new Set([await nodeOf(client, "a"), await nodeOf(client, "b")])).toEqual(new Set(["n1", "n2"]));
  });

  it("binds through pods/binding over HTTP when its client is an HttpClient", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const server = new ApiServer({ clock });
    const listening = await listen(server);
    const http = new HttpClient({
      kubeConfig: await loadKubeConfig({ yaml: listening.kubeconfig() }),
      qps: Number.POSITIVE_INFINITY,
    });
    const direct = server.client();
    const factory = new SharedInformerFactory({ client: direct, clock });
    const writes: string[] = [];
    const recording: Client = {
      resource: (resource, ns) => {
        const inner = http.resource(resource, ns);
        return new Proxy(inner, {
          get(target, property) {
            const value = Reflect.get(target, property);
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              if (resource.plural === "pods") writes.push(String(property));
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      },
    };
    const scheduler = Scheduler.fromInformerFactory(factory, {
      client: Object.assign(recording, { requestJson: http.requestJson.bind(http) }),
      clock,
    });
    const abort = new AbortController();
    factory.start(abort.signal);
    const run = scheduler.run({ signal: abort.signal });
    cleanups.push(async () => {
      abort.abort();
      await run;
      await factory.shutdown();
      http.close();
      await listening.close();
      await server.close();
    });
    await direct.resource(nodes).create(node("n1"));
    await direct.resource(pods, namespace).create(pod("web"));
    await eventually(clock, async () => (await nodeOf(direct, "web")) === "n1");
    const bound = await direct.resource(pods, namespace).get("web");
    expect(bound.status?.conditions?.find((c) => c.type === "PodScheduled")?.status).toBe("True");
    // One Binding, no pod patch: the subresource did both in one write.
    expect(writes).toEqual([]);
  });
});
