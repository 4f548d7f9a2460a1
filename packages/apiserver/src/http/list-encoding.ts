import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import { customForWire, resourceGoOrderer } from "../registry/go-order.js";
import { builtinKindSchema } from "../schemas/kind-schema.js";

/** Encodes one item of a list response. */
export type ItemEncoder = (item: unknown) => string;

/**
 * How kube-apiserver writes a list's items: those of a built-in (typed) kind
 * without `kind` and `apiVersion`, which only the list carries (the items are
 * converted field by field from the internal version, whose TypeMeta is
 * empty); those of a custom resource (unstructured) with them, as stored.
 * Single objects and watch events always carry both.
 */
export function listItemEncoder(resource: ResourceDescriptor): ItemEncoder {
  // A custom resource's items carry their kind and go out with their keys sorted, as unstructured JSON.
  if (!isTyped(resource)) return (item) => JSON.stringify(customForWire(resource, item));
  // A built-in kind's items go out in the order kube-apiserver writes their members in.
  const order = resourceGoOrderer(resource);
  return order === undefined ? withoutTypeMeta : (item) => withoutTypeMeta(order(item as object));
}

/** Whether Kubernetes itself defines the kind, rather than a CRD or an in-process `defineResource`. */
function isTyped(resource: ResourceDescriptor): boolean {
  return builtinKindSchema(resource.group, resource.version, resource.kind) !== undefined;
}

function withoutTypeMeta(item: unknown): string {
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = item as KubeObject;
  return JSON.stringify(rest);
}
