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

/** The members of ObjectMeta that encoding/json writes after `resourceVersion` (its Go field order). */
const afterResourceVersion = new Set([
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

/**
 * Sets `metadata.resourceVersion` of an object about to be stored or just
 * read back. A metadata without one gets it where kube-apiserver writes it
 * (after `uid`, before `generation`), so the members stay in Go's order: the
 * metadata is replaced by a copy in that order.
 */
export function placeResourceVersion(
  object: { metadata?: object | undefined },
  resourceVersion: string,
): void {
  const meta = (object.metadata ??= {}) as Record<string, unknown>;
  if (Object.hasOwn(meta, "resourceVersion")) {
    meta.resourceVersion = resourceVersion;
    return;
  }
  const placed: Record<string, unknown> = {};
  let done = false;
  for (const key in meta) {
    if (!done && afterResourceVersion.has(key)) {
      placed.resourceVersion = resourceVersion;
      done = true;
    }
    if (key === "__proto__")
      Object.defineProperty(placed, key, {
        value: meta[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else placed[key] = meta[key];
  }
  if (!done) placed.resourceVersion = resourceVersion;
  object.metadata = placed;
}
