import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { configMaps, type KubeObject, type ObjectList } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { Reflector, type ReflectorStore } from "@reconcile/informer";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CachedStorage } from "./cacher.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";

/** Generous: the machine running the tests may be busy. */
const eventually = { timeout: 10_000, interval: 20 };

let etcd: EtcdCluster;
let prefixes = 0;
const servers: ApiServer[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd({ progressNotifyIntervalMs: 200 });
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await etcd?.stop();
});

/** An API server over the file's etcd, under `prefix`, with the watch cache in front. */
function apiServer(prefix: string): ApiServer {
  const storage = new CachedStorage({
    storage: new EtcdStorage({ endpoints: etcd.endpoints, prefix, compactionIntervalMs: 0 }),
  });
  const server = new ApiServer({ storage, garbageCollection: false });
  servers.push(server);
  return server;
}

function configMap(name: string, data: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default" },
    data,
  } as KubeObject;
}

const summary = (list: ObjectList) =>
  list.items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();

/** A store that records what the reflector tells it. */
class RecordingStore implements ReflectorStore<KubeObject> {
  readonly objects = new Map<string, KubeObject>();
  replaces = 0;
  add(obj: KubeObject) {
    this.objects.set(obj.metadata!.name!, obj);
  }
  update(obj: KubeObject) {
    this.objects.set(obj.metadata!.name!, obj);
  }
  delete(obj: KubeObject) {
    this.objects.delete(obj.metadata!.name!);
  }
  replace(list: KubeObject[]) {
    this.replaces++;
    this.objects.clear();
    for (const obj of list) this.objects.set(obj.metadata!.name!, obj);
  }
  resync() {}
}

/**
 * A ListerWatcher of config maps on whichever server `target()` names at each
 * call; a pending promise stands for a server that is down (calls wait for it).
 */
function listerWatcher(target: () => ApiServer | Promise<ApiServer>) {
  let lists = 0;
  return {
    get lists() {
      return lists;
    },
    list: async (options: object) => {
      lists++;
      return (await target()).registry.list(configMaps, "default", options);
    },
    watch: async (options: object) => (await target()).registry.watch(configMaps, "default", options),
  };
}

const here = fileURLToPath(new URL(".", import.meta.url));

/** An API server in its own process over the file's etcd; resolves with its URL. */
async function apiServerProcess(prefix: string): Promise<{ url: string; child: ChildProcess }> {
  const code = `
    import { ApiServer } from "@reconcile/apiserver";
    import { CachedStorage, EtcdStorage } from "@reconcile/storage-etcd";
    const storage = new CachedStorage({
      storage: new EtcdStorage({ endpoints: process.env.ETCD_ENDPOINTS, prefix: process.env.ETCD_PREFIX }),
    });
    const server = new ApiServer({ storage });
    const listening = await server.listen();
    console.log(JSON.stringify({ url: listening.url }));
  `;
  const child = spawn(
    process.execPath,
    ["--conditions=@reconcile/source", "--import", "tsx", "--input-type=module", "-e", code],
    {
      cwd: here,
      env: { ...process.env, ETCD_ENDPOINTS: etcd.endpoints.join(","), ETCD_PREFIX: prefix },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let output = "";
  let errors = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    errors += chunk.toString("utf8");
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const line = output.split("\n").find((l) => l.startsWith("{"));
      if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`API server process exited (${code}): ${errors}`)));
  });
  return { url, child };
}

async function request(
  url: string,
  method: string,
  body?: unknown,
): Promise<{ status: number; json: ObjectList & KubeObject }> {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as ObjectList & KubeObject };
}

