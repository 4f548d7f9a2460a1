import { type Event, events, eventsV1Events, type KubeObject, StatusError } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import type { Event as EventsV1 } from "kubernetes-types/events/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// events.k8s.io/v1 Events are the core Events under the newer API's names,
// as kube-apiserver serves them (pkg/apis/events/v1 conversion and
// pkg/apis/core/validation's ValidateEventCreate/Update).

afterEach(closeKubectlClusters);

type Newer = EventsV1 & KubeObject;

const coreEvent: Event = {
  apiVersion: "v1",
  kind: "Event",
  metadata: { name: "web.1", namespace: "default" },
  involvedObject: { kind: "Pod", namespace: "default", name: "web", uid: "u1" },
  reason: "Scheduled",
  message: "Successfully assigned default/web to node-1",
  source: { component: "default-scheduler" },
  firstTimestamp: "2026-01-01T00:00:00Z",
  lastTimestamp: "2026-01-01T00:00:05Z",
  count: 2,
  type: "Normal",
} as Event;

const newerEvent = (name: string, extra: Partial<EventsV1> = {}): Newer =>
  ({
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name, namespace: "default" },
    eventTime: "2026-01-01T00:00:00.000000Z",
    reportingController: "example.com/operator",
    reportingInstance: "operator-0",
    action: "Reconcile",
    reason: "Synced",
    regarding: { kind: "Deployment", namespace: "default", name: "web" },
    note: "all good",
    type: "Normal",
    ...extra,
  }) as Newer;

function server() {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:10Z")) });
  return {
    api,
    core: api.client().resource(events, "default"),
    newer: api.client().resource(eventsV1Events, "default"),
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof StatusError) return `${error.status.code} ${error.status.message}`;
    throw error;
  }
  throw new Error("the write was accepted");
}

