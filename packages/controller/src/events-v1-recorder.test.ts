import { events, eventsV1Events, namespaces } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { closeKubectlClusters, kubectlCluster } from "@reconcile/apiserver/testing";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ClientEventsV1Recorder } from "./events-v1-recorder.js";

// events.k8s.io/v1 Events as client-go's tools/events records them, on the
// embedded API server: the Event, its core/v1 view (what kubectl reads), and
// the series a repeat becomes (broadcaster's recordToSink, finishSeries and
// refreshExistingEventSeries).

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-1", namespace: "prod", uid: "pod-uid", resourceVersion: "12" },
};
const start = Date.parse("2026-01-02T03:04:05Z");
const minute = 60_000;

let closing: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closing?.();
  closing = undefined;
});

async function setup() {
  const clock = new FakeClock(start);
  const api = new ApiServer({ clock });
  closing = () => api.close();
  const client = api.client();
  await client.resource(namespaces).create({ metadata: { name: "prod" } });
  const recorder = new ClientEventsV1Recorder({
    client,
    reportingController: "default-scheduler",
    reportingInstance: "default-scheduler-host-a",
    clock,
  });
  const stored = async () => (await client.resource(eventsV1Events, "prod").list()).items;
  return { clock, client, recorder, stored };
}

describe("ClientEventsV1Recorder", () => {
  it("writes an events.k8s.io Event that core/v1 shows without the legacy counters", async () => {
    const { client, recorder, stored } = await setup();
    recorder.event(pod, "Normal", "Scheduled", "Successfully assigned prod/web-1 to node-1", {
      action: "Binding",
    });
    await recorder.flush();
    const [event] = await stored();
    expect(event?.metadata?.name).toMatch(/^web-1\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      eventTime: "2026-01-02T03:04:05.000000Z",
      reportingController: "default-scheduler",
      reportingInstance: "default-scheduler-host-a",
      action: "Binding",
      reason: "Scheduled",
      regarding: pod.metadata && { apiVersion: "v1", kind: "Pod", ...pod.metadata },
      note: "Successfully assigned prod/web-1 to node-1",
      type: "Normal",
    });
    expect(event?.series).toBeUndefined();
    const core = (await client.resource(events, "prod").list()).items[0]!;
    expect(core).toMatchObject({
      message: "Successfully assigned prod/web-1 to node-1",
      reportingComponent: "default-scheduler",
      reportingInstance: "default-scheduler-host-a",
      action: "Binding",
      firstTimestamp: null,
      lastTimestamp: null,
      source: {},
    });
    expect(core.count).toBeUndefined();
  });

  it("turns a repeat within six minutes into a series on the first Event, whatever its note, and counts without writing", async () => {
    const { clock, recorder, stored } = await setup();
    recorder.event(pod, "Warning", "FailedScheduling", "0/3 nodes are available.", { action: "Scheduling" });
    await recorder.flush();
    await clock.advance(minute);
    recorder.event(pod, "Warning", "FailedScheduling", "0/4 nodes are available.", { action: "Scheduling" });
    await recorder.flush();
    let [event] = await stored();
    expect(await stored()).toHaveLength(1);
    expect(event?.note).toBe("0/3 nodes are available.");
    expect(event?.series).toEqual({ count: 2, lastObservedTime: "2026-01-02T03:05:05.000000Z" });
    const written = event?.metadata?.resourceVersion;

    // Later repeats are counted, and written again only after the refresh time (30 minutes).
    for (let i = 0; i < 3; i++) {
      await clock.advance(minute);
      recorder.event(pod, "Warning", "FailedScheduling", "again", { action: "Scheduling" });
    }
    await recorder.flush();
    [event] = await stored();
    expect(event?.metadata?.resourceVersion).toBe(written);
    for (let i = 0; i < 6; i++) {
      await clock.advance(5 * minute);
      recorder.event(pod, "Warning", "FailedScheduling", "again", { action: "Scheduling" });
    }
    await recorder.flush();
    [event] = await stored();
    expect(event?.series).toEqual({ count: 11, lastObservedTime: "2026-01-02T03:38:05.000000Z" });
  });

  it("starts a new Event after six quiet minutes, for another action or object, and when the first is gone", async () => {
    const { clock, client, recorder, stored } = await setup();
    const fail = (object = pod, action = "Scheduling") =>
      recorder.event(object, "Warning", "FailedScheduling", "no fit", { action });
    fail();
    await recorder.flush();
    await clock.advance(6 * minute + 1_000);
    fail();
    fail(pod, "Preempting");
    fail({ ...pod, metadata: { ...pod.metadata, resourceVersion: "13" } });
    await recorder.flush();
    expect(await stored()).toHaveLength(4);
    expect((await stored()).every((event) => event.series === undefined)).toBe(true);

    for (const event of await stored())
      await client.resource(eventsV1Events, "prod").delete(event.metadata!.name!);
    fail();
    await recorder.flush();
    expect((await stored()).map((event) => event.series)).toEqual([undefined]);
  });

  it("records a related object, and reports its own instance by host name by default", async () => {
    const { client, clock } = await setup();
    const recorder = new ClientEventsV1Recorder({ client, reportingController: "default-scheduler", clock });
    const preemptor = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "vip", namespace: "prod", uid: "vip-uid" },
    };
    recorder.event(pod, "Normal", "Preempted", "Preempted by prod/vip on node node-1", {
      action: "Preempting",
      related: preemptor,
    });
    await recorder.flush();
    const [event] = (await client.resource(eventsV1Events, "prod").list()).items;
    expect(event?.related).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      name: "vip",
      namespace: "prod",
      uid: "vip-uid",
    });
    expect(event?.reportingInstance).toBe(`default-scheduler-${(await import("node:os")).hostname()}`);
  });
});

describe("kubectl and the recorder's Events", () => {
  afterEach(closeKubectlClusters);

  it("prints upstream's Event table: the series' count and last time, the reporting controller and instance", async () => {
    const clock = new FakeClock(Date.now());
    const { kubectl, client } = await kubectlCluster({ clock });
    const recorder = new ClientEventsV1Recorder({
      client,
      reportingController: "default-scheduler",
      reportingInstance: "default-scheduler-host-a",
      clock,
    });
    const target = { ...pod, metadata: { ...pod.metadata, namespace: "default" } };
    recorder.event(target, "Warning", "FailedScheduling", "0/3 nodes are available.", {
      action: "Scheduling",
    });
    await recorder.flush();
    await clock.advance(2 * minute);
    recorder.event(target, "Warning", "FailedScheduling", "0/3 nodes are available.", {
      action: "Scheduling",
    });
    await recorder.flush();
    const wide = await kubectl(["get", "events", "-o", "wide", "--no-headers"]);
    const cells = wide.stdout.trim().split(/\s{2,}/);
    // LAST SEEN, TYPE, REASON, OBJECT, SUBOBJECT (empty, so absent), SOURCE, MESSAGE, FIRST SEEN, COUNT, NAME.
    expect(cells.slice(1, 8)).toEqual([
      "Warning",
      "FailedScheduling",
      "pod/web-1",
      "default-scheduler, default-scheduler-host-a",
      "0/3 nodes are available.",
      expect.stringMatching(/^\d+m\d*s?$/),
      "2",
    ]);
  });
});
