import type { KubeObject } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { type StorageChange, watchEventFor } from "./watch-events.js";

const pod = (app: string, rv: string): KubeObject => ({
  metadata: { name: "p", namespace: "ns", labels: { app }, resourceVersion: rv },
});
const web = (object: KubeObject) => object.metadata?.labels?.app === "web";

// The transitions of upstream's `cacheWatcher.convertToWatchEvent`: each change
// against a watcher selecting app=web, the event it becomes (or none).
const cases: {
  name: string;
  change: StorageChange;
  want: { type: string; app: string; rv: string } | undefined;
}[] = [
  {
    name: "added, matching",
    change: { type: "ADDED", revision: 5, object: pod("web", "5"), previous: undefined },
    want: { type: "ADDED", app: "web", rv: "5" },
  },
  {
    name: "added, not matching",
    change: { type: "ADDED", revision: 5, object: pod("db", "5"), previous: undefined },
    want: undefined,
  },
  {
    name: "modified, matching before and after",
    change: { type: "MODIFIED", revision: 6, object: pod("web", "6"), previous: pod("web", "5") },
    want: { type: "MODIFIED", app: "web", rv: "6" },
  },
  {
    name: "modified into the selection",
    change: { type: "MODIFIED", revision: 6, object: pod("web", "6"), previous: pod("db", "5") },
    want: { type: "ADDED", app: "web", rv: "6" },
  },
  {
    name: "modified out of the selection: its last matching state at the new revision",
    change: { type: "MODIFIED", revision: 6, object: pod("db", "6"), previous: pod("web", "5") },
    want: { type: "DELETED", app: "web", rv: "6" },
  },
  {
    name: "modified, matching neither",
    change: { type: "MODIFIED", revision: 6, object: pod("db", "6"), previous: pod("db", "5") },
    want: undefined,
  },
  {
    name: "deleted, matching",
    change: { type: "DELETED", revision: 7, object: pod("web", "7"), previous: pod("web", "6") },
    want: { type: "DELETED", app: "web", rv: "7" },
  },
  {
    name: "deleted, not matching",
    change: { type: "DELETED", revision: 7, object: pod("db", "7"), previous: pod("db", "6") },
    want: undefined,
  },
  {
    name: "deleted: the previous state is what is filtered",
    change: { type: "DELETED", revision: 7, object: pod("web", "7"), previous: pod("db", "6") },
    want: undefined,
  },
  {
    name: "deleted with no previous state known: the deleted object's last state is filtered",
    change: { type: "DELETED", revision: 7, object: pod("web", "7"), previous: undefined },
    want: { type: "DELETED", app: "web", rv: "7" },
  },
];

describe("watchEventFor", () => {
  for (const { name, change, want } of cases) {
    it(name, () => {
      const event = watchEventFor(change, web);
      expect(
        event === undefined
          ? undefined
          : {
              type: event.type,
              app: event.object?.metadata?.labels?.app,
              rv: event.object?.metadata?.resourceVersion,
            },
      ).toEqual(want);
      if (event !== undefined) expect(event.revision).toBe(change.revision);
    });
  }

  it("without a predicate every change is sent as it is", () => {
    const change: StorageChange = {
      type: "MODIFIED",
      revision: 6,
      object: pod("db", "6"),
      previous: pod("web", "5"),
    };
    expect(watchEventFor(change, undefined)).toEqual({
      type: "MODIFIED",
      object: change.object,
      revision: 6,
    });
  });
});