describe("events.k8s.io/v1 Events", () => {
  it("serve the core Events under the newer names, one object in both APIs", async () => {
    const { api, core, newer } = server();
    try {
      const created = await core.create(coreEvent);
      const read = (await newer.get("web.1")) as Newer & Record<string, unknown>;
      expect(read).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        eventTime: null,
        regarding: { kind: "Pod", namespace: "default", name: "web", uid: "u1" },
        reason: "Scheduled",
        note: "Successfully assigned default/web to node-1",
        deprecatedSource: { component: "default-scheduler" },
        deprecatedFirstTimestamp: "2026-01-01T00:00:00Z",
        deprecatedLastTimestamp: "2026-01-01T00:00:05Z",
        deprecatedCount: 2,
        type: "Normal",
      });
      for (const coreName of ["involvedObject", "message", "source", "firstTimestamp", "count"])
        expect(read[coreName]).toBeUndefined();
      // The core type writes its empty reporting fields; this one leaves empty strings out.
      expect((await core.get("web.1")).reportingComponent).toBe("");
      expect(read.reportingController).toBeUndefined();
      expect(read.reportingInstance).toBeUndefined();
      expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
      expect(read.metadata?.uid).toBe(created.metadata?.uid);
      expect((await newer.list({})).items.map((e) => e.metadata?.name)).toEqual(["web.1"]);
      expect(
        (await newer.list({ fieldSelector: "involvedObject.kind=Pod,reportingComponent=" })).items,
      ).toHaveLength(1);
      expect((await newer.list({ fieldSelector: "involvedObject.kind=Node" })).items).toHaveLength(0);
      // A delete through either API deletes the one object.
      await newer.delete("web.1");
      expect((await core.list({})).items).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("a create through events.k8s.io is stored as a core Event, and a watch in either API sees it", async () => {
    const { api, core, newer } = server();
    const stop = new AbortController();
    try {
      const watch = (await core.watch({ signal: stop.signal }))[Symbol.asyncIterator]();
      const created = await newer.create(newerEvent("synced"));
      expect(created.note).toBe("all good");
      const seen = (await watch.next()).value as { type: string; object: Event };
      expect(seen.type).toBe("ADDED");
      expect(seen.object).toMatchObject({
        apiVersion: "v1",
        involvedObject: { kind: "Deployment", name: "web" },
        message: "all good",
        reportingComponent: "example.com/operator",
        reportingInstance: "operator-0",
        action: "Reconcile",
        eventTime: "2026-01-01T00:00:00.000000Z",
      });
      expect((seen.object as unknown as Record<string, unknown>).note).toBeUndefined();
    } finally {
      stop.abort();
      await api.close();
    }
  });

  it("checks a create with the newer API's rules, naming fields as upstream does", async () => {
    const { api, newer } = server();
    try {
      expect(
        await refusal(
          newer.create({
            ...newerEvent("bad"),
            eventTime: undefined,
            reportingController: "",
            type: "Odd",
            deprecatedCount: 3,
            series: { count: 1 },
          } as never),
        ),
      ).toBe(
        [
          '422 Event.events.k8s.io "bad" is invalid: [',
          'series.count: Invalid value: "": should be at least 2, ',
          "series.lastObservedTime: Required value, ",
          "eventTime: Required value, ",
          'type: Invalid value: "": has invalid value: Odd, ',
          'deprecatedCount: Invalid value: "": needs to be unset]',
        ].join(""),
      );
      expect(await refusal(newer.create(newerEvent("bad2", { reportingController: "", action: "" })))).toBe(
        [
          '422 Event.events.k8s.io "bad2" is invalid: [',
          "reportingController: Required value, ",
          'reportingController: Invalid value: "": name part must be non-empty, ',
          "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), ",
          "action: Required value]",
        ].join(""),
      );
    } finally {
      await api.close();
    }
  });

  it("an update may change the series only; a core Event stays updatable through the newer API", async () => {
    const { api, core, newer } = server();
    try {
      const created = await newer.create(newerEvent("synced"));
      const counted = await newer.update({
        ...created,
        series: { count: 2, lastObservedTime: "2026-01-01T00:00:09.000000Z" },
      } as Newer);
      expect(counted.series).toEqual({ count: 2, lastObservedTime: "2026-01-01T00:00:09.000000Z" });
      expect(await refusal(newer.update({ ...counted, note: "changed", action: "Other" } as Newer))).toBe(
        '422 Event.events.k8s.io "synced" is invalid: [message: Invalid value: "changed": field is immutable, action: Invalid value: "Other": field is immutable]',
      );
      // The create-only rules (eventTime, no deprecated fields) do not hold an older event back.
      await core.create(coreEvent);
      const legacy = (await newer.get("web.1")) as Newer;
      const labelled = await newer.update({
        ...legacy,
        metadata: { ...legacy.metadata, labels: { a: "b" } },
      } as Newer);
      expect(labelled.metadata?.labels).toEqual({ a: "b" });
      expect(labelled.deprecatedCount).toBe(2);
    } finally {
      await api.close();
    }
  });
});

describe("field ownership across the two APIs", () => {
  it("each manager keeps its fields under its own version's names, and loses them to a write through the other", async () => {
    const { api, core, newer } = server();
    try {
      const created = await newer.create(newerEvent("owned"), { fieldManager: "recorder" });
      const recorderFields = entryOf(created, "recorder");
      expect(recorderFields?.apiVersion).toBe("events.k8s.io/v1");
      expect(Object.keys(recorderFields?.fieldsV1 ?? {})).toEqual([
        "f:action",
        "f:eventTime",
        "f:note",
        "f:reason",
        "f:regarding",
        "f:reportingController",
        "f:reportingInstance",
        "f:type",
      ]);
      // A core write of `message` is a write of the recorder's `note`: the recorder loses it.
      const stored = await core.get("owned");
      const rewritten = await core.update({ ...stored, message: "rewritten" }, { fieldManager: "editor" });
      expect(entryOf(rewritten, "editor")).toMatchObject({ apiVersion: "v1", fieldsV1: { "f:message": {} } });
      expect(Object.keys(entryOf(rewritten, "recorder")?.fieldsV1 ?? {})).not.toContain("f:note");
      expect(Object.keys(entryOf(rewritten, "recorder")?.fieldsV1 ?? {})).toContain("f:reason");
      // And the other way: a series rewritten through events.k8s.io takes its counts from the core manager.
      const counted = await core.update(
        { ...rewritten, series: { count: 2, lastObservedTime: "2026-01-01T00:00:09.000000Z" } },
        { fieldManager: "core-counter" },
      );
      const again = (await newer.get("owned")) as Newer;
      const recounted = await newer.update(
        { ...again, series: { count: 3, lastObservedTime: "2026-01-01T00:00:10.000000Z" } } as Newer,
        { fieldManager: "new-counter" },
      );
      expect(entryOf(counted, "core-counter")?.fieldsV1).toEqual({
        "f:series": { ".": {}, "f:count": {}, "f:lastObservedTime": {} },
      });
      expect(entryOf(recounted, "core-counter")?.fieldsV1).toEqual({ "f:series": {} });
      expect(entryOf(recounted, "new-counter")).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        fieldsV1: { "f:series": { "f:count": {}, "f:lastObservedTime": {} } },
      });
    } finally {
      await api.close();
    }
  });
});

function entryOf(object: KubeObject, manager: string) {
  return object.metadata?.managedFields?.find((entry) => entry.manager === manager) as
    | { apiVersion?: string; fieldsV1?: Record<string, unknown> }
    | undefined;
}

describe("kubectl and events.k8s.io", () => {
  it("lists either API's Events with the Event table and shows the newer names in YAML", async () => {
    const { kubectl, client } = await kubectlCluster();
    await client.resource(events, "default").create(coreEvent);
    const table = await kubectl(["get", "events.events.k8s.io"]);
    expect(table.stdout).toMatch(
      /^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE\n\S+ +Normal +Scheduled +pod\/web +Successfully assigned default\/web to node-1\n$/,
    );
    const yaml = await kubectl([
      "get",
      "events.v1.events.k8s.io",
      "web.1",
      "-o",
      "jsonpath={.regarding.name} {.note} {.deprecatedCount}",
    ]);
    expect(yaml.stdout).toBe("web Successfully assigned default/web to node-1 2");
    expect((await kubectl(["api-versions"])).stdout).toContain("events.k8s.io/v1\n");
  });
});
