import { type KubeObject, namespaces } from "@reconcile/api";
import { type AdmissionPlugin, type ApiServer, garbageCollectorUser } from "@reconcile/apiserver";

const foregroundFinalizer = "foregroundDeletion";

/**
 * The built-in check that the garbage collector never deletes an object
 * whose owner lives: an admission step that sees each delete the collector
 * makes and looks every owner of the stored object up in the server itself.
 * An owner that exists with the referenced uid and is not being deleted in
 * the foreground makes the delete a finding (`gc`). Objects whose namespace
 * is gone (the collector empties it) are not judged.
 */
export function garbageCollectorCheck(
  server: () => ApiServer,
  fail: (message: string) => void,
): AdmissionPlugin {
  return {
    name: "SimGarbageCollectorCheck",
    async validate(a) {
      if (a.operation !== "DELETE" || a.user?.username !== garbageCollectorUser.username) return;
      const object = a.oldObject;
      const owners = object?.metadata?.ownerReferences ?? [];
      if (object === undefined || owners.length === 0) return;
      const registry = server().registry;
      const namespace = object.metadata?.namespace;
      if (namespace && (await lookup(() => registry.get(namespaces, undefined, namespace))) === undefined)
        return;
      for (const ref of owners) {
        const resource = registry.resourceForKind(ref.apiVersion, ref.kind);
        if (resource === undefined) continue;
        const owner = await lookup(() =>
          registry.get(resource, resource.namespaced ? namespace : undefined, ref.name),
        );
        if (owner === undefined || owner.metadata?.uid !== ref.uid) continue;
        const deleting = owner.metadata?.deletionTimestamp !== undefined;
        if (deleting && (owner.metadata?.finalizers ?? []).includes(foregroundFinalizer)) continue;
        fail(
          `the garbage collector deleted ${a.resource.plural} ${namespace ? `${namespace}/` : ""}${a.name} while its owner ${ref.kind} ${ref.name} (${ref.uid}) lived${deleting ? " (being deleted, not in the foreground)" : ""}`,
        );
      }
    },
  };
}

async function lookup(get: () => Promise<KubeObject>): Promise<KubeObject | undefined> {
  try {
    return await get();
  } catch {
    return undefined;
  }
}
