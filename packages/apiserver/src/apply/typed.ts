import { copyJson } from "../json.js";
import {
  compareElements,
  FieldSet,
  fieldElement,
  pathString,
  type Scalar,
  valueElement,
} from "./fieldpath.js";
import { quoteElement, quoteField } from "./fields-v1.js";
import { childType, fieldType, resolve, type TypeNode } from "./schema.js";

/** A value that does not fit its type, e.g. duplicate items in an applied keyed list. */
export class TypedValueError extends Error {
  override name = "TypedValueError";
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
 * Merges an applied configuration into the live object (structured-merge-diff's
 * `Merge`): scalars and atomic values are replaced, granular maps and structs
 * united, associative lists merged item by item, keeping the configuration's
 * order for the items it names. Returns a new value; neither input changes.
 */
export function merge(live: unknown, config: unknown, type: TypeNode): unknown {
  if (config === undefined) return live;
  if (live === undefined) return copyJson(config);
  const t = resolve(type, config);
  if (config === null) return isGranular(t) ? live : null;
  if (bothEmpty(live, config)) return copyJson(config);
  switch (t.kind) {
    case "struct":
    case "map": {
      if (t.atomic || !isObject(live) || !isObject(config)) return copyJson(config);
      const out: Record<string, unknown> = { ...live };
      for (const [name, value] of Object.entries(config)) {
        const merged = merge(live[name], value, childType(t, name));
        // A null decodes to an absent field in kube-apiserver's typed objects.
        if (merged === null) delete out[name];
        else out[name] = merged;
      }
      return out;
    }
    case "list": {
      if (t.listType === "atomic" || !Array.isArray(live) || !Array.isArray(config)) return copyJson(config);
      const itemType = t.listType === "map" ? t.items : { kind: "scalar" as const };
      return mergeListItems(live, config, itemIdentity(t), itemType);
    }
    default:
      return copyJson(config);
  }
}

/**
 * The order of a merged associative list, as structured-merge-diff's list merge
 * walks both lists at once: items the configuration names follow its order;
 * a live-only item stays where it was relative to the shared items around it,
 * so it is emitted as soon as the walk over the live list reaches it.
 */
function mergeListItems(
  live: unknown[],
  config: unknown[],
  identify: (item: unknown) => string,
  itemType: TypeNode,
): unknown[] {
  const liveKeys = live.map(identify);
  const configKeys = config.map(identify);
  const liveByKey = new Map<string, unknown>();
  for (const [index, key] of liveKeys.entries()) liveByKey.set(key, live[index]);
  const configByKey = new Map<string, unknown>();
  for (const [index, key] of configKeys.entries()) configByKey.set(key, config[index]);
  const shared = configKeys.filter((key) => liveByKey.has(key));
  let nextShared = 0;
  const done = new Set<string>();
  const out: unknown[] = [];
  const takeConfig = (index: number) => {
    const key = configKeys[index]!;
    done.add(key);
    out.push(merge(liveByKey.get(key), configByKey.get(key), itemType));
    if (shared[nextShared] === key) nextShared++;
  };
  let l = 0;
  let c = 0;
  while (l < live.length || c < config.length) {
    if (l < live.length && c < config.length) {
      const key = liveKeys[l]!;
      if (key === configKeys[c]) {
        takeConfig(c);
        l++;
        c++;
        continue;
      }
      // A shared item the configuration wants later: it is emitted when the configuration gets there.
      if (configByKey.has(key) && nextShared < shared.length && shared[nextShared] !== key) {
        l++;
        continue;
      }
    }
    if (l < live.length) {
      const key = liveKeys[l]!;
      if (!configByKey.has(key)) {
        out.push(live[l]);
        l++;
        continue;
      }
      if (done.has(key)) {
        l++;
        continue;
      }
    }
    if (c < config.length) {
      takeConfig(c);
      c++;
    }
  }
  return out;
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
    if (!deepEqual(before, after)) out.modified.insert(path);
    return;
  }
  // Most of an updated object is unchanged: comparing costs far less than walking it by type.
  if (deepEqual(before, after)) return;
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

/**
 * `added(value, …)` serialized as FieldsV1 without building the set: the
 * JSON text of the subtree, or undefined when it holds no member. A keyed
 * list with two items of one key throws {@link DuplicateItems} (the set would
 * unite them; callers take the general path then).
 */
export function addedFieldsV1Text(value: unknown, type: TypeNode, listItem: boolean): string | undefined {
  const t = resolve(type, value);
  const member = listItem || !("zero" in t && t.zero === true);
  let body = "";
  if (value !== null && !isEmptyContainer(value)) {
    if (t.kind === "list" && t.listType !== "atomic" && Array.isArray(value)) {
      const identify = itemIdentity(t);
      const itemType = t.listType === "map" ? t.items : scalarType;
      const items = value.map((item) => [identify(item), item] as const);
      items.sort((a, b) => compareElements(a[0], b[0]));
      for (let i = 0; i < items.length; i++) {
        const [element, item] = items[i]!;
        if (i > 0 && items[i - 1]![0] === element) throw new DuplicateItems();
        body += `,${quoteElement(element)}:${addedFieldsV1Text(item, itemType, true)}`;
      }
    } else if ((t.kind === "struct" || t.kind === "map") && !t.atomic && isObject(value)) {
      body = addedFieldsText(value, t, undefined);
    }
  }
  if (body === "") return member ? "{}" : undefined;
  return member ? `{".":{}${body}}` : `{${body.slice(1)}}`;
}

/**
 * The children of a granular struct or map as {@link addedFieldsV1Text} writes
 * them (each preceded by a comma), in FieldsV1 order, leaving out `skip`.
 */
export function addedFieldsText(
  value: Record<string, unknown>,
  type: TypeNode,
  skip: ReadonlySet<string> | undefined,
): string {
  let body = "";
  for (const name of Object.keys(value).sort()) {
    if (skip?.has(name)) continue;
    const text = addedFieldsV1Text(value[name], childType(type, name), false);
    if (text !== undefined) body += `,${quoteField(name)}:${text}`;
  }
  return body;
}

/** Two items of a keyed list with the same key, met while serializing. */
export class DuplicateItems extends Error {}

const scalarType: TypeNode = { kind: "scalar" };

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
function itemIdentity(t: ListType): (item: unknown) => string {
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

function isGranular(t: TypeNode): boolean {
  return (t.kind === "struct" || t.kind === "map") && !t.atomic;
}

function bothEmpty(a: unknown, b: unknown): boolean {
  return isEmptyContainer(a) && isEmptyContainer(b);
}

function isEmptyContainer(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (!isObject(value)) return false;
  for (const _ in value) return false;
  return true;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    if (!Object.hasOwn(rb, key) || !deepEqual(ra[key], rb[key])) return false;
    count++;
  }
  for (const _ in rb) count--;
  return count === 0;
}
