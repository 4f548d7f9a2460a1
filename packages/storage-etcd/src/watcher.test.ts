import type { KubeObject } from "@reconcile/api";
import type { IEvent } from "etcd3";
import { describe, expect, it } from "vitest";
import { translateEvent } from "./watcher.js";

/** An etcd event as the watch stream delivers it (int64s as decimal strings). */
function etcdEvent(
  type: "PUT" | "DELETE",
  current: { labels?: Record<string, string>; create: number; mod: number } | { mod: number },
  previous?: { labels?: Record<string, string>; create: number; mod: number },
): IEvent {
  const kv = (state: { labels?: Record<string, string>; create: number; mod: number }) => ({
    key: Buffer.from("/registry/pods/ns/a"),
    create_revision: String(state.create),
    mod_revision: String(state.mod),
    version: String(state.mod - state.create + 1),
    value: Buffer.from(
      JSON.stringify({ metadata: { name: "a", namespace: "ns", labels: state.labels ?? {} } }),
    ),
    lease: "0",
  });
  const currentKv =
    "create" in current
      ? kv(current)
      : // etcd's delete event: only the key and the delete revision.
        {
          key: Buffer.from("/registry/pods/ns/a"),
          create_revision: "0",
          mod_revision: String(current.mod),
          version: "0",
          value: Buffer.alloc(0),
          lease: "0",
        };
  return {
    type: type === "PUT" ? "Put" : "Delete",
    kv: currentKv,
    prev_kv: previous ? kv(previous) : null,
  } as never;
}

const decode = (value: Buffer, revision: number): KubeObject => {
  const object = JSON.parse(value.toString("utf8")) as KubeObject;
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
};
const web = (o: KubeObject) => o.metadata?.labels?.app === "web";

function summary(event: ReturnType<typeof translateEvent>): string {
  if (event === undefined) return "nothing";
  return `${event.type} app=${event.object?.metadata?.labels?.app ?? "-"} rv=${event.object?.metadata?.resourceVersion}@${event.revision}`;
}

// kube-apiserver's etcd3 watcher: the predicate is applied to the new and the previous state.
describe("translateEvent", () => {
  it.each([
    ["a create", etcdEvent("PUT", { create: 5, mod: 5 }), undefined, "ADDED app=- rv=5@5"],
    [
      "a matching create",
      etcdEvent("PUT", { labels: { app: "web" }, create: 5, mod: 5 }),
      web,
      "ADDED app=web rv=5@5",
    ],
    [
      "a create that does not match",
      etcdEvent("PUT", { labels: { app: "db" }, create: 5, mod: 5 }),
      web,
      "nothing",
    ],
    [
      "an update without a predicate",
      etcdEvent("PUT", { create: 5, mod: 7 }, { create: 5, mod: 5 }),
      undefined,
      "MODIFIED app=- rv=7@7",
    ],
    [
      "an update matching before and after",
      etcdEvent(
        "PUT",
        { labels: { app: "web" }, create: 5, mod: 7 },
        { labels: { app: "web" }, create: 5, mod: 5 },
      ),
      web,
      "MODIFIED app=web rv=7@7",
    ],
    [
      "an update entering the selection",
      etcdEvent(
        "PUT",
        { labels: { app: "web" }, create: 5, mod: 7 },
        { labels: { app: "db" }, create: 5, mod: 5 },
      ),
      web,
      "ADDED app=web rv=7@7",
    ],
    [
      "an update leaving the selection (previous body, revision of the change)",
      etcdEvent(
        "PUT",
        { labels: { app: "db" }, create: 5, mod: 7 },
        { labels: { app: "web" }, create: 5, mod: 5 },
      ),
      web,
      "DELETED app=web rv=7@7",
    ],
    [
      "an update outside the selection",
      etcdEvent(
        "PUT",
        { labels: { app: "db" }, create: 5, mod: 7 },
        { labels: { app: "db" }, create: 5, mod: 5 },
      ),
      web,
      "nothing",
    ],
    [
      "a delete (last body, revision of the delete)",
      etcdEvent("DELETE", { mod: 9 }, { create: 5, mod: 7 }),
      undefined,
      "DELETED app=- rv=9@9",
    ],
    [
      "a delete of a matching object",
      etcdEvent("DELETE", { mod: 9 }, { labels: { app: "web" }, create: 5, mod: 7 }),
      web,
      "DELETED app=web rv=9@9",
    ],
    [
      "a delete of an object outside the selection",
      etcdEvent("DELETE", { mod: 9 }, { labels: { app: "db" }, create: 5, mod: 7 }),
      web,
      "nothing",
    ],
  ])("%s", (_name, event, predicate, expected) => {
    expect(summary(translateEvent(event, decode, predicate))).toBe(expected);
  });

  it("treats a delete or a filtered update without the previous value as an error, as upstream", () => {
    expect(() => translateEvent(etcdEvent("DELETE", { mod: 9 }), decode, undefined)).toThrow(
      'etcd event received with PrevKv=nil (key="/registry/pods/ns/a", modRevision=9, type=DELETE)',
    );
    expect(() => translateEvent(etcdEvent("PUT", { create: 5, mod: 7 }), decode, web)).toThrow("PrevKv=nil");
    // Without a predicate an update needs no previous value.
    expect(summary(translateEvent(etcdEvent("PUT", { create: 5, mod: 7 }), decode, undefined))).toBe(
      "MODIFIED app=- rv=7@7",
    );
  });

  it("propagates a decoding failure", () => {
    const event = etcdEvent("PUT", { create: 5, mod: 5 });
    event.kv.value = Buffer.from("{not json");
    expect(() => translateEvent(event, decode, undefined)).toThrow(SyntaxError);
  });
});
