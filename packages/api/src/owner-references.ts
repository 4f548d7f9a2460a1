import { apiVersionOf, type ResourceDescriptor } from "./resources.js";
import type { DeepReadonly, KubeObject, OwnerReference } from "./types.js";

/** What names an owner's type in an owner reference. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * The owner reference with `controller: true`, if the object has one
 * (apimachinery's `metav1.GetControllerOf`). Returns a copy.
 */
export function getControllerOf(obj: KubeObject | DeepReadonly<KubeObject>): OwnerReference | undefined {
  const ref = controllerRefOf(obj);
  return ref === undefined ? undefined : { ...ref };
}

/**
 * An owner reference marking `owner` as the controller of a new object
 * (`metav1.NewControllerRef`): `controller: true` and `blockOwnerDeletion: true`.
 * Throws if the owner has no name or uid (it must have been read from the server).
 */
export function newControllerRef(
  owner: KubeObject | DeepReadonly<KubeObject>,
  gvk: GroupVersionKind | Pick<ResourceDescriptor, "group" | "version" | "kind">,
): OwnerReference {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name) throw new TypeError(`cannot reference a ${gvk.kind} owner without metadata.name`);
  if (!uid) throw new TypeError(`cannot reference ${gvk.kind} "${name}" as owner: it has no metadata.uid`);
  return {
    apiVersion: apiVersionOf(gvk),
    kind: gvk.kind,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Whether `owner` is the controller of `obj`, compared by uid (`metav1.IsControlledBy`). */
export function isControlledBy(
  obj: KubeObject | DeepReadonly<KubeObject>,
  owner: KubeObject | DeepReadonly<KubeObject>,
): boolean {
  const uid = owner.metadata?.uid;
  if (!uid) return false;
  return controllerRefOf(obj)?.uid === uid;
}

function controllerRefOf(
  obj: KubeObject | DeepReadonly<KubeObject>,
): DeepReadonly<OwnerReference> | undefined {
  const refs = obj.metadata?.ownerReferences;
  if (!refs) return undefined;
  for (const ref of refs) if (ref.controller === true) return ref;
  return undefined;
}
