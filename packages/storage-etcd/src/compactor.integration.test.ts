import { FakeClock } from "@reconcile/clock";
import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEtcdClient } from "./client.js";
import { Compactor, compactRevisionKey } from "./compactor.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

/** Generous: the machine running the tests may be busy. */
const eventually = { timeout: 10_000, interval: 20 };

let etcd: EtcdCluster;
let client: Etcd3;

beforeAll(async () => {
  etcd = await startEtcd();
  client = createEtcdClient(etcd.endpoints);
});

afterAll(async () => {
  client?.close();
  await etcd?.stop();
});

async function write(count: number): Promise<number> {
  let revision = 0;
  for (let i = 0; i < count; i++)
    revision = Number((await client.put(`/registry/x/${i}`).value(String(i)).exec()).header.revision);
  return revision;
}

async function readableAt(revision: number): Promise<boolean> {
  try {
    await client.kv.range({ key: Buffer.from("/registry/x/0"), revision });
    return true;
  } catch (error) {
    expect(String(error)).toContain("required revision has been compacted");
    return false;
  }
}

describe("Compactor (kube-apiserver's compactor on compact_rev_key)", () => {
  it("compacts to the revision it saw one round earlier, never in its first round, and keeps a round of history", async () => {
    const compactor = new Compactor({ client });
    await write(3);
    expect(await compactor.compactOnce()).toBeUndefined();
    const seenInFirstRound = Number(
      (await client.kv.range({ key: Buffer.from(compactRevisionKey) })).header.revision,
    );
    const later = await write(3);
    expect(await compactor.compactOnce()).toBe(seenInFirstRound);
    expect(await readableAt(seenInFirstRound - 1)).toBe(false);
    expect(await readableAt(seenInFirstRound)).toBe(true);
    expect(await readableAt(later)).toBe(true);
  });

  it("compacts once per round between several servers: the one that loses the race adopts the round", async () => {
    const a = new Compactor({ client });
    const b = new Compactor({ client });
    const compact = vi.spyOn(client.kv, "compact");
    const rounds: (number | undefined)[][] = [];
    for (let round = 0; round < 4; round++) {
      await write(2);
      rounds.push([await a.compactOnce(), await b.compactOnce()]);
    }
    // Each round one of the two writes compact_rev_key; every compaction target is a distinct, rising revision.
    const targets = compact.mock.calls.map(([request]) => Number(request.revision));
    expect(targets).toEqual([...targets].sort((x, y) => x - y));
    expect(new Set(targets).size).toBe(targets.length);
    expect(rounds.every((pair) => pair.filter((x) => x !== undefined).length <= 1)).toBe(true);
    compact.mockRestore();
  });

  it("runs a round every interval until its signal aborts", async () => {
    const clock = new FakeClock();
    const compactor = new Compactor({ client, clock, intervalMs: 60_000 });
    const compact = vi.spyOn(client.kv, "compact");
    const controller = new AbortController();
    const running = compactor.run({ signal: controller.signal });
    const txn = vi.spyOn(client.kv, "txn");
    await clock.advance(59_999);
    expect(txn).not.toHaveBeenCalled();
    await clock.advance(1);
    await vi.waitFor(() => expect(txn).toHaveBeenCalledTimes(1), eventually);
    await write(1);
    // The first round ends (and arms the next one) after its txn answers: advance only then.
    await vi.waitFor(() => expect(clock.pendingTimers()).toHaveLength(1), eventually);
    await clock.advance(60_000);
    await vi.waitFor(() => expect(compact).toHaveBeenCalledTimes(1), eventually);
    controller.abort();
    await running;
    expect(clock.pendingTimers()).toEqual([]);
    compact.mockRestore();
    txn.mockRestore();
  });
});
