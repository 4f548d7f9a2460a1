// Static pods from a manifest directory and their mirror pods, on the
// embedded API server and a FakeClock.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet } from "./kubelet.js";
import type { SimulatedRuntime } from "./runtime/simulated-runtime.js";
import { applyStaticPodDefaults, parseManifest, readStaticPods } from "./static-pods.js";

const start = Date.parse("2026-01-01T00:00:00Z");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startNode(directory: string) {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  cleanups.push(() => server.close());
  const client = server.client();
  const kubelet = new Kubelet({
    nodeName: "node-1",
    client,
    clock,
    random: () => 0,
    staticPodPath: directory,
  });
  const abort = new AbortController();
  const running = kubelet.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
  });
  await clock.advance(0);
  await settle(clock);
  return { clock, client, kubelet, runtime: kubelet.runtime as SimulatedRuntime };
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

function manifestDir(): string {
  const directory = mkdtempSync(join(tmpdir(), "static-pods-"));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

const etcd = (image = "registry.k8s.io/etcd:3.5.15-0"): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "etcd", namespace: "kube-system", labels: { component: "etcd" } },
  spec: { containers: [{ name: "etcd", image }] },
});

async function mirror(client: Client): Promise<Pod> {
  return client.resource(pods, "kube-system").get("etcd-node-1");
}