describe("durability over etcd", () => {
  it("applies concurrent updates without a resourceVersion one after another, none refused (GuaranteedUpdate)", async () => {
    const server = apiServer("/concurrent-puts");
    const http = await server.listen();
    const path = `${http.url}/api/v1/namespaces/default/configmaps`;
    const created = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(configMap("shared")),
    });
    expect(created.status).toBe(201);
    const writers = Array.from({ length: 40 }, (_, i) =>
      fetch(`${path}/shared`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(configMap("shared", { [`writer${i}`]: "done" })),
      }).then((response) => response.status),
    );
    expect(await Promise.all(writers)).toEqual(Array.from({ length: 40 }, () => 200));
    const final = (await (await fetch(`${path}/shared`)).json()) as KubeObject & {
      data?: Record<string, string>;
    };
    expect(Object.keys(final.data ?? {})).toHaveLength(1);
  });

  it("brings back every object and resourceVersion after an API server process is killed with SIGKILL", async () => {
    const prefix = `/durable-${++prefixes}`;
    const first = await apiServerProcess(prefix);
    const created: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { status, json } = await request(
        `${first.url}/api/v1/namespaces/default/configmaps`,
        "POST",
        configMap(`cm-${i}`, { i: String(i) }),
      );
      expect(status).toBe(201);
      created.push(`cm-${i}@${json.metadata?.resourceVersion}`);
    }
    const updated = await request(`${first.url}/api/v1/namespaces/default/configmaps/cm-3`, "PUT", {
      ...configMap("cm-3", { i: "three" }),
      metadata: { name: "cm-3", namespace: "default", resourceVersion: created[3]!.split("@")[1] },
    });
    expect(updated.status).toBe(200);
    created[3] = `cm-3@${updated.json.metadata?.resourceVersion}`;
    const before = await request(`${first.url}/api/v1/namespaces/default/configmaps`, "GET");
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = apiServer(prefix);
    const after = await second.registry.list(configMaps, "default");
    expect(summary(after)).toEqual(created.sort());
    expect(summary(after)).toEqual(summary(before.json));
    expect(((await second.registry.get(configMaps, "default", "cm-3")) as { data: object }).data).toEqual({
      i: "three",
    });
  });

  it("lets a reflector resume its watch on the restarted server without a relist while the revision is in etcd's history", async () => {
    const prefix = `/resume-${++prefixes}`;
    const first = apiServer(prefix);
    let current: ApiServer | Promise<ApiServer> = first;
    const lw = listerWatcher(() => current);
    const store = new RecordingStore();
    const reflector = new Reflector({
      listerWatcher: lw as never,
      store,
      backoff: { initialMs: 10, maxMs: 50 },
    });
    const controller = new AbortController();
    const running = reflector.run({ signal: controller.signal });
    try {
      await first.registry.create(configMaps, "default", configMap("a"));
      await vi.waitFor(() => expect(store.objects.has("a")).toBe(true), eventually);
      // The server goes down; while it is down another server writes; then it comes back.
      let restart!: (server: ApiServer) => void;
      current = new Promise<ApiServer>((resolve) => {
        restart = resolve;
      });
      await first.close();
      await apiServer(prefix).registry.create(configMaps, "default", configMap("b"));
      const restarted = apiServer(prefix);
      restart(restarted);
      current = restarted;
      await restarted.registry.create(configMaps, "default", configMap("c"));
      await vi.waitFor(() => expect([...store.objects.keys()].sort()).toEqual(["a", "b", "c"]), eventually);
      expect(lw.lists).toBe(1);
      expect(store.replaces).toBe(1);
    } finally {
      controller.abort();
      await running;
    }
  });

  it("answers that reflector with 410 once etcd has compacted its revision, and the reflector relists", async () => {
    const prefix = `/compacted-${++prefixes}`;
    const first = apiServer(prefix);
    let current: ApiServer | Promise<ApiServer> = first;
    const lw = listerWatcher(() => current);
    const store = new RecordingStore();
    const reflector = new Reflector({
      listerWatcher: lw as never,
      store,
      backoff: { initialMs: 10, maxMs: 50 },
    });
    const controller = new AbortController();
    const running = reflector.run({ signal: controller.signal });
    try {
      await first.registry.create(configMaps, "default", configMap("a"));
      await vi.waitFor(() => expect(store.objects.has("a")).toBe(true), eventually);
      let restart!: (server: ApiServer) => void;
      current = new Promise<ApiServer>((resolve) => {
        restart = resolve;
      });
      await first.close();
      // While it is down, another server writes and etcd compacts past the reflector's version.
      const other = apiServer(prefix);
      await other.registry.create(configMaps, "default", configMap("b"));
      await other.registry.create(configMaps, "default", configMap("c"));
      const etcdStorage = (other.storage as CachedStorage).storage;
      await etcdStorage.client.kv.compact({ revision: await etcdStorage.currentRevision() });
      const restarted = apiServer(prefix);
      restart(restarted);
      current = restarted;
      await vi.waitFor(() => expect([...store.objects.keys()].sort()).toEqual(["a", "b", "c"]), eventually);
      expect(lw.lists).toBe(2);
    } finally {
      controller.abort();
      await running;
    }
  });

  it("converges two API servers over one etcd: a write through one reaches watchers of the other", async () => {
    const prefix = `/shared-${++prefixes}`;
    const one = apiServer(prefix);
    const two = apiServer(prefix);
    const storeOne = new RecordingStore();
    const storeTwo = new RecordingStore();
    const controller = new AbortController();
    const reflectors = [
      new Reflector({ listerWatcher: listerWatcher(() => one) as never, store: storeOne }),
      new Reflector({ listerWatcher: listerWatcher(() => two) as never, store: storeTwo }),
    ].map((reflector) => reflector.run({ signal: controller.signal }));
    try {
      for (let i = 0; i < 10; i++) {
        const server = i % 2 === 0 ? one : two;
        await server.registry.create(configMaps, "default", configMap(`cm-${i}`));
      }
      await two.registry.delete(configMaps, "default", "cm-0");
      const expected = Array.from({ length: 9 }, (_, i) => `cm-${i + 1}`).sort();
      const view = (store: RecordingStore) =>
        [...store.objects.values()].map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
      await vi.waitFor(() => {
        expect([...storeOne.objects.keys()].sort()).toEqual(expected);
        expect(view(storeTwo)).toEqual(view(storeOne));
      }, eventually);
      // A conflicting write through the other server is refused: etcd serialises both.
      const cm = await one.registry.get(configMaps, "default", "cm-1");
      await two.registry.update(configMaps, "default", "cm-1", { ...cm, data: { by: "two" } });
      await expect(
        one.registry.update(configMaps, "default", "cm-1", { ...cm, data: { by: "one" } }),
      ).rejects.toMatchObject({ status: { code: 409, reason: "Conflict" } });
    } finally {
      controller.abort();
      await Promise.all(reflectors);
    }
  });
});
