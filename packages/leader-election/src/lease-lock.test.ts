import { isConflict, isNotFound, type KubeObject } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { LeaderElectionError } from "./errors.js";
import { LeaseLock } from "./lease-lock.js";
import type { LeaderElectionRecord } from "./record.js";
import { FakeLeaseClient } from "./testing/index.js";

const record = (holderIdentity: string, leaderTransitions = 0): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  acquireTime: "2026-11-22T18:00:00.000000Z",
  renewTime: "2026-11-22T18:00:00.000000Z",
  leaderTransitions,
});

function setup(identity = "baz", extra: { labels?: Record<string, string> } = {}) {
  const client = new FakeLeaseClient({ clock: new FakeClock() });
  const events: { object: KubeObject; text: string }[] = [];
  const eventRecorder = {
    event: (object: KubeObject, type: string, reason: string, message: string) =>
      events.push({ object, text: `${type} ${reason} ${message}` }),
  };
  const lock = new LeaseLock({ client, namespace: "foo", name: "bar", identity, eventRecorder, ...extra });
  return { client, lock, events };
}

describe("LeaseLock", () => {
  it("get fails with NotFound while there is no Lease", async () => {
    const { lock } = setup();
    await expect(lock.get()).rejects.toSatisfy(isNotFound);
  });

  it("create writes the record into the Lease spec and get reads it back with its raw JSON", async () => {
    const { lock, client } = setup();
    await lock.create(record("baz"));
    expect(client.stored("foo", "bar")?.spec).toEqual({
      holderIdentity: "baz",
      leaseDurationSeconds: 15,
      acquireTime: "2026-11-22T18:00:00.000000Z",
      renewTime: "2026-11-22T18:00:00.000000Z",
      leaseTransitions: 0,
    });
    const got = await lock.get();
    expect(got.record).toEqual(record("baz"));
    expect(got.raw).toBe(
      '{"holderIdentity":"baz","leaseDurationSeconds":15,"acquireTime":"2026-11-22T18:00:00.000000Z","renewTime":"2026-11-22T18:00:00.000000Z","leaderTransitions":0}',
    );
  });

  it("update before any get or create fails clearly and sends nothing", async () => {
    const { lock, client } = setup();
    const failure = lock.update(record("baz"));
    await expect(failure).rejects.toThrow("lease not initialized, call get or create first");
    await expect(failure).rejects.toSatisfy(
      (e: unknown) => LeaderElectionError.isInstance(e) && e.code === "leader-election.lock-not-initialized",
    );
    expect(client.actions).toEqual([]);
  });

  it("update is conditional on the resourceVersion last read: a write in between makes it a Conflict", async () => {
    const { client, lock } = setup("a");
    const other = new LeaseLock({ client, namespace: "foo", name: "bar", identity: "b" });
    await lock.create(record("a"));
    await other.get();
    await lock.update(record("a", 0));
    await expect(other.update(record("b", 1))).rejects.toSatisfy(isConflict);
    expect(client.stored("foo", "bar")?.spec?.holderIdentity).toBe("a");
    await other.get();
    await other.update(record("b", 1));
    expect(client.stored("foo", "bar")?.spec?.holderIdentity).toBe("b");
  });

  it("update after its own successful update needs no get in between", async () => {
    const { lock, client } = setup();
    await lock.create(record("baz"));
    await lock.update(record("baz"));
    await lock.update(record("baz"));
    expect(client.actions.map((a) => a.verb)).toEqual(["create", "update", "update"]);
  });

  it("sets its labels on create, and a lock without labels leaves them in place on update", async () => {
    const { lock, client } = setup("a", { labels: { role: "leader" } });
    await lock.create(record("a"));
    expect(client.stored("foo", "bar")?.metadata?.labels).toEqual({ role: "leader" });
    const plain = new LeaseLock({ client, namespace: "foo", name: "bar", identity: "b" });
    await plain.get();
    await plain.update(record("b", 1));
    expect(client.stored("foo", "bar")?.metadata?.labels).toEqual({ role: "leader" });
  });

  it("records events as '<identity> <message>' with reason LeaderElection on the Lease", async () => {
    const { lock, events } = setup();
    await lock.create(record("baz"));
    lock.recordEvent("became leader");
    expect(events.map((e) => e.text)).toEqual(["Normal LeaderElection baz became leader"]);
    expect(events[0]!.object).toMatchObject({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { namespace: "foo", name: "bar", resourceVersion: "1" },
    });
  });

  it("records no event without a recorder", async () => {
    const client = new FakeLeaseClient();
    const lock = new LeaseLock({ client, namespace: "foo", name: "bar", identity: "baz" });
    expect(() => lock.recordEvent("became leader")).not.toThrow();
  });

  it("describes itself as namespace/name and reports its identity", () => {
    const { lock } = setup("me");
    expect(lock.describe()).toBe("foo/bar");
    expect(lock.identity()).toBe("me");
  });

  it.each([
    [
      { namespace: "", name: "bar", identity: "x" },
      'LeaseLock: namespace must be a non-empty string, got ""',
    ],
    [{ namespace: "foo", name: "", identity: "x" }, 'LeaseLock: name must be a non-empty string, got ""'],
    [{ namespace: "foo", name: "bar", identity: 7 }, "LeaseLock: identity must be a string, got number"],
  ])("rejects bad options %j with a message naming the field", (options, message) => {
    const client = new FakeLeaseClient();
    expect(
      () => new LeaseLock({ client, ...(options as { namespace: string; name: string; identity: string }) }),
    ).toThrow(message);
  });

  it("rejects a missing client", () => {
    expect(
      () => new LeaseLock({ client: undefined as never, namespace: "foo", name: "bar", identity: "x" }),
    ).toThrow("LeaseLock: client must be a Client");
  });
});
