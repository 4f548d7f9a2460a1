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
 * Reads `name`, lets `change` say what it should be (undefined: leave it as
 * it is, or missing), and writes that when it differs; a write that meets
 * another is read again, up to five times. What the server's reconcilers use
 * for the objects they keep.
 */
export async function writeWith<T extends KubeObject>(
  client: Client,
  resource: ResourceDescriptor<T>,
  namespace: string | undefined,
  name: string,
  change: (existing: T | undefined) => T | undefined,
): Promise<void> {
  const resourceClient = client.resource(resource, namespace);
  for (let attempt = 0; ; attempt++) {
    const existing = await resourceClient.get(name).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    const wanted = change(existing);
    if (wanted === undefined || (existing !== undefined && jsonEqual(wanted, existing))) return;
    try {
      if (existing === undefined) await resourceClient.create(wanted);
      else await resourceClient.update(wanted);
      return;
    } catch (error) {
      if (!(isConflict(error) || isAlreadyExists(error)) || attempt >= 5) throw error;
    }
  }
}

/** Creates `object`, or writes what it states over the stored one, its labels added to the stored labels. */
export function upsert<T extends KubeObject>(
  client: Client,
  resource: ResourceDescriptor<T>,
  object: T,
): Promise<void> {
  const { name = "", namespace } = object.metadata ?? {};
  return writeWith(client, resource, namespace, name, (existing) => {
    if (existing === undefined) return object;
    const { metadata, ...stated } = object;
    return {
      ...existing,
      ...stated,
      metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...metadata?.labels } },
    } as T;
  });
}
