import type { KubeObject, ObjectList } from "@reconcile/api";

/**
 * Gives each item of a decoded list the `kind` and `apiVersion` the server
 * left out: kube-apiserver writes the items of built-in kinds without them
 * (only the list carries `PodList`, `v1`). As client-go's unstructured decoder
 * does, an item lacking both takes the list's kind without its `List` suffix
 * and the list's apiVersion; items that carry either are left as they are.
 * The items are the decoder's own, so they are completed in place.
 */
export function withItemTypeMeta<T extends KubeObject>(list: ObjectList<T>): ObjectList<T> {
  const { kind: listKind, apiVersion } = list;
  if (!listKind?.endsWith("List") || !apiVersion) return list;
  const kind = listKind.slice(0, -"List".length);
  for (const item of list.items as (KubeObject | null)[]) {
    if (item !== null && typeof item === "object" && !item.kind && !item.apiVersion) {
      item.apiVersion = apiVersion;
      item.kind = kind;
    }
  }
  return list;
}
