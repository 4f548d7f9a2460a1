import {
  asPartialObjectMetadata,
  type KubeObject,
  type ListerWatcher,
  type PartialObjectMetadata,
  type ResourceDescriptor,
  type WatchEvent,
} from "@reconcile/api";
import type { Client } from "./client.js";

export interface ListerWatcherOptions {
  /** Restrict to one namespace; omit for all namespaces. */
  namespace?: string | undefined;
  /** Applied to both list and watch. */
  labelSelector?: string | undefined;
  /** Applied to both list and watch. */
  fieldSelector?: string | undefined;
}

/**
 * The `ListerWatcher` an informer consumes, over any `Client`. The selectors
 * are applied to the list and to the watch alike, so the cache never holds
 * objects the watch would not report.
 */
export function listerWatcher<T extends KubeObject>(
  client: Client,
  resource: ResourceDescriptor<T>,
  options: ListerWatcherOptions = {},
): ListerWatcher<T> {
  const resourceClient = client.resource(resource, options.namespace);
  // The adapter's selectors win; a caller's own selectors pass through when the adapter has none.
  const selectors = {
    ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
    ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
  };
  return {
    list: (listOptions) => resourceClient.list({ ...listOptions, ...selectors }),
    watch: (watchOptions) => resourceClient.watch({ ...watchOptions, ...selectors }),
  };
}

/**
 * A `ListerWatcher` of `resource`'s objects as PartialObjectMetadata: their
 * metadata alone, for informers of controllers that read only owners, labels
 * and finalizers (client-go's metadata informers). The server is asked for
 * that form (`metadataOnly`); whole objects from a client or server that
 * does not give it are cut down here, so the cache holds metadata either way.
 */
export function metadataListerWatcher(
  client: Client,
  resource: ResourceDescriptor,
  options: ListerWatcherOptions = {},
): ListerWatcher<PartialObjectMetadata> {
  const whole = listerWatcher(client, resource, options);
  return {
    async list(listOptions) {
      const list = await whole.list({ ...listOptions, metadataOnly: true });
      return { ...list, items: list.items.map(asPartialObjectMetadata) };
    },
    async watch(watchOptions) {
      const events = await whole.watch({ ...watchOptions, metadataOnly: true });
      return (async function* () {
        for await (const event of events)
          yield (
            event.type === "ERROR"
              ? event
              : { type: event.type, object: asPartialObjectMetadata(event.object) }
          ) as WatchEvent<PartialObjectMetadata>;
      })();
    },
  };
}