describe("static pods", () => {
  it("defaults a manifest as the file source does: hashed UID, name-node, default namespace, bound, tolerating NoExecute", () => {
    const pod = applyStaticPodDefaults(
      { kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx" }] } },
      "/etc/kubernetes/manifests/web.json",
      "Node-1",
    );
    expect(pod.metadata?.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(pod.metadata).toMatchObject({
      name: "web-node-1",
      namespace: "default",
      annotations: { "kubernetes.io/config.hash": pod.metadata?.uid, "kubernetes.io/config.source": "file" },
    });
    expect(pod.spec).toMatchObject({
      nodeName: "Node-1",
      tolerations: [{ operator: "Exists", effect: "NoExecute" }],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      containers: [{ name: "web", image: "nginx", imagePullPolicy: "Always" }],
    });
    expect(pod.status).toEqual({ phase: "Pending" });
  });

  it("reads YAML manifests as Kubernetes reads YAML: 1.1 booleans, timestamps as text, the first document", () => {
    const directory = manifestDir();
    writeFileSync(
      join(directory, "web.yaml"),
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: web",
        "  annotations:",
        "    built: 2001-12-14",
        "spec:",
        "  hostNetwork: yes",
        "  containers:",
        "  - name: web",
        "    image: nginx:1.27",
        "    ports: [{containerPort: 80}]",
        "---",
        "kind: Pod",
        "metadata: {name: ignored}",
        "",
      ].join("\n"),
    );
    const { pods: found, errors } = readStaticPods(directory, "node-1");
    expect(errors).toEqual([]);
    expect(found.map((p) => p.metadata?.name)).toEqual(["web-node-1"]);
    const [web] = found;
    expect(web?.metadata?.annotations?.built).toBe("2001-12-14");
    expect(web?.spec?.hostNetwork).toBe(true);
    expect(web?.spec?.containers).toEqual([
      { name: "web", image: "nginx:1.27", ports: [{ containerPort: 80 }], imagePullPolicy: "IfNotPresent" },
    ]);
    expect(parseManifest("a: 1\na: 2\nb: &x {c: 1}\nd: {<<: *x, e: 2}")).toEqual({
      a: 2,
      b: { c: 1 },
      d: { c: 1, e: 2 },
    });
    expect(() => parseManifest("a: [1")).toThrow(
      new Error(
        "Flow sequence in block collection must be sufficiently indented and end with a ] at line 1, column 6",
      ),
    );
  });

  it("reads one pod per file, skips hidden files, and names what it cannot read", () => {
    const directory = manifestDir();
    writeFileSync(join(directory, "etcd.json"), JSON.stringify(etcd()));
    writeFileSync(join(directory, ".etcd.json.swp"), "{");
    writeFileSync(join(directory, "broken.json"), "{");
    writeFileSync(join(directory, "list.json"), JSON.stringify({ kind: "PodList", items: [] }));
    writeFileSync(join(directory, "nameless.json"), JSON.stringify({ ...etcd(), metadata: {} }));
    const { pods: found, errors } = readStaticPods(directory, "node-1");
    expect(found.map((p) => p.metadata?.name)).toEqual(["etcd-node-1"]);
    expect(errors.map((e) => [e.file.slice(directory.length + 1), e.message])).toEqual([
      [
        "broken.json",
        "couldn't parse as pod(Flow map must end with a } at line 1, column 2), please check config file",
      ],
      ["list.json", 'expected a Pod object, got kind "PodList"'],
      ["nameless.json", "metadata.name: Required value: name is required"],
    ]);
    expect(readStaticPods(join(directory, "missing"), "node-1")).toEqual({ pods: [], errors: [] });
  });

  it("runs a static pod and mirrors it to the API server, owned by the Node, with its status", async () => {
    const directory = manifestDir();
    writeFileSync(join(directory, "etcd.json"), JSON.stringify(etcd()));
    writeFileSync(join(directory, ".swp"), "not a manifest");
    const { client, clock, kubelet } = await startNode(directory);
    await advance(clock, 2000);
    const [staticPod] = kubelet.getPods();
    const hash = staticPod?.metadata?.uid;
    const node = await client.resource(nodes).get("node-1");
    const created = await mirror(client);
    expect(created.metadata?.uid).not.toBe(hash);
    expect(created.metadata?.annotations).toMatchObject({
      "kubernetes.io/config.mirror": hash,
      "kubernetes.io/config.hash": hash,
      "kubernetes.io/config.source": "file",
    });
    expect(created.metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Node", name: "node-1", uid: node.metadata?.uid, controller: true },
    ]);
    expect(created.spec?.nodeName).toBe("node-1");
    expect(created.status?.phase).toBe("Running");
    expect(created.status?.containerStatuses?.[0]).toMatchObject({
      name: "etcd",
      ready: true,
      restartCount: 0,
    });
    expect(kubelet.getPods().map((p) => p.metadata?.name)).toEqual(["etcd-node-1"]);
  });

  it("re-creates a deleted mirror pod without restarting the static pod's containers", async () => {
    const directory = manifestDir();
    writeFileSync(join(directory, "etcd.json"), JSON.stringify(etcd()));
    const { client, clock, runtime, kubelet } = await startNode(directory);
    await advance(clock, 2000);
    const first = await mirror(client);
    await client.resource(pods, "kube-system").delete("etcd-node-1");
    await advance(clock, 2000);
    const second = await mirror(client);
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    expect(second.status?.phase).toBe("Running");
    const uid = kubelet.getPods()[0]?.metadata?.uid;
    expect(runtime.listContainers({ podUid: uid }).map((c) => [c.name, c.state, c.attempt])).toEqual([
      ["etcd", "running", 0],
    ]);
  });

  it("stops the static pod and deletes its mirror pod when the manifest goes, and replaces both when it changes", async () => {
    const directory = manifestDir();
    const file = join(directory, "etcd.json");
    writeFileSync(file, JSON.stringify(etcd()));
    const { client, clock, runtime, kubelet } = await startNode(directory);
    await advance(clock, 2000);
    const oldUid = kubelet.getPods()[0]?.metadata?.uid;
    writeFileSync(file, JSON.stringify(etcd("registry.k8s.io/etcd:3.5.16-0")));
    // The directory is read every 20 s; the new pod of the same full name waits for the old one
    // to finish, and its worker retries 10 s after it was held back.
    await advance(clock, 30_000);
    const [updated] = kubelet.getPods();
    expect(updated?.metadata?.uid).not.toBe(oldUid);
    expect(runtime.listContainers({ podUid: oldUid }).filter((c) => c.state === "running")).toEqual([]);
    const replaced = await mirror(client);
    expect(replaced.metadata?.annotations?.["kubernetes.io/config.mirror"]).toBe(updated?.metadata?.uid);
    expect(replaced.spec?.containers[0]?.image).toBe("registry.k8s.io/etcd:3.5.16-0");
    expect(replaced.status?.phase).toBe("Running");

    unlinkSync(file);
    await advance(clock, 20_000);
    expect(kubelet.getPods()).toEqual([]);
    await expect(mirror(client)).rejects.toThrow('pods "etcd-node-1" not found');
    expect(runtime.listContainers().filter((c) => c.state === "running")).toEqual([]);
  });
});
