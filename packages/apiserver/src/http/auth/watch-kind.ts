import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";

export type WatchedEvent = "ADDED" | "MODIFIED" | "DELETED";

/**
 * Lists then watches one kind through the server's own client until
 * `signal` aborts, handing every object to `apply` (with its `kind` set);
 * a failed list or watch starts again after a second. `synced` settles once
 * the first list has been applied (or the signal aborted).
 */
export function watchKind<T extends KubeObject>(
  client: Client,
  clock: Clock,
  resource: ResourceDescriptor<T>,
  signal: AbortSignal,
  apply: (type: WatchedEvent, object: T) => void,
): { synced: Promise<void>; done: Promise<void> } {
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const api = client.resource(resource);
  const kind = resource.kind;
  const run = async () => {
    while (!signal.aborted) {
      try {
        const list = await api.list({ signal });
        for (const item of list.items) apply("ADDED", { ...item, kind } as T);
        markSynced();
        const events = await api.watch({ resourceVersion: list.metadata?.resourceVersion, signal });
        for await (const event of events) {
          if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED")
            apply(event.type, { ...event.object, kind } as T);
        }
      } catch {
        // Listed again after a pause; the caches are replaced object by object.
      }
      if (!signal.aborted) await clock.sleep(1000, { signal }).catch(() => {});
    }
    markSynced();
  };
  return { synced, done: run() };
}
