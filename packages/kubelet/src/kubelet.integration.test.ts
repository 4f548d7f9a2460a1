// The kubelet end to end on the embedded API server: it registers its Node,
// renews its Lease, watches pods bound to it and drives them through the
// simulated runtime, all on a FakeClock the tests advance.
import {
  csiNodes,
  type Event,
  events,
  type Lease,
  leases,
  type Node,
  nodes,
  type Pod,
  pods,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet, type KubeletOptions } from "./kubelet.js";

const start = Date.parse("2026-01-01T00:00:00Z");

interface Node1 {
  clock: FakeClock;
  server: ApiServer;
  client: Client;
  kubelet: Kubelet;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startNode(options: Partial<KubeletOptions> = {}): Promise<Node1> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  cleanups.push(() => server.close());
  const client = server.client();
  const kubelet = new Kubelet({ nodeName: "node-1", client, clock, random: () => 0, ...options });
  const abort = new AbortController();
  const running = kubelet.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
  });
  await clock.advance(0);
  await settle(clock);
  return { clock, server, client, kubelet };
}

/** Lets in-process writes, watches and handlers run without moving time. */
async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 20; i++) await clock.flush();
}

/** Advances in 100 ms steps, letting everything settle in between. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    await settle(clock);
  }
}

function pod(
  name: string,
  extra: { annotations?: Record<string, string>; spec?: Partial<Pod["spec"]> } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: "default",
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx:1.25" }], ...extra.spec },
  };
}

async function getPod(client: Client, name: string): Promise<Pod> {
  return client.resource(pods, "default").get(name);
}

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(events, "default").list();
  return list.items
    .filter((e: Event) => e.involvedObject.name === name)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
    .map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ""}`);
}

describe("Kubelet", () => {
  it("registers its Node with capacity, allocatable, addresses, nodeInfo, labels and the four conditions", async () => {
    const { client } = await startNode({ nodeIP: "10.0.0.7", podCIDR: "10.244.7.0/24" });
    const node: Node = await client.resource(nodes).get("node-1");
    expect(node.metadata?.labels).toEqual({
      "beta.kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "kubernetes.io/hostname": "node-1",
      "kubernetes.io/os": "linux",
    });
    expect(node.spec?.podCIDR).toBe("10.244.7.0/24");
    expect(node.status?.capacity).toMatchObject({ cpu: "4", memory: "16Gi", pods: "110" });
    expect(node.status?.allocatable).toMatchObject({ cpu: "4", memory: "16284Mi", pods: "110" });
    expect(node.status?.addresses).toEqual([
      { type: "InternalIP", address: "10.0.0.7" },
      { type: "Hostname", address: "node-1" },
    ]);
    expect(node.status?.nodeInfo).toMatchObject({
      kubeletVersion: "v1.32.0",
      containerRuntimeVersion: "containerd://1.7.13-sim",
      operatingSystem: "linux",
      architecture: "amd64",
    });
    expect(node.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["MemoryPressure", "False", "KubeletHasSufficientMemory"],
      ["DiskPressure", "False", "KubeletHasNoDiskPressure"],
      ["PIDPressure", "False", "KubeletHasSufficientPID"],
      ["Ready", "True", "KubeletReady"],
    ]);
  });

  it("creates its Lease in kube-node-lease, owned by the Node, and renews it every 10 s", async () => {
    const { client, clock } = await startNode();
    await advance(clock, 200);
    const node = await client.resource(nodes).get("node-1");
    const lease: Lease = await client.resource(leases, "kube-node-lease").get("node-1");
    expect(lease.spec).toMatchObject({ holderIdentity: "node-1", leaseDurationSeconds: 40 });
    expect(lease.metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Node", name: "node-1", uid: node.metadata?.uid },
    ]);
    const first = Date.parse(lease.spec?.renewTime ?? "");
    await advance(clock, 10_000);
    const renewed = await client.resource(leases, "kube-node-lease").get("node-1");
    expect(Date.parse(renewed.spec?.renewTime ?? "") - first).toBe(10_000);
    expect(renewed.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("creates its CSINode once, with no drivers, owned by the Node", async () => {
    const { client, clock } = await startNode();
    await advance(clock, 20_000);
    const node = await client.resource(nodes).get("node-1");
    const csiNode = await client.resource(csiNodes).get("node-1");
    expect(csiNode.metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Node", name: "node-1", uid: node.metadata?.uid },
    ]);
    expect(csiNode.metadata?.annotations).toEqual({
      "storage.alpha.kubernetes.io/migrated-plugins":
        "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume",
    });
    expect(csiNode.spec).toEqual({ drivers: null });
    await advance(clock, 60_000);
    const later = await client.resource(csiNodes).get("node-1");
    expect(later.metadata?.resourceVersion).toBe(csiNode.metadata?.resourceVersion);
  });

  it("writes the node status only when it changes, or every 5 minutes, and records the node events", async () => {
    const { client, clock, kubelet } = await startNode();
    expect(kubelet.nodeStatus.writes).toBe(1); // the registration
    await advance(clock, 290_000);
    expect(kubelet.nodeStatus.writes).toBe(1);
    await advance(clock, 20_000);
    expect(kubelet.nodeStatus.writes).toBe(2);
    const node = await client.resource(nodes).get("node-1");
    const ready = node.status?.conditions?.find((c) => c.type === "Ready");
    expect(Date.parse(ready?.lastHeartbeatTime ?? "") - start).toBeGreaterThanOrEqual(300_000);
    expect(ready?.lastTransitionTime).toBe("2026-01-01T00:00:00Z");
    expect(await eventsOf(client, "node-1")).toEqual([
      "Normal Starting Starting kubelet.",
      "Normal NodeHasSufficientMemory Node node-1 status is now: NodeHasSufficientMemory",
      "Normal NodeHasNoDiskPressure Node node-1 status is now: NodeHasNoDiskPressure",
      "Normal NodeHasSufficientPID Node node-1 status is now: NodeHasSufficientPID",
    ]);
  });

  it("reports pod start SLI once per pod and pod worker durations by operation through its metrics seam", async () => {
    const starts: number[] = [];
    const workers: [string, number][] = [];
    const { client, clock } = await startNode({
      metrics: {
        observePodStartSLIDuration: (seconds) => starts.push(seconds),
        observePodWorkerDuration: (operation, seconds) => workers.push([operation, seconds]),
      },
    });
    await advance(clock, 500);
    await client.resource(pods, "default").create(pod("web"));
    await advance(clock, 3000);
    expect((await getPod(client, "web")).status?.phase).toBe("Running");
    expect(starts).toHaveLength(1);
    expect(starts[0]).toBeGreaterThan(0);
    expect(starts[0]).toBeLessThanOrEqual(1);
    expect(workers.some(([operation]) => operation === "create")).toBe(true);
    for (const [, seconds] of workers) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  it("runs a bound pod: Running and Ready with container statuses, IPs, startTime, qosClass and the events", async () => {
    const { client, clock } = await startNode({ nodeIP: "10.0.0.7", podCIDR: "10.244.7.0/24" });
    await client.resource(pods, "default").create(pod("web"));
    await advance(clock, 1000);
    const running = await getPod(client, "web");
    expect(running.status?.phase).toBe("Running");
    expect(running.status?.hostIP).toBe("10.0.0.7");
    expect(running.status?.podIP).toBe("10.244.7.2");
    expect(running.status?.podIPs).toEqual([{ ip: "10.244.7.2" }]);
    expect(running.status?.qosClass).toBe("BestEffort");
    expect(running.status?.startTime).toBe("2026-01-01T00:00:00Z");
    expect(running.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["PodReadyToStartContainers", "True"],
      ["Initialized", "True"],
      ["Ready", "True"],
      ["ContainersReady", "True"],
      ["PodScheduled", "True"],
    ]);
    const [web] = running.status?.containerStatuses ?? [];
    expect(web).toMatchObject({
      name: "web",
      image: "docker.io/library/nginx:1.25",
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
    });
    expect(web?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(web?.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(await eventsOf(client, "web")).toEqual([
      'Normal Pulling Pulling image "nginx:1.25"',
      expect.stringMatching(
        /^Normal Pulled Successfully pulled image "nginx:1.25" in 0s \(0s including waiting\)\. Image size: \d+ bytes\.$/,
      ),
      "Normal Created Created container web",
      "Normal Started Started container web",
    ]);
  });

  it("patches a pod's status only when it changes: resyncs of a steady pod write nothing", async () => {
    const { client, clock, kubelet } = await startNode();
    await client.resource(pods, "default").create(pod("steady"));
    await advance(clock, 2_000);
    const patches = kubelet.statusManager.stats.patches;
    const version = (await getPod(client, "steady")).metadata?.resourceVersion;
    // One: the simulated runtime starts the container at once, and the status set while it was
    // being created is replaced before its write (a runtime with a start delay shows both).
    expect(patches).toBe(1);
    await advance(clock, 120_000); // past the 60–90 s resync and the status manager's 10 s sweeps
    expect(kubelet.statusManager.stats.patches).toBe(patches);
    expect((await getPod(client, "steady")).metadata?.resourceVersion).toBe(version);
  });

  it("restarts a crashing container at once, then after 10 s, 20 s and 40 s, reporting CrashLoopBackOff in between", async () => {
    const { client, clock } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod("crash", {
        annotations: { "sim.reconcile.dev/exit-after": "0", "sim.reconcile.dev/exit-code": "1" },
      }),
    );
    const uid = created.metadata?.uid;
    const restarts: number[] = [];
    let last = -1;
    for (let t = 0; t <= 85_000; t += 500) {
      const status = (await getPod(client, "crash")).status?.containerStatuses?.[0];
      const count = status?.restartCount ?? 0;
      if (count !== last) {
        restarts.push(t);
        last = count;
      }
      await advance(clock, 500);
    }
    // Sampled every 500 ms: restart 1 at once, then 10 s, 20 s and 40 s after each crash, at the
    // backoff's expiry; the status names CrashLoopBackOff from the sync after the one that hit the
    // backoff (the workers' error retry, 10 s later).
    expect(restarts.slice(0, 5)).toEqual([0, 500, 10_000, 30_000, 70_000]);
    const status = (await getPod(client, "crash")).status;
    expect(status?.phase).toBe("Running");
    const web = status?.containerStatuses?.[0];
    expect(web?.state?.waiting).toEqual({
      reason: "CrashLoopBackOff",
      message: `back-off 1m20s restarting failed container=web pod=crash_default(${uid})`,
    });
    expect(web?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(await eventsOf(client, "crash")).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Warning BackOff Back-off restarting failed container web in pod crash_default\\(${uid}\\)`,
        ),
      ),
    );
  });

  it("restarts a container whose liveness probe fails failureThreshold times, with Unhealthy and Killing events", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("live", {
        annotations: { "sim.reconcile.dev/liveness-fail-after": "5s" },
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1.25",
              livenessProbe: { httpGet: { path: "/", port: 80 }, periodSeconds: 2, failureThreshold: 3 },
            },
          ],
        },
      }),
    );
    await advance(clock, 5_000);
    expect((await getPod(client, "live")).status?.containerStatuses?.[0]?.restartCount).toBe(0);
    await advance(clock, 8_000);
    const web = (await getPod(client, "live")).status?.containerStatuses?.[0];
    expect(web?.restartCount).toBe(1);
    expect(web?.lastState?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    const seen = await eventsOf(client, "live");
    expect(seen).toContain(
      "Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 500 (x3)",
    );
    expect(seen).toContain("Normal Killing Container web failed liveness probe, will be restarted");
  });

  it("flips Ready when the readiness probe starts to succeed", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("ready", {
        annotations: { "sim.reconcile.dev/ready-after": "3s" },
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1.25",
              readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 1 },
            },
          ],
        },
      }),
    );
    await advance(clock, 1_000);
    let status = (await getPod(client, "ready")).status;
    expect(status?.phase).toBe("Running");
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [web]",
    });
    await advance(clock, 3_000);
    status = (await getPod(client, "ready")).status;
    expect(status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(status?.containerStatuses?.[0]?.ready).toBe(true);
  });

  it("gates liveness and readiness on the startup probe: not started, not ready, until it succeeds", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("slowstart", {
        annotations: { "sim.reconcile.dev/startup-after": "3s" },
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1.25",
              startupProbe: { httpGet: { path: "/", port: 80 }, periodSeconds: 1, failureThreshold: 10 },
              livenessProbe: { httpGet: { path: "/", port: 80 }, periodSeconds: 1 },
            },
          ],
        },
      }),
    );
    await advance(clock, 1_500);
    let web = (await getPod(client, "slowstart")).status?.containerStatuses?.[0];
    expect(web).toMatchObject({ started: false, ready: false, state: { running: {} } });
    await advance(clock, 3_000);
    web = (await getPod(client, "slowstart")).status?.containerStatuses?.[0];
    expect(web).toMatchObject({ started: true, ready: true, restartCount: 0 });
    // Probed once a second from the container's start: at 0, 1 and 2 s it fails, at 3 s it succeeds.
    expect(await eventsOf(client, "slowstart")).toContain(
      "Warning Unhealthy Startup probe failed: HTTP probe failed with statuscode: 503 (x3)",
    );
  });

  it("stops a deleted pod's containers within the grace period and then deletes it with grace 0", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("slow", {
        annotations: { "sim.reconcile.dev/termination": "ignore" },
        spec: { terminationGracePeriodSeconds: 5 },
      }),
    );
    await advance(clock, 1_000);
    await client.resource(pods, "default").delete("slow");
    await advance(clock, 4_000);
    const terminating = await getPod(client, "slow");
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    expect(terminating.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    await advance(clock, 3_000);
    await expect(getPod(client, "slow")).rejects.toThrow('pods "slow" not found');
    expect(await eventsOf(client, "slow")).toContain("Normal Killing Stopping container web");
  });

  it("leaves pods of other nodes and unbound pods alone", async () => {
    const { client, clock } = await startNode();
    await client
      .resource(pods, "default")
      .create({ ...pod("elsewhere"), spec: { ...pod("x").spec!, nodeName: "node-2" } });
    await client
      .resource(pods, "default")
      .create({ ...pod("unbound"), spec: { containers: [{ name: "web", image: "nginx" }] } });
    await advance(clock, 3_000);
    expect((await getPod(client, "elsewhere")).status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
    expect((await getPod(client, "unbound")).status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
  });

  it("rejects a pod that does not fit the allocatable cpu: Failed with OutOfcpu and a Warning event", async () => {
    const { client, clock } = await startNode({ resources: { cpu: "2" } });
    const big = pod("big", {
      spec: { containers: [{ name: "web", image: "nginx:1.25", resources: { requests: { cpu: "1500m" } } }] },
    });
    await client.resource(pods, "default").create(big);
    await advance(clock, 1_000);
    await client
      .resource(pods, "default")
      .create({ ...big, metadata: { name: "bigger", namespace: "default" } });
    await advance(clock, 1_000);
    expect((await getPod(client, "big")).status?.phase).toBe("Running");
    const rejected = await getPod(client, "bigger");
    expect(rejected.status).toMatchObject({
      phase: "Failed",
      reason: "OutOfcpu",
      message:
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 1500, used: 1500, capacity: 2000",
    });
    expect(await eventsOf(client, "bigger")).toEqual([
      "Warning OutOfcpu Node didn't have enough resource: cpu, requested: 1500, used: 1500, capacity: 2000",
    ]);
  });

  it("a pod that never restarts ends Succeeded once its container exits 0, and is not deleted", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("job", {
        annotations: { "sim.reconcile.dev/exit-after": "2s" },
        spec: { restartPolicy: "Never" },
      }),
    );
    await advance(clock, 4_000);
    const done = await getPod(client, "job");
    expect(done.status?.phase).toBe("Succeeded");
    expect(done.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: "Completed",
    });
    expect(done.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "PodCompleted",
    });
  });

  it("serves container logs, with previous, tail and timestamps, and upstream's errors", async () => {
    const { client, clock, kubelet } = await startNode();
    await client.resource(pods, "default").create(
      pod("talk", {
        annotations: {
          "sim.reconcile.dev/log": "one\ntwo\nthree",
          "sim.reconcile.dev/exit-after": "1s",
          "sim.reconcile.dev/exit-code": "3",
        },
        spec: { restartPolicy: "OnFailure" },
      }),
    );
    await advance(clock, 1_500);
    const logs = (options = {}) => kubelet.containerLogs("default", "talk", "web", options);
    expect(logs()).toMatchObject({ ok: true, text: "one\ntwo\nthree\n" });
    expect(logs({ previous: true })).toMatchObject({
      ok: true,
      text: "one\ntwo\nthree\nexiting with code 3\n",
    });
    expect(logs({ tailLines: 1, timestamps: true })).toMatchObject({
      ok: true,
      text: "2026-01-01T00:00:01.000000000Z three\n",
    });
    expect(kubelet.containerLogs("default", "talk", "db", {})).toEqual({
      ok: false,
      code: 404,
      message: 'container "db" not found in pod "talk"',
    });
    expect(kubelet.containerLogs("default", "nope", "web", {})).toEqual({
      ok: false,
      code: 404,
      message: 'pod "nope" does not exist',
    });
  });

  it("reports ErrImagePull, then ImagePullBackOff while the pull backs off, and logs explain why there are none", async () => {
    const { client, clock, kubelet } = await startNode();
    await client
      .resource(pods, "default")
      .create(pod("nopull", { annotations: { "sim.reconcile.dev/pull-error": "manifest unknown" } }));
    await advance(clock, 1_000);
    const waitingReason = async () =>
      (await getPod(client, "nopull")).status?.containerStatuses?.[0]?.state?.waiting?.reason;
    expect(await waitingReason()).toBe("ContainerCreating");
    await advance(clock, 10_000);
    expect(await waitingReason()).toBe("ErrImagePull");
    expect(kubelet.containerLogs("default", "nopull", "web", {})).toEqual({
      ok: false,
      code: 400,
      message: `container "web" in pod "nopull" is waiting to start: image can't be pulled`,
    });
    // Syncs retry 10 s after each failure, on the next 1 s tick: pulls at 0 s and 11 s fail; at 22 s
    // the pull is backing off (20 s from the last), which the status shows from the sync after (33 s).
    await advance(clock, 24_000);
    expect(await waitingReason()).toBe("ImagePullBackOff");
    // Pulls at 0 s, 11 s and 33 s (backoff 10 s, then 20 s), the one at 22 s held back.
    const seen = await eventsOf(client, "nopull");
    expect(seen).toContain(
      'Warning Failed Failed to pull image "nginx:1.25": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.25": manifest unknown (x3)',
    );
    expect(seen).toContain("Warning Failed Error: ErrImagePull (x3)");
    expect(seen).toContain('Normal BackOff Back-off pulling image "nginx:1.25"');
    expect(seen).toContain("Warning Failed Error: ImagePullBackOff");
  });

  it("follows a running container's log until it exits", async () => {
    const { client, clock, kubelet } = await startNode();
    await client.resource(pods, "default").create(
      pod("ticker", {
        annotations: {
          "sim.reconcile.dev/log": "start",
          "sim.reconcile.dev/log-every": "1s",
          "sim.reconcile.dev/exit-after": "2500ms",
        },
        spec: { restartPolicy: "Never" },
      }),
    );
    await advance(clock, 100);
    const result = kubelet.containerLogs("default", "ticker", "web", { follow: true });
    if (!result.ok || result.follow === undefined) throw new Error("expected a followable log");
    let text = result.text;
    let ended = false;
    result.follow(
      (chunk) => {
        text += chunk;
      },
      () => {
        ended = true;
      },
    );
    await advance(clock, 3_000);
    expect(text).toBe("start\ntick 1\ntick 2\nexiting with code 0\n");
    expect(ended).toBe(true);
  });
});
