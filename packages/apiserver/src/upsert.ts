import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  jsonEqual,
  type KubeObject,
  type ResourceDescriptor,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";

/**
 * Creates `object`, or writes what it states over the stored one (its labels
 * added to the stored labels) when that changes anything; a write that meets
 * another is read again, up to five times. What the server's reconcilers use
 * for the objects they keep.
 */
export async function upsert<T extends KubeObject>(
  client: Client,
  resource: ResourceDescriptor<T>,
  object: T,
): Promise<void> {
  const { name = "", namespace } = object.metadata ?? {};
  const resourceClient = client.resource(resource, namespace);
  for (let attempt = 0; ; attempt++) {
    const existing = await resourceClient.get(name).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    try {
      if (existing === undefined) await resourceClient.create(object);
      else {
        const { metadata, ...stated } = object;
        const merged = {
          ...existing,
          ...stated,
          metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...metadata?.labels } },
        } as T;
        if (!jsonEqual(merged, existing)) await resourceClient.update(merged);
      }
      return;
    } catch (error) {
      if (!(isConflict(error) || isAlreadyExists(error)) || attempt >= 5) throw error;
    }
  }
}
