import { type ListOptions, pods, type WatchOptions } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import type { Client, ResourceClient } from "./client.js";
import { listerWatcher } from "./lister-watcher.js";

/** A client that records the options of every list and watch and the namespace it was bound to. */
function recordingClient() {
  const calls: { namespace: string | undefined; list?: ListOptions; watch?: WatchOptions }[] = [];
  const client = {
    resource: (_resource: unknown, namespace?: string) =>
      ({
        list: async (options: ListOptions) => {
          calls.push({ namespace, list: options });
          return { metadata: { resourceVersion: "1" }, items: [] };
        },
        watch: async (options: WatchOptions) => {
          calls.push({ namespace, watch: options });
          return (async function* () {})();
        },
      }) as unknown as ResourceClient,
  } as Client;
  return { client, calls };
}

describe("listerWatcher", () => {
  it("applies its selectors and namespace to both the list and the watch", async () => {
    const { client, calls } = recordingClient();
    const lw = listerWatcher(client, pods, {
      namespace: "ns",
      labelSelector: "app=web",
      fieldSelector: "spec.nodeName=n1",
    });
    await lw.list({ resourceVersion: "0", limit: 500 });
    await lw.watch({ resourceVersion: "7", allowWatchBookmarks: true });
    expect(calls).toEqual([
      {
        namespace: "ns",
        list: {
          resourceVersion: "0",
          limit: 500,
          labelSelector: "app=web",
          fieldSelector: "spec.nodeName=n1",
        },
      },
      {
        namespace: "ns",
        watch: {
          resourceVersion: "7",
          allowWatchBookmarks: true,
          labelSelector: "app=web",
          fieldSelector: "spec.nodeName=n1",
        },
      },
    ]);
  });

  it("keeps a caller's selectors when it has none of its own", async () => {
    const { client, calls } = recordingClient();
    const lw = listerWatcher(client, pods);
    await lw.list({ labelSelector: "tier=db" });
    await lw.watch({ resourceVersion: "3", fieldSelector: "metadata.name=a" });
    expect(calls).toEqual([
      { namespace: undefined, list: { labelSelector: "tier=db" } },
      { namespace: undefined, watch: { resourceVersion: "3", fieldSelector: "metadata.name=a" } },
    ]);
  });

  it("overrides a caller's selector with its own", async () => {
    const { client, calls } = recordingClient();
    const lw = listerWatcher(client, pods, { labelSelector: "app=web" });
    await lw.list({ labelSelector: "tier=db" });
    expect(calls[0]?.list).toEqual({ labelSelector: "app=web" });
  });
});
