import { type Event, events, newInternalError, newNotFound } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ClientEventRecorder } from "./event-recorder.js";
import { RecordingClient } from "./testing/recording-client.js";

const rs = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web", namespace: "prod", uid: "rs-uid", resourceVersion: "7" },
};

function setup(options: { spamBurst?: number } = {}) {
  const client = new RecordingClient();
  const clock = new FakeClock(Date.parse("2026-01-02T03:04:05Z"));
  const recorder = new ClientEventRecorder({ client, component: "replicaset-controller", clock, ...options });
  return { client, clock, recorder };
}

describe("ClientEventRecorder", () => {
  it("writes a core/v1 Event about the object", async () => {
    const { client, recorder } = setup();
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: web-abcde");
    await recorder.flush();
    const created = client.actionsOf("create", "events");
    expect(created).toHaveLength(1);
    const event = created[0]!.body as Event;
    expect(created[0]!.namespace).toBe("prod");
    expect(event.metadata?.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      involvedObject: {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "web",
        namespace: "prod",
        uid: "rs-uid",
        resourceVersion: "7",
      },
      type: "Normal",
      reason: "SuccessfulCreate",
      message: "Created pod: web-abcde",
      source: { component: "replicaset-controller" },
      count: 1,
      firstTimestamp: "2026-01-02T03:04:05Z",
      lastTimestamp: "2026-01-02T03:04:05Z",
    });
  });

  it("names an event from whole milliseconds when the clock stands between two", async () => {
    const { client, clock, recorder } = setup();
    await clock.advance(0.25);
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: web-abcde");
    await recorder.flush();
    const event = client.actionsOf("create", "events")[0]!.body as Event;
    const millis = BigInt(Date.parse("2026-01-02T03:04:05Z"));
    expect(event.metadata?.name).toBe(`web.${(millis * 1_000_000n).toString(16)}`);
  });

  it("aggregates a repeated event into count and lastTimestamp of the first Event", async () => {
    const { client, clock, recorder } = setup();
    recorder.event(rs, "Warning", "FailedCreate", "Error creating: quota");
    await clock.advance(2000);
    recorder.event(rs, "Warning", "FailedCreate", "Error creating: quota");
    recorder.event(rs, "Warning", "FailedCreate", "Error creating: quota");
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(1);
    expect(client.actionsOf("patch", "events").map((a) => a.body)).toEqual([
      { count: 2, lastTimestamp: "2026-01-02T03:04:07Z", message: "Error creating: quota" },
      { count: 3, lastTimestamp: "2026-01-02T03:04:07Z", message: "Error creating: quota" },
    ]);
    const stored = [...client.store(events, "prod").values()] as Event[];
    expect(stored.map((e) => [e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([
      [3, "2026-01-02T03:04:05Z", "2026-01-02T03:04:07Z"],
    ]);
  });

  it("creates separate Events for different messages", async () => {
    const { client, recorder } = setup();
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: a");
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: b");
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(2);
    const names = client.actionsOf("create", "events").map((a) => (a.body as Event).metadata?.name);
    expect(new Set(names).size).toBe(2);
  });

  it("creates a new Event when the aggregated one is gone", async () => {
    const { client, recorder } = setup();
    recorder.event(rs, "Normal", "Scaled", "up");
    await recorder.flush();
    client.reactors.push((action) =>
      action.verb === "patch" ? newNotFound({ group: "", resource: "events" }, action.name) : undefined,
    );
    recorder.event(rs, "Normal", "Scaled", "up");
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(2);
  });

  it("drops events beyond the per-object burst and refills one per five minutes", async () => {
    const { client, clock, recorder } = setup({ spamBurst: 3 });
    for (let i = 0; i < 5; i++) recorder.event(rs, "Normal", "SuccessfulCreate", `Created pod: p${i}`);
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(3);
    await clock.advance(299_000);
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: late");
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(3);
    await clock.advance(1_000);
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: later");
    await recorder.flush();
    expect(client.actionsOf("create", "events")).toHaveLength(4);
  });

  it("logs a failed write and keeps going", async () => {
    const client = new RecordingClient();
    const logged: unknown[] = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error(obj: Record<string, unknown>, msg?: string) {
        logged.push([obj.reason, msg]);
      },
      child() {
        return logger;
      },
    };
    const recorder = new ClientEventRecorder({ client, component: "c", logger });
    client.reactors.push(() => newInternalError("disk full"));
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: a");
    await recorder.flush();
    expect(logged).toEqual([["SuccessfulCreate", "failed to write event"]]);
  });

  it("a logger that throws on a failed write does not stop later events or flush", async () => {
    const client = new RecordingClient();
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error() {
        throw new Error("logger broke");
      },
      child() {
        return logger;
      },
    };
    const recorder = new ClientEventRecorder({ client, component: "c", logger });
    let failures = 1;
    client.reactors.push(() => (failures-- > 0 ? newInternalError("disk full") : undefined));
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: a");
    recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: a");
    await expect(recorder.flush()).resolves.toBeUndefined();
    expect(client.actionsOf("create", "events")).toHaveLength(2);
  });

  it("refuses an object without kind and writes nothing", async () => {
    const { client, recorder } = setup();
    recorder.event({ metadata: { name: "x" } }, "Normal", "R", "m");
    await recorder.flush();
    expect(client.actions).toEqual([]);
  });

  it("requires a component", () => {
    expect(() => new ClientEventRecorder({ client: new RecordingClient(), component: "" })).toThrow(
      "ClientEventRecorder: component is required",
    );
  });
});
