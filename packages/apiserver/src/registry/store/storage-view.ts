import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { Storage, StorageEvent, StorageWatcher } from "../../storage/storage.js";

/** How one kind's objects change on their way into storage and out of it; either may be asynchronous. */
export interface StorageViewRules {
  /** What an object read (get, list, watch, the result of a write) becomes before it is served. */
  served(object: KubeObject): KubeObject | Promise<KubeObject>;
  /** What an object to write becomes before it is stored. */
  stored(object: KubeObject): KubeObject | Promise<KubeObject>;
  /** What a list's objects become, all at once (a conversion webhook's one call); default: `served` each. */
  servedMany?(objects: readonly KubeObject[]): Promise<KubeObject[]>;
}

/**
 * The storage as one kind sees it when its objects change on the way in or
 * out: one of several served versions of a custom kind, stored at another
 * (conversion None, as apiextensions-apiserver's nopConverter: only
 * `apiVersion` changes), or a custom kind defaulted on read.
 */
export function storageView(storage: Storage, rules: StorageViewRules): Storage {
  const { served, stored } = rules;
  return {
    currentRevision: () => storage.currentRevision(),
    create: async (key, object) => served(await storage.create(key, await stored(object))),
    get: async (key) => {
      const object = await storage.get(key);
      return object === undefined ? undefined : served(object);
    },
    list: async (prefix, options) => {
      const result = await storage.list(prefix, options);
      if (rules.servedMany !== undefined) return { ...result, items: await rules.servedMany(result.items) };
      const items = result.items.map(served);
      // Synchronous rules (conversion None, defaults on read) pay no promise per item.
      const pending = items.some((item) => item instanceof Promise);
      return { ...result, items: pending ? await Promise.all(items) : (items as KubeObject[]) };
    },
    update: async (key, object, expectedRevision) =>
      served(await storage.update(key, await stored(object), expectedRevision)),
    delete: async (key, expectedRevision) => served(await storage.delete(key, expectedRevision)),
    watch: (prefix, options) => servedWatcher(storage.watch(prefix, options), served),
    // The shared storage is closed by the server that owns it, not through one kind's view of it.
    close: () => {},
  };
}

/**
 * The storage with one resource's keys read as another's (`/events.k8s.io/events/…`
 * as `/core/events/…`), for a kind whose objects are another resource's.
 */
export function rekeyed(
  storage: Storage,
  served: Pick<ResourceDescriptor, "group" | "plural">,
  stored: Pick<ResourceDescriptor, "group" | "plural">,
): Storage {
  const from = `/${served.group || "core"}/${served.plural}/`;
  const to = `/${stored.group || "core"}/${stored.plural}/`;
  const key = (k: string) => (k.startsWith(from) ? to + k.slice(from.length) : k);
  return {
    currentRevision: () => storage.currentRevision(),
    create: (k, object) => storage.create(key(k), object),
    get: (k) => storage.get(key(k)),
    list: (prefix, options) => storage.list(key(prefix), options),
    update: (k, object, expectedRevision) => storage.update(key(k), object, expectedRevision),
    delete: (k, expectedRevision) => storage.delete(key(k), expectedRevision),
    watch: (prefix, options) => storage.watch(key(prefix), options),
    close: () => {},
  };
}

/** The object at `apiVersion`: itself when it is already, else a shallow copy (stored objects are read-only). */
export function atVersion(object: KubeObject, apiVersion: string): KubeObject {
  return object.apiVersion === apiVersion ? object : { ...object, apiVersion };
}

function servedWatcher(
  watcher: StorageWatcher,
  served: (object: KubeObject) => KubeObject | Promise<KubeObject>,
): StorageWatcher {
  return {
    stop: () => watcher.stop(),
    get closeReason() {
      return watcher.closeReason;
    },
    [Symbol.asyncIterator](): AsyncIterator<StorageEvent> {
      const events = watcher[Symbol.asyncIterator]();
      return {
        next: async () => {
          const next = await events.next();
          if (next.done || next.value.object === undefined) return next;
          return { done: false, value: { ...next.value, object: await served(next.value.object) } };
        },
        return: async (value?: unknown) => (await events.return?.(value)) ?? { done: true, value: undefined },
      };
    },
  };
}
