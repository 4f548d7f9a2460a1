import { ReconcileError } from "@reconcile/api";
import { jsonEqual } from "../json.js";
import { FieldSet, fieldElement, pathString, type Scalar, valueElement } from "./fieldpath.js";
import { childType, fieldType, resolve, type TypeNode } from "./schema.js";

const typedValueMarker = Symbol.for("reconcile.apiserver.typed-value");

/** A value that does not fit its type, e.g. duplicate items in an applied keyed list. `code` is `"apiserver.typed-value"`. */
export class TypedValueError extends ReconcileError<"apiserver.typed-value"> {
  readonly [typedValueMarker] = true;
  constructor(message: string) {
    super("apiserver.typed-value", message);
    this.name = "TypedValueError";
  }

  static override isInstance(error: unknown): error is TypedValueError {
    return ReconcileError.hasMarker(error, typedValueMarker);
  }
}

/**
 * The field set an applied configuration claims (structured-merge-diff's
 * `ToFieldSet`): scalars, atomic values, empty maps, nulls, undeclared map
 * keys and every item of an associative list are members; declared struct
 * fields holding non-empty objects are only parents.
 */
export function toFieldSet(value: unknown, type: TypeNode): FieldSet {
  const set = new FieldSet();
  collect(value, type, set, []);
  return set.compact();
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * What changed from `before` to `after` (structured-merge-diff's `Compare`), with
 * an Update's notion of membership: changed leaves, and every node that did not
 * exist before (except structs present in Go's zero value), are members.
 * `removed` holds each removed node with everything below it.
 */
export function compare(before: unknown, after: unknown, type: TypeNode): Comparison {
  const result: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  diff(before, after, type, result, []);
  result.added.compact();
  result.modified.compact();
  result.removed.compact();
  return result;
}

/**
 * Removes from `value` (in place) every member path of `remove`, except a
 * declared struct field under which `keep` still has members: structured-merge-
 * diff keeps such parents, while map keys and list items go with their owners.
 */
export function removeFields(value: unknown, remove: FieldSet, keep: FieldSet, type: TypeNode): void {
  const t = resolve(type, value);
  for (const [element, node] of remove.children) {
    const kept = keep.children.get(element);
    if (isObject(value) && element.startsWith("f:") && (t.kind === "struct" || t.kind === "map")) {
      const name = element.slice(2);
      if (!(name in value)) continue;
      const { type: childType, declared } = fieldType(t, name);
      if (node.member && !(declared && kept !== undefined && !kept.empty())) {
        delete value[name];
        continue;
      }
      removeFields(value[name], node, kept ?? new FieldSet(), childType);
      continue;
    }
    if (Array.isArray(value) && t.kind === "list" && t.listType !== "atomic") {
      const identify = itemIdentity(t);
      const index = value.findIndex((item) => identify(item) === element);
      if (index < 0) continue;
      if (node.member) {
        value.splice(index, 1);
        continue;
      }
      if (t.listType === "map") removeFields(value[index], node, kept ?? new FieldSet(), t.items);
    }
  }
}

function collect(value: unknown, type: TypeNode, node: FieldSet, path: string[]): void {
  const t = resolve(type, value);
  if (value === null || value === undefined) {
    node.member = true;
    return;
  }
  switch (t.kind) {
    case "scalar":
      node.member = true;
      return;
    case "list": {
      if (t.listType === "atomic" || !Array.isArray(value)) {
        node.member = true;
        return;
      }
      const identify = itemIdentity(t);
      const seen = new Set<string>();
      for (const item of value) {
        const element = identify(item);
        if (seen.has(element)) {
          throw new TypedValueError(
            `${pathString(path)}: duplicate entries for key ${pathString([element])}`,
          );
        }
        seen.add(element);
        const child = node.child(element);
        if (t.listType === "map") collect(item, t.items, child, [...path, element]);
        child.member = true;
      }
      return;
    }
    case "struct":
    case "map": {
      if (t.atomic || !isObject(value) || Object.keys(value).length === 0) {
        node.member = true;
        return;
      }
      for (const [name, child] of Object.entries(value)) {
        const element = fieldElement(name);
        const { type: childType, declared } = fieldType(t, name);
        const childNode = node.child(element);
        if (!declared) childNode.member = true;
        collect(child, childType, childNode, [...path, element]);
      }
      return;
    }
    default:
      node.member = true;
  }
}

function diff(before: unknown, after: unknown, type: TypeNode, out: Comparison, path: string[]): void {
  if (before === undefined && after === undefined) return;
  if (after === undefined) {
    everything(before, type, out.removed, path);
    return;
  }
  if (before === undefined) {
    added(after, type, out.added, path);
    return;
  }
  const t = resolve(type, after);
  const leaf =
    before === null ||
    after === null ||
    bothEmpty(before, after) ||
    t.kind === "scalar" ||
    t.kind === "deduced" ||
    (t.kind === "list" && t.listType === "atomic") ||
    ((t.kind === "struct" || t.kind === "map") && t.atomic === true) ||
    resolve(type, before).kind !== t.kind ||
    Array.isArray(before) !== Array.isArray(after);
  if (leaf) {
    if (!jsonEqual(before, after)) out.modified.insert(path);
    return;
  }
  // Most of an updated object is unchanged: comparing costs far less than walking it by type.
  if (jsonEqual(before, after)) return;
  if (t.kind === "list") {
    const identify = itemIdentity(t);
    const beforeItems = new Map<string, unknown>();
    for (const item of before as unknown[]) beforeItems.set(identify(item), item);
    const afterItems = new Map<string, unknown>();
    for (const item of after as unknown[]) afterItems.set(identify(item), item);
    const itemType = t.listType === "map" ? t.items : { kind: "scalar" as const };
    for (const [element, item] of afterItems) {
      path.push(element);
      if (!beforeItems.has(element)) added(item, itemType, out.added, path, true);
      else if (t.listType === "map") diff(beforeItems.get(element), item, itemType, out, path);
      path.pop();
    }
    for (const [element, item] of beforeItems) {
      if (!afterItems.has(element)) {
        path.push(element);
        everything(item, itemType, out.removed, path);
        path.pop();
      }
    }
    return;
  }
  if ((t.kind === "struct" || t.kind === "map") && isObject(before) && isObject(after)) {
    for (const name in before) {
      path.push(fieldElement(name));
      diff(before[name], after[name], childType(t, name), out, path);
      path.pop();
    }
    for (const name in after) {
      if (name in before) continue;
      path.push(fieldElement(name));
      diff(undefined, after[name], childType(t, name), out, path);
      path.pop();
    }
  }
}

/** An added subtree: every node is a member, except structs that exist in the zero value. */
function added(value: unknown, type: TypeNode, set: FieldSet, path: string[], listItem = false): void {
  const t = resolve(type, value);
  if (listItem || !("zero" in t && t.zero === true)) set.insert(path);
  if (value === null || bothEmpty(value, value)) return;
  if (t.kind === "list" && t.listType !== "atomic" && Array.isArray(value)) {
    const identify = itemIdentity(t);
    const itemType = t.listType === "map" ? t.items : { kind: "scalar" as const };
    for (const item of value) {
      path.push(identify(item));
      added(item, itemType, set, path, true);
      path.pop();
    }
  } else if ((t.kind === "struct" || t.kind === "map") && !t.atomic && isObject(value)) {
    for (const name in value) {
      path.push(fieldElement(name));
      added(value[name], childType(t, name), set, path);
      path.pop();
    }
  }
}

/** Every node of a subtree, as members (for removals: owners lose all of it). */
function everything(value: unknown, type: TypeNode, set: FieldSet, path: string[]): void {
  const t = resolve(type, value);
  set.insert(path);
  if (t.kind === "list" && t.listType !== "atomic" && Array.isArray(value)) {
    const identify = itemIdentity(t);
    const itemType = t.listType === "map" ? t.items : { kind: "scalar" as const };
    for (const item of value) {
      path.push(identify(item));
      everything(item, itemType, set, path);
      path.pop();
    }
  } else if ((t.kind === "struct" || t.kind === "map") && !t.atomic && isObject(value)) {
    for (const name in value) {
      path.push(fieldElement(name));
      everything(value[name], childType(t, name), set, path);
      path.pop();
    }
  }
}

type ListType = Extract<TypeNode, { kind: "list" }>;

/** A function naming a list item by its element key (`k:` or `v:`); cached per list type. */
export function itemIdentity(t: ListType): (item: unknown) => string {
  let identify = identities.get(t);
  if (identify === undefined) {
    identify = t.listType === "map" ? keyIdentity(t) : valueIdentity;
    identities.set(t, identify);
  }
  return identify;
}

const identities = new WeakMap<ListType, (item: unknown) => string>();

function valueIdentity(item: unknown): string {
  return valueElement(item as Scalar);
}

function keyIdentity(t: Extract<ListType, { listType: "map" }>): (item: unknown) => string {
  const keys = [...t.keys].sort();
  const names = keys.map((key) => JSON.stringify(key));
  return (item) => {
    const record = isObject(item) ? item : {};
    let out = "k:{";
    let count = 0;
    for (let i = 0; i < keys.length; i++) {
      const value = record[keys[i]!] ?? t.keyDefaults?.[keys[i]!];
      if (value === undefined) continue;
      out += `${count === 0 ? "" : ","}${names[i]}:${JSON.stringify(value)}`;
      count++;
    }
    if (count === 0) {
      throw new TypedValueError(
        `associative list with keys has an element that omits all key fields ${JSON.stringify(t.keys)}`,
      );
    }
    return `${out}}`;
  };
}

export function isGranular(t: TypeNode): boolean {
  return (t.kind === "struct" || t.kind === "map") && !t.atomic;
}

export function bothEmpty(a: unknown, b: unknown): boolean {
  return isEmptyContainer(a) && isEmptyContainer(b);
}

export function isEmptyContainer(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (!isObject(value)) return false;
  for (const _ in value) return false;
  return true;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
