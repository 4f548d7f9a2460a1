import { describe, expect, it } from "vitest";
import { StorageError, type StorageEvent } from "./storage.js";
import { WatchChannel } from "./watch-channel.js";

// The one per-watcher channel of both storages: initial events before live ones, a slow reader
// closed with WatcherTooSlow, a failure delivered after what is queued (or alone when asked).

const added = (name: string, revision: number): StorageEvent => ({
  type: "ADDED",
  revision,
  object: { metadata: { name } },
});

async function drain(channel: WatchChannel): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of channel)
    seen.push(
      event.type === "ERROR"
        ? `ERROR ${event.error?.message}`
        : `${event.type} ${event.object?.metadata?.name}`,
    );
  return seen;
}

describe("WatchChannel", () => {
  it("delivers initial events first, however late they were queued, then live ones", async () => {
    const channel = new WatchChannel({ limit: 10, onStop: () => {} });
    channel.pushInitial([added("a", 1)]);
    channel.push(added("c", 3));
    channel.pushInitial([added("b", 2)]);
    channel.close("done");
    expect(await drain(channel)).toEqual(["ADDED a", "ADDED b", "ADDED c"]);
  });

  it("fails after what is queued, or alone when the backlog is to be dropped", async () => {
    const kept = new WatchChannel({ limit: 10, onStop: () => {} });
    kept.pushInitial([added("a", 1)]);
    kept.push(added("b", 2));
    kept.fail(new StorageError("Expired", "", "gone"), 2);
    expect(await drain(kept)).toEqual(["ADDED a", "ADDED b", "ERROR gone"]);

    const dropped = new WatchChannel({ limit: 10, onStop: () => {} });
    dropped.pushInitial([added("a", 1)]);
    dropped.push(added("b", 2));
    dropped.fail(new StorageError("Expired", "", "gone"), 2, true);
    expect(await drain(dropped)).toEqual(["ERROR gone"]);
  });

  it("closes a reader more than limit live events behind with one WatcherTooSlow, initial events not counted", async () => {
    const channel = new WatchChannel({ limit: 2, onStop: () => {} });
    channel.pushInitial([added("i1", 1), added("i2", 2), added("i3", 3)]);
    channel.push(added("a", 4));
    channel.push(added("b", 5));
    channel.push(added("c", 6));
    channel.push(added("d", 7));
    const seen = await drain(channel);
    expect(seen.slice(0, 5)).toEqual(["ADDED i1", "ADDED i2", "ADDED i3", "ADDED a", "ADDED b"]);
    expect(seen.slice(5)).toEqual([
      "ERROR the watcher fell more than 2 events behind and was closed; watch again from the last resourceVersion read",
    ]);
    expect(channel.closeReason).toContain("fell more than 2 events behind");
  });

  it("calls onStop and onClose once when it closes, and onClose at once on a closed channel", () => {
    const calls: string[] = [];
    const channel = new WatchChannel({ limit: 2, onStop: () => calls.push("stop") });
    channel.onClose(() => calls.push("close"));
    channel.stop();
    channel.close("again");
    channel.onClose(() => calls.push("late"));
    expect(calls).toEqual(["stop", "close", "late"]);
    expect(channel.closeReason).toBe("stopped");
  });

  it("wakes a waiting reader for an event pushed later, and ends it on close", async () => {
    const channel = new WatchChannel({ limit: 2, onStop: () => {} });
    const iterator = channel[Symbol.asyncIterator]();
    const next = iterator.next();
    channel.pushInitial([]);
    channel.push(added("a", 1));
    expect((await next).value).toMatchObject({ type: "ADDED", revision: 1 });
    const end = iterator.next();
    channel.close("done");
    expect(await end).toEqual({ done: true, value: undefined });
  });
});
