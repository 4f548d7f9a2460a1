// The volume manager end to end: pods whose config map, secret, downward API,
// projected, emptyDir, hostPath and claim volumes are set up before their
// containers start, as the containers then see them, on a FakeClock.
import {
  configMaps,
  type Event,
  events,
  type Pod,
  persistentVolumeClaims,
  pods,
  secrets,
} from "@reconcile/api";
import { ApiServer, defineKind } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import type { Volume, VolumeMount } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet } from "./kubelet.js";
import type { SimulatedRuntime } from "./runtime/simulated-runtime.js";

const start = Date.parse("2026-01-01T00:00:00Z");

interface Node1 {
  clock: FakeClock;
  server: ApiServer;
  client: Client;
  kubelet: Kubelet;
  runtime: SimulatedRuntime;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startNode(): Promise<Node1> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  server.definitions.add(defineKind({ descriptor: persistentVolumeClaims }));
  cleanups.push(() => server.close());
  const client = server.client();
  const kubelet = new Kubelet({ nodeName: "node-1", client, clock, random: () => 0 });
  const abort = new AbortController();
  const running = kubelet.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
  });
  await clock.advance(0);
  await settle(clock);
  return { clock, server, client, kubelet, runtime: kubelet.runtime as SimulatedRuntime };
}

async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 20; i++) await clock.flush();
}

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    await settle(clock);
  }
}

