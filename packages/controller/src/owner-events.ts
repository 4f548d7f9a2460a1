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
  /**
   * Called with the owner's key (`namespace/name`) for every child event that
   * concerns it, and why ("owned Pod added", "Pod released", "orphan Pod
   * changed", …). Required.
   */
  enqueue: (key: string, owner: DeepReadonly<O>, reason: string) => void;
  /** The children's kind, in the reasons. Default "object". */
  childKind?: string | undefined;
  /**
   * Expectations to tell (the ReplicaSet's `creationObserved` and
   * `deletionObserved`): called with the owner's key before it is enqueued,
   * for a child seen created and a child seen deleted. With it, a child that
   * shows up already being deleted, or an update that sets its
   * deletionTimestamp, counts as a deletion (upstream's addPod and updatePod:
   * a graceful delete is counted when it starts, not when the pod is gone).
   */
  observe?:
    | {
        created(ownerKey: string, child: DeepReadonly<KubeObject>): void;
        deleted(ownerKey: string, child: DeepReadonly<KubeObject>): void;
      }
    | undefined;
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
  const { ownerKind, owners, enqueue, ownersOfOrphan, observe } = options;
  const clusterScoped = options.clusterScopedOwners ?? false;
  const kind = options.childKind ?? "object";
  // The reasons, made once rather than per event.
  const [ownedAdded, ownedChanged, ownedDeleted] = [
    `owned ${kind} added`,
    `owned ${kind} changed`,
    `owned ${kind} deleted`,
  ];
  const [released, orphanAdded, orphanChanged] = [
    `${kind} released`,
    `orphan ${kind} added`,
    `orphan ${kind} changed`,
  ];
  /** The key of the owner `ref` resolves to in the cache, if any. */
  const ownerOf = (child: DeepReadonly<KubeObject>, ref: OwnerReference | undefined) => {
    const namespace = clusterScoped ? "" : (child.metadata?.namespace ?? "");
    const owner = resolveControllerRef(owners, namespace, ref, ownerKind);
    return owner === undefined
      ? undefined
      : { owner, key: metaNamespaceKeyFunc(owner as DeepReadonly<KubeObject>) };
  };
  const enqueueRef = (child: DeepReadonly<KubeObject>, ref: OwnerReference | undefined, reason: string) => {
    const found = ownerOf(child, ref);
    if (found !== undefined) enqueue(found.key, found.owner, reason);
  };
  const enqueueAdopters = (child: DeepReadonly<KubeObject>, reason: string): void => {
    if (ownersOfOrphan === undefined) return;
    for (const owner of ownersOfOrphan(child)) {
      enqueue(metaNamespaceKeyFunc(owner as DeepReadonly<KubeObject>), owner, reason);
    }
  };
  const deleted = (child: DeepReadonly<KubeObject>): void => {
    const found = ownerOf(child, getControllerOf(child));
    // An orphan's deletion concerns no one.
    if (found === undefined) return;
    observe?.deleted(found.key, child);
    enqueue(found.key, found.owner, ownedDeleted);
  };
  return {
    onAdd(child) {
      if (observe !== undefined && child.metadata?.deletionTimestamp != null) {
        // On a restart a child may show up already being deleted: it must not count as a creation.
        deleted(child);
        return;
      }
      const ref = getControllerOf(child);
      if (ref === undefined) {
        enqueueAdopters(child, orphanAdded);
        return;
      }
      const found = ownerOf(child, ref);
      if (found === undefined) return;
      observe?.created(found.key, child);
      enqueue(found.key, found.owner, ownedAdded);
    },
    onUpdate(oldChild, newChild) {
      if (oldChild.metadata?.resourceVersion === newChild.metadata?.resourceVersion) return;
      const labelsChanged = !labelsEqual(oldChild.metadata?.labels, newChild.metadata?.labels);
      if (observe !== undefined && newChild.metadata?.deletionTimestamp != null) {
        // A graceful delete is seen first as this update: count it now, not when the child is gone.
        deleted(newChild);
        if (labelsChanged) deleted(oldChild);
        return;
      }
      const oldRef = getControllerOf(oldChild);
      const newRef = getControllerOf(newChild);
      const refChanged = !sameOwnerRef(oldRef, newRef);
      if (refChanged && oldRef !== undefined) enqueueRef(oldChild, oldRef, released);
      if (newRef !== undefined) {
        enqueueRef(newChild, newRef, ownedChanged);
        return;
      }
      if (refChanged || labelsChanged) enqueueAdopters(newChild, orphanChanged);
    },
    onDelete(obj) {
      const child = objectFromTombstone(obj);
      if (child?.metadata === undefined) return;
      deleted(child);
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
