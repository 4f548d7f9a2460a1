import type { KubeObject, ListerWatcher, ResourceDescriptor } from "@reconcile/api";
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
