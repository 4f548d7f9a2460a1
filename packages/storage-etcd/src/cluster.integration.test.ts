import { isTimeout, type KubeObject, StatusError } from "@reconcile/api";
import { StorageError, type StorageEvent, type StorageWatcher } from "@reconcile/apiserver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdCluster, startEtcdCluster } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";

let cluster: EtcdCluster;
let storage: EtcdStorage;

beforeAll(async () => {
  cluster = await startEtcdCluster({ members: 3 });
  storage = new EtcdStorage({
    endpoints: cluster.endpoints,
    compactionIntervalMs: 0,
    requestTimeoutMs: 3_000,
  });
});

afterAll(async () => {
  storage?.close();
  await cluster?.stop();
});

function configMap(name: string): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } } as KubeObject;
}

/**
 * Creates `name` until etcd has it exactly once: a failure whose outcome is
 * unknown (the member died with the request in flight) is settled by creating
 * again — AlreadyExists then proves the first attempt was committed.
 */
async function createSurely(name: string, failures: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await storage.create(`/core/configmaps/default/${name}`, configMap(name));
      return;
    } catch (error) {
      if (attempt > 0 && StorageError.is(error, "KeyExists")) return;
      failures.push((error as Error).message);
      if (attempt > 20) throw error;
    }
  }
}

async function take(watcher: StorageWatcher, count: number): Promise<StorageEvent[]> {
  const iterator = watcher[Symbol.asyncIterator]();
  const events: StorageEvent[] = [];
  while (events.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    events.push(next.value);
  }
  return events;
}

describe("a 3-member etcd cluster on loopback", () => {
  it("has three started members", async () => {
    const { members } = await storage.client.cluster.memberList({});
    expect(members.map((m) => m.name.replace(/-\d+-\d+$/, "")).sort()).toEqual(["m1", "m2", "m3"]);
    expect(members.every((m) => m.clientURLs.length === 1)).toBe(true);
  });

  it("keeps taking writes when one member stops mid-stream, and its watchers lose and repeat nothing", async () => {
    const base = await storage.currentRevision();
    const watcher = storage.watch("/core/configmaps/", { fromRevision: base });
    const failures: string[] = [];
    const names = Array.from({ length: 60 }, (_, i) => `cm-${String(i).padStart(2, "0")}`);
    for (const [i, name] of names.entries()) {
      if (i === 20) await cluster.members[0]!.kill();
      await createSurely(name, failures);
    }
    const events = await take(watcher, names.length);
    expect(events.map((e) => `${e.type} ${e.object?.metadata?.name}`)).toEqual(
      names.map((n) => `ADDED ${n}`),
    );
    const revisions = events.map((e) => e.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(new Set(revisions).size).toBe(revisions.length);
    const listed = await storage.list("/core/configmaps/");
    expect(listed.items.map((o) => o.metadata?.name)).toEqual(names);
    // Only writes around the stop failed ("etcdserver: request timed out" while a new leader was
    // elected); their outcome was unknown to the client and was settled by creating again.
    expect(failures.length).toBeLessThanOrEqual(3);
    watcher.stop();
  });

  it("fails writes with an error naming etcd once quorum is lost, and recovers when the members return", async () => {
    // One member is already down; stopping a second loses quorum.
    await cluster.members[1]!.kill();
    const failure = await storage
      .create("/core/configmaps/default/no-quorum", configMap("no-quorum"))
      .catch((e) => e);
    expect(failure).toBeInstanceOf(StatusError);
    const status = (failure as StatusError).status;
    expect(isTimeout(failure) || status.code === 500).toBe(true);
    expect(status.message).toMatch(/etcd/);
    await Promise.all([cluster.members[0]!.restart(), cluster.members[1]!.restart()]);
    const failures: string[] = [];
    await createSurely("after-recovery", failures);
    const got = await storage.get("/core/configmaps/default/after-recovery");
    expect(got?.metadata?.name).toBe("after-recovery");
  });
});
