import {
  type DeepReadonly,
  type GroupResource,
  type KubeObject,
  newNotFound,
  parseSelector,
  type ResourceDescriptor,
  type Selector,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import { type Indexer, namespaceIndex } from "./store.js";

/** Reads one namespace of an informer's cache. */
export interface NamespaceLister<T> {
  /** Objects of this namespace matching `selector` (a `Selector` or its string form; default: everything). */
  list(selector?: Selector | string): DeepReadonly<T>[];
  /** The object `name` of this namespace; throws a NotFound `StatusError` if it is not cached. */
  get(name: string): DeepReadonly<T>;
}

/**
 * Reads an informer's cache (client-go's generated listers). Never calls the
 * API server; what it returns is shared and read-only.
 */
export interface Lister<T> extends NamespaceLister<T> {
  /**
   * The object with `key`: `name` for cluster-scoped objects, `namespace/name`
   * for namespaced ones. Throws a NotFound `StatusError` if it is not cached.
   */
  get(key: string): DeepReadonly<T>;
  byNamespace(namespace: string): NamespaceLister<T>;
}

/**
 * A lister over `indexer`. `resource` names the resource in NotFound errors
 * (`pods "x" not found`).
 */
export function createLister<T extends KubeObject>(
  indexer: Indexer<T>,
  resource: Pick<ResourceDescriptor<T>, "group" | "plural"> | GroupResource,
): Lister<T> {
  const groupResource: GroupResource =
    "plural" in resource ? { group: resource.group, resource: resource.plural } : resource;
  return {
    list: (selector) => listAll(indexer.list(), toSelector(selector)),
    get: (key) => {
      const obj = indexer.getByKey(key);
      if (obj === undefined) throw newNotFound(groupResource, splitMetaNamespaceKey(key).name);
      return obj;
    },
    byNamespace: (namespace) => ({
      list: (selector) => listAllByNamespace(indexer, namespace, toSelector(selector)),
      get: (name) => {
        const obj = indexer.getByKey(namespace === "" ? name : `${namespace}/${name}`);
        if (obj === undefined) throw newNotFound(groupResource, name);
        return obj;
      },
    }),
  };
}

function toSelector(selector: Selector | string | undefined): Selector | undefined {
  if (selector === undefined) return undefined;
  return typeof selector === "string" ? parseSelector(selector) : selector;
}

// client-go's ListAll: an empty selector skips label matching altogether.
function listAll<T extends KubeObject>(
  objects: DeepReadonly<T>[],
  selector: Selector | undefined,
): DeepReadonly<T>[] {
  if (selector === undefined || selector.empty()) return objects;
  return objects.filter((obj) =>
    selector.matches(obj.metadata?.labels as Record<string, string> | undefined),
  );
}

// client-go's ListAllByNamespace: "" lists every namespace; the namespace index
// is used when present, a full scan otherwise.
function listAllByNamespace<T extends KubeObject>(
  indexer: Indexer<T>,
  namespace: string,
  selector: Selector | undefined,
): DeepReadonly<T>[] {
  if (namespace === "") return listAll(indexer.list(), selector);
  if (namespaceIndex in indexer.getIndexers()) {
    return listAll(indexer.byIndex(namespaceIndex, namespace), selector);
  }
  return listAll(
    indexer.list().filter((obj) => (obj.metadata?.namespace ?? "") === namespace),
    selector,
  );
}
