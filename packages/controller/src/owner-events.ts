import {
  type DeepReadonly,
  type DeletedFinalStateUnknown,
  getControllerOf,
  isDeletedFinalStateUnknown,
  type KubeObject,
  type LabelSelector,
  labelSelectorAsSelector,
  labelsEqual,
  metaNamespaceKeyFunc,
  type OwnerReference,
} from "@reconcile/api";
import type { ControllerEventHandler, ControllerIndexer } from "./informer-types.js";

/** The owner type a controllerRef must name: `{ group: "apps", kind: "ReplicaSet" }`. */
export interface OwnerKind {
  kind: string;
  /** When set, the ref's apiVersion must be in this group ("" for the core group). Default: any group, as upstream's controllers compare only the kind. */
  group?: string | undefined;
}

/**
 * The owner a controllerRef points at, from the owners' cache (upstream's
 * per-controller `resolveControllerRef`): undefined unless the ref names
 * `ownerKind`, an owner of that name is cached, and its uid is the ref's (a
 * new object under an old name is not the owner). Namespaced owners are looked
 * up in `namespace`, the dependent's; pass "" for cluster-scoped owners.
 */
export function resolveControllerRef<O>(
  owners: Pick<ControllerIndexer<O>, "getByKey">,
  namespace: string,
  controllerRef: OwnerReference | undefined,
  ownerKind: OwnerKind,
): DeepReadonly<O> | undefined {
  if (controllerRef === undefined || controllerRef.kind !== ownerKind.kind) return undefined;
  if (ownerKind.group !== undefined && groupOf(controllerRef.apiVersion) !== ownerKind.group)
    return undefined;
  const owner = owners.getByKey(namespace ? `${namespace}/${controllerRef.name}` : controllerRef.name);
  if (owner === undefined) return undefined;
  if ((owner as DeepReadonly<KubeObject>).metadata?.uid !== controllerRef.uid) return undefined;
  return owner;
}

/** The object a delete handler received: itself, or the last state a tombstone holds. */
export function objectFromTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
}

export interface OwnerEventHandlerOptions<O> {
  /** What the children's controllerRefs must name. Required. */
  ownerKind: OwnerKind;
  /** The owners' cache. Required. */
  owners: Pick<ControllerIndexer<O>, "getByKey">;
  /** Called with the owner's key (`namespace/name`) for every child event that concerns it. Required. */
  enqueue: (key: string, owner: DeepReadonly<O>) => void;
  /** Owners are cluster-scoped (looked up by name alone). Default false: in the child's namespace. */
  clusterScopedOwners?: boolean | undefined;
  /**
   * The owners that may adopt an orphan, called when an orphan is added, or
   * when an update changed its labels or dropped its controllerRef (upstream's
   * `getPodReplicaSets`; see {@link ownersSelecting}). Default: orphans wake nobody.
   */
  ownersOfOrphan?: ((child: DeepReadonly<KubeObject>) => Iterable<DeepReadonly<O>>) | undefined;
}

/**
 * A handler for a child informer that wakes the child's controller (kube-rs
 * `trigger_owners`, controller-runtime's `Owns()`, the pod handlers of
 * upstream's ReplicaSet controller without expectations):
 * - add and delete (tombstones included) enqueue the owner the child's controllerRef resolves to;
 * - an update enqueues the new owner and, when the controllerRef changed, the old one too;
 *   a resync (same resourceVersion) enqueues nothing;
 * - an orphan, on add or when an update changed its labels or controllerRef,
 *   enqueues every owner `ownersOfOrphan` returns.
 */
export function ownerEventHandler<C extends KubeObject, O>(
  options: OwnerEventHandlerOptions<O>,
): ControllerEventHandler<C> {
  const { ownerKind, owners, enqueue, ownersOfOrphan } = options;
  const clusterScoped = options.clusterScopedOwners ?? false;
  const enqueueRef = (child: DeepReadonly<KubeObject>, ref: OwnerReference | undefined): boolean => {
    const namespace = clusterScoped ? "" : (child.metadata?.namespace ?? "");
    const owner = resolveControllerRef(owners, namespace, ref, ownerKind);
    if (owner === undefined) return false;
    enqueue(metaNamespaceKeyFunc(owner as DeepReadonly<KubeObject>), owner);
    return true;
  };
  const enqueueAdopters = (child: DeepReadonly<KubeObject>): void => {
    if (ownersOfOrphan === undefined) return;
    for (const owner of ownersOfOrphan(child)) {
      enqueue(metaNamespaceKeyFunc(owner as DeepReadonly<KubeObject>), owner);
    }
  };
  return {
    onAdd(child) {
      const ref = getControllerOf(child);
      if (ref !== undefined) enqueueRef(child, ref);
      else enqueueAdopters(child);
    },
    onUpdate(oldChild, newChild) {
      if (oldChild.metadata?.resourceVersion === newChild.metadata?.resourceVersion) return;
      const oldRef = getControllerOf(oldChild);
      const newRef = getControllerOf(newChild);
      const refChanged = !sameOwnerRef(oldRef, newRef);
      if (refChanged && oldRef !== undefined) enqueueRef(oldChild, oldRef);
      if (newRef !== undefined) {
        enqueueRef(newChild, newRef);
        return;
      }
      if (refChanged || !labelsEqual(oldChild.metadata?.labels, newChild.metadata?.labels)) {
        enqueueAdopters(newChild);
      }
    },
    onDelete(obj) {
      const child = objectFromTombstone(obj);
      if (child?.metadata === undefined) return;
      // An orphan's deletion concerns no one.
      enqueueRef(child, getControllerOf(child));
    },
  };
}

/** An owner whose `spec.selector` picks its children (ReplicaSet, Deployment, StatefulSet, Job, …). */
export interface SelectingOwner extends KubeObject {
  spec?: { selector?: LabelSelector | undefined } | undefined;
}

/**
 * The owners in `child`'s namespace whose selector, non-empty and valid,
 * matches the child's labels (upstream `GetPodReplicaSets`,
 * `getDeploymentsForReplicaSet`). A child without labels matches nothing,
 * and neither does an owner without a `spec.selector` ({@link SelectingOwner}).
 * `owners` needs the `namespace` index, which every informer has.
 */
export function ownersSelecting<O>(
  owners: Pick<ControllerIndexer<O>, "byIndex">,
  child: DeepReadonly<KubeObject>,
): DeepReadonly<O>[] {
  const labels = child.metadata?.labels;
  if (labels === undefined || Object.keys(labels).length === 0) return [];
  const matching: DeepReadonly<O>[] = [];
  for (const owner of owners.byIndex("namespace", child.metadata?.namespace ?? "")) {
    const selectorSpec = (owner as DeepReadonly<SelectingOwner>).spec?.selector;
    let matches: boolean;
    try {
      const selector = labelSelectorAsSelector(selectorSpec as LabelSelector | undefined);
      matches = !selector.empty() && selector.matches(labels);
    } catch {
      continue; // an invalid selector selects nothing
    }
    if (matches) matching.push(owner);
  }
  return matching;
}

/** Two controllerRefs are the same when every field is. */
export function sameOwnerRef(a: OwnerReference | undefined, b: OwnerReference | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.uid === b.uid &&
    a.controller === b.controller &&
    a.blockOwnerDeletion === b.blockOwnerDeletion
  );
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}
