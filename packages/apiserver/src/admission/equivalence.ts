import { apiVersionOf, newInternalError, type ResourceDescriptor } from "@reconcile/api";
import type { ResourceDefinitions } from "../registry/definitions.js";
import type { ResourceDefinition } from "../registry/resource-definition.js";
import { atVersion } from "../registry/store/storage-view.js";
import type { AdmissionEquivalence } from "./plugin.js";

/**
 * upstream's `EquivalentResourceMapper` over the served definitions: the
 * resources kept in one storage (a kind's versions; `events.k8s.io` events
 * beside core events) are equivalent, and an object of one converts to
 * another through the stored version, as the store converts it.
 */
export function admissionEquivalence(served: () => ResourceDefinitions): AdmissionEquivalence {
  // Each resource's equivalents, worked out once per generation of the served definitions.
  let known:
    | { generation: number; byDefinition: WeakMap<ResourceDefinition, ResourceDescriptor[]> }
    | undefined;
  return {
    equivalents(resource) {
      const definitions = served();
      const own = definitions.get(resource);
      if (own === undefined) return [];
      if (known?.generation !== definitions.generation)
        known = { generation: definitions.generation, byDefinition: new WeakMap() };
      let found = known.byDefinition.get(own);
      if (found === undefined) {
        const storage = storageKey(own);
        found = definitions
          .list()
          .filter((other) => other !== own && storageKey(other) === storage)
          .map((other) => other.descriptor);
        known.byDefinition.set(own, found);
      }
      return found;
    },
    async convert(object, from, to) {
      const definitions = served();
      const source = definitions.get(from);
      const target = definitions.get(to);
      if (source === undefined || target === undefined) {
        throw newInternalError(`no conversion from ${apiVersionOf(from)} to ${apiVersionOf(to)}`);
      }
      const storedVersion = apiVersionOf({
        group: (source.storedAs ?? source.descriptor).group,
        version: source.storageVersion ?? source.descriptor.version,
      });
      const stored = atVersion(
        source.conversion === undefined ? object : await source.conversion.toStorage(object),
        storedVersion,
      );
      const converted =
        target.conversion === undefined ? stored : await target.conversion.fromStorage(stored);
      return structuredClone(atVersion(converted, apiVersionOf(target.descriptor)));
    },
  };
}

function storageKey(definition: ResourceDefinition): string {
  const stored = definition.storedAs ?? definition.descriptor;
  return `${stored.group}/${stored.plural}`;
}