function podWith(name: string, volumes: Volume[], mounts: VolumeMount[]): Pod {
  return {
    metadata: { name, namespace: "default", labels: { app: "web", tier: "front" } },
    spec: {
      nodeName: "node-1",
      volumes,
      containers: [
        {
          name: "web",
          image: "nginx:1.25",
          volumeMounts: mounts,
          resources: { limits: { cpu: "500m", memory: "64Mi" } },
        },
      ],
    },
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

/** The running container of the pod, as the runtime knows it. */
function containerOf(runtime: SimulatedRuntime, pod: Pod) {
  const record = runtime
    .listContainers({ podUid: pod.metadata?.uid })
    .find((c) => c.name === "web" && c.state === "running");
  if (record === undefined) throw new Error(`no running container for ${pod.metadata?.name}`);
  return record;
}

async function exec(runtime: SimulatedRuntime, id: string, script: string): Promise<string> {
  const result = await runtime.execSync(id, ["sh", "-c", script], 0);
  return result.exitCode === 0 ? result.stdout : `exit ${result.exitCode}: ${result.stderr}`;
}

describe("volumes", () => {
  it("mounts a config map's keys as files the container reads, read-only, before the container starts", async () => {
    const { client, clock, runtime } = await startNode();
    await client.resource(configMaps, "default").create({
      metadata: { name: "app-config", namespace: "default" },
      data: { "app.properties": "color=blue\n", mode: "fast" },
    });
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "config", configMap: { name: "app-config" } }],
          [{ name: "config", mountPath: "/etc/config" }],
        ),
      );
    await advance(clock, 1000);
    const pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Running");
    const container = containerOf(runtime, pod);
    const hostPath = `/var/lib/kubelet/pods/${pod.metadata?.uid}/volumes/kubernetes.io~configmap/config`;
    expect(container.mounts).toEqual([
      { name: "config", containerPath: "/etc/config", hostPath, readOnly: true },
    ]);
    expect(runtime.readFile(container.id, "/etc/config/app.properties")).toBe("color=blue\n");
    expect(await exec(runtime, container.id, "ls /etc/config")).toBe("app.properties\nmode\n");
    expect(await exec(runtime, container.id, "cat /etc/config/mode")).toBe("fast");
    expect(await exec(runtime, container.id, "echo x > /etc/config/mode")).toBe(
      "exit 1: sh: can't create /etc/config/mode: Read-only file system\n",
    );
  });

  it("keeps a pod whose config map is missing in ContainerCreating, with FailedMount events on upstream's backoff, until it appears", async () => {
    const { client, clock, runtime } = await startNode();
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "config", configMap: { name: "app-config" } }],
          [{ name: "config", mountPath: "/etc/config" }],
        ),
      );
    // Attempts at 0 s, 0.5 s, 1.5 s, 3.5 s and 7.5 s (500 ms doubling).
    await advance(clock, 10_000);
    let pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Pending");
    expect(pod.status?.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: "ContainerCreating" } });
    expect(runtime.listContainers({ podUid: pod.metadata?.uid })).toEqual([]);
    expect(await eventsOf(client, "web")).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "config" : configmap "app-config" not found (x5)',
    ]);
    await client.resource(configMaps, "default").create({
      metadata: { name: "app-config", namespace: "default" },
      data: { mode: "fast" },
    });
    // The next attempt is 8 s after the one at 7.5 s.
    await advance(clock, 6_000);
    pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Running");
    expect(runtime.readFile(containerOf(runtime, pod).id, "/etc/config/mode")).toBe("fast");
  });

  it("gives up waiting after 2m3s with an Unable to attach or mount volumes event, and the sync is retried", async () => {
    const { client, clock } = await startNode();
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "creds", secret: { secretName: "db" } }],
          [{ name: "creds", mountPath: "/etc/creds" }],
        ),
      );
    await advance(clock, 124_000);
    // Attempts at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 and 63.5 s; the next (127.5 s) is past the wait.
    expect(await eventsOf(client, "web")).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "creds" : secret "db" not found (x8)',
      "Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[creds], unattached volumes=[], failed to process volumes=[]: context deadline exceeded",
    ]);
    expect((await getPod(client, "web")).status?.phase).toBe("Pending");
    await client.resource(secrets, "default").create({
      metadata: { name: "db", namespace: "default" },
      data: { user: Buffer.from("admin").toString("base64") },
    });
    // The failed sync is retried 10 s later, on the next 1 s tick; the volume's next attempt is due by then.
    await advance(clock, 11_000);
    expect((await getPod(client, "web")).status?.phase).toBe("Running");
  });

  it("mounts a missing optional config map as an empty directory, and only the listed items of a secret", async () => {
    const { client, clock, runtime } = await startNode();
    await client.resource(secrets, "default").create({
      metadata: { name: "db", namespace: "default" },
      data: {
        user: Buffer.from("admin").toString("base64"),
        password: Buffer.from("s3cret").toString("base64"),
      },
    });
    await client.resource(pods, "default").create(
      podWith(
        "web",
        [
          { name: "config", configMap: { name: "absent", optional: true } },
          { name: "creds", secret: { secretName: "db", items: [{ key: "password", path: "db/pass" }] } },
        ],
        [
          { name: "config", mountPath: "/etc/config" },
          { name: "creds", mountPath: "/etc/creds" },
        ],
      ),
    );
    await advance(clock, 1000);
    const pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Running");
    const id = containerOf(runtime, pod).id;
    expect(await exec(runtime, id, "ls /etc/config")).toBe("");
    expect(await exec(runtime, id, "ls /etc/creds")).toBe("db\n");
    expect(await exec(runtime, id, "cat /etc/creds/db/pass")).toBe("s3cret");
    expect(await eventsOf(client, "web")).not.toContainEqual(expect.stringContaining("FailedMount"));
  });

  it("fails a secret item naming a key the secret lacks", async () => {
    const { client, clock } = await startNode();
    await client.resource(secrets, "default").create({
      metadata: { name: "db", namespace: "default" },
      data: { user: Buffer.from("admin").toString("base64") },
    });
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "creds", secret: { secretName: "db", items: [{ key: "token", path: "t" }] } }],
          [{ name: "creds", mountPath: "/etc/creds" }],
        ),
      );
    await advance(clock, 200);
    expect(await eventsOf(client, "web")).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "creds" : references non-existent secret key: token',
    ]);
  });

  it("writes downward API fields, projected sources, an emptyDir shared by mounts and hostPath directories", async () => {
    const { client, clock, runtime, kubelet } = await startNode();
    await client.resource(configMaps, "default").create({
      metadata: { name: "app-config", namespace: "default" },
      data: { mode: "fast" },
    });
    await client.resource(pods, "default").create(
      podWith(
        "web",
        [
          {
            name: "info",
            downwardAPI: {
              items: [
                { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
                { path: "name", fieldRef: { fieldPath: "metadata.name" } },
                { path: "tier", fieldRef: { fieldPath: "metadata.labels['tier']" } },
                {
                  path: "cpu_limit",
                  resourceFieldRef: { containerName: "web", resource: "limits.cpu", divisor: "1m" },
                },
                {
                  path: "mem_request",
                  resourceFieldRef: { containerName: "web", resource: "requests.memory" },
                },
              ],
            },
          },
          {
            name: "all",
            projected: {
              sources: [
                { configMap: { name: "app-config" } },
                { downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } },
                { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
              ],
            },
          },
          { name: "scratch", emptyDir: {} },
          { name: "host", hostPath: { path: "/srv/data", type: "DirectoryOrCreate" } },
        ],
        [
          { name: "info", mountPath: "/etc/info" },
          { name: "all", mountPath: "/var/run/all" },
          { name: "scratch", mountPath: "/scratch" },
          { name: "scratch", mountPath: "/cache", subPath: "cache" },
          { name: "host", mountPath: "/data" },
        ],
      ),
    );
    await advance(clock, 1000);
    const pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Running");
    const id = containerOf(runtime, pod).id;
    expect(await exec(runtime, id, "cat /etc/info/labels")).toBe('app="web"\ntier="front"');
    expect(await exec(runtime, id, "cat /etc/info/name /etc/info/tier")).toBe("webfront");
    expect(await exec(runtime, id, "cat /etc/info/cpu_limit")).toBe("500");
    // The API server defaulted the request to the limit (SetDefaults_Pod).
    expect(await exec(runtime, id, "cat /etc/info/mem_request")).toBe("67108864");
    expect(await exec(runtime, id, "ls /var/run/all")).toBe("mode\nns\ntoken\n");
    const token = runtime.readFile(id, "/var/run/all/token") ?? "";
    const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
    expect(claims).toMatchObject({
      sub: "system:serviceaccount:default:default",
      "kubernetes.io": { pod: { name: "web", uid: pod.metadata?.uid } },
    });
    expect(
      await exec(runtime, id, "mkdir -p /scratch/cache && echo hi > /cache/note && cat /scratch/cache/note"),
    ).toBe("hi\n");
    expect(await exec(runtime, id, "echo kept > /data/file")).toBe("");
    expect(kubelet.filesystem.isDirectory("/srv/data")).toBe(true);
    expect(kubelet.volumeManager.mountedVolumes(pod.metadata?.uid ?? "")).toEqual([
      "info",
      "all",
      "scratch",
      "host",
    ]);

    // Deleted: the pod's volume directories go, the host path keeps what was written.
    await client.resource(pods, "default").delete("web");
    await advance(clock, 3000);
    expect(kubelet.filesystem.exists(`/var/lib/kubelet/pods/${pod.metadata?.uid}`)).toBe(false);
    expect(new TextDecoder().decode(kubelet.filesystem.readFile("/srv/data/file"))).toBe("kept\n");
  });

  it("fails a hostPath of type File that does not exist", async () => {
    const { client, clock } = await startNode();
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "sock", hostPath: { path: "/run/app.sock", type: "File" } }],
          [{ name: "sock", mountPath: "/run/app.sock" }],
        ),
      );
    await advance(clock, 200);
    expect(await eventsOf(client, "web")).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "sock" : hostPath type check failed: /run/app.sock is not a file',
    ]);
  });

  it("needs a claim that exists and is Bound: otherwise the sync fails at once with upstream's processing error", async () => {
    const { client, clock, runtime } = await startNode();
    await client
      .resource(pods, "default")
      .create(
        podWith(
          "web",
          [{ name: "data", persistentVolumeClaim: { claimName: "data" } }],
          [{ name: "data", mountPath: "/var/lib/data" }],
        ),
      );
    await advance(clock, 500);
    expect(await eventsOf(client, "web")).toEqual([
      'Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found',
    ]);
    const claims = client.resource(persistentVolumeClaims, "default");
    await claims.create({
      metadata: { name: "data", namespace: "default" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    // The pod workers retry a failed sync after 10 s (+ jitter, none here), on the next 1 s tick.
    await advance(clock, 11_000);
    expect(await eventsOf(client, "web")).toContain(
      "Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: PVC is not bound",
    );
    expect((await getPod(client, "web")).status?.phase).toBe("Pending");
    await claims.update({
      ...(await claims.get("data")),
      spec: { ...(await claims.get("data")).spec, volumeName: "pv-1" },
    });
    await claims.patch("data", { status: { phase: "Bound" } }, { type: "merge", subresource: "status" });
    await advance(clock, 11_000);
    const pod = await getPod(client, "web");
    expect(pod.status?.phase).toBe("Running");
    expect(containerOf(runtime, pod).mounts).toEqual([
      {
        name: "data",
        containerPath: "/var/lib/data",
        hostPath: "/var/lib/kubelet/plugins/kubernetes.io/csi/pv/pv-1/globalmount",
        readOnly: false,
      },
    ]);
  });
});
