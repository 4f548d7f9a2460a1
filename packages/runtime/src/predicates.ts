import type { DeepReadonly, KubeObject, Selector } from "@reconcile/api";

/**
 * Filters the events that reach a controller's queue (controller-runtime's
 * `predicate.Predicate`). A method left out lets its events through.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: DeepReadonly<T>): boolean;
  update?(oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>): boolean;
  delete?(obj: DeepReadonly<T>): boolean;
}

/**
 * Passes updates whose `metadata.generation` changed, so status-only writes
 * (which the API server never counts as a new generation) do not requeue
 * (`predicate.GenerationChangedPredicate`). Creates and deletes pass.
 */
export function generationChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (oldObj, newObj) => oldObj.metadata?.generation !== newObj.metadata?.generation };
}

/** Passes updates whose labels changed (`predicate.LabelChangedPredicate`). Creates and deletes pass. */
export function labelsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (oldObj, newObj) => !sameMap(oldObj.metadata?.labels, newObj.metadata?.labels) };
}

/** Passes updates whose annotations changed (`predicate.AnnotationChangedPredicate`). */
export function annotationsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    update: (oldObj, newObj) => !sameMap(oldObj.metadata?.annotations, newObj.metadata?.annotations),
  };
}

/** Passes updates whose resourceVersion changed: drops resyncs (`predicate.ResourceVersionChangedPredicate`). */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    update: (oldObj, newObj) => oldObj.metadata?.resourceVersion !== newObj.metadata?.resourceVersion,
  };
}

/**
 * Passes events of objects whose labels `selector` matches
 * (`predicate.LabelSelectorPredicate`); an update passes if the new object matches.
 */
export function labelSelector<T extends KubeObject = KubeObject>(selector: Selector): Predicate<T> {
  const matches = (obj: DeepReadonly<T>) => selector.matches(obj.metadata?.labels ?? {});
  return { create: matches, update: (_, newObj) => matches(newObj), delete: matches };
}

/** Any event passes when one of `predicates` passes it (`predicate.Or`). */
export function or<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.some((p) => p.create?.(obj) ?? true),
    update: (oldObj, newObj) => predicates.some((p) => p.update?.(oldObj, newObj) ?? true),
    delete: (obj) => predicates.some((p) => p.delete?.(obj) ?? true),
  };
}

/** @internal Whether every predicate passes the event. */
export function passes<T extends KubeObject>(
  predicates: readonly Predicate<T>[],
  event: "create" | "update" | "delete",
  obj: DeepReadonly<T>,
  oldObj?: DeepReadonly<T>,
): boolean {
  for (const predicate of predicates) {
    if (event === "create" && predicate.create && !predicate.create(obj)) return false;
    if (event === "update" && predicate.update && !predicate.update(oldObj!, obj)) return false;
    if (event === "delete" && predicate.delete && !predicate.delete(obj)) return false;
  }
  return true;
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}
