import { FieldSet, sortElements } from "./fieldpath.js";

/**
 * FieldsV1 values as stored objects carry them: built once per distinct field
 * set, frozen, and shared by every object whose manager owns the same fields.
 *
 * Objects made from one template (the pods of a ReplicaSet, say) have the same
 * field sets, so they share one FieldsV1 tree instead of each holding a copy.
 * kube-apiserver keeps FieldsV1 as its serialized bytes per object; sharing
 * frozen trees costs less memory than either and needs no parsing to read.
 */
export type FieldsV1 = Readonly<Record<string, unknown>>;

/** The FieldsV1 tree of a set: the shared one for its serialization. */
export function encodeFieldSet(set: FieldSet): FieldsV1 {
  let tree = treeOfSet.get(set);
  if (tree === undefined) {
    tree = internFieldsV1(fieldsV1Text(set));
    if (!setOfTree.has(tree)) setOfTree.set(tree, set);
    treeOfSet.set(set, tree);
  }
  return tree;
}

/** The shared FieldsV1 tree of a serialization (which must be FieldsV1 as upstream writes it). */
export function internFieldsV1(text: string): FieldsV1 {
  let tree = interned.get(text);
  if (tree === undefined) {
    if (interned.size >= maxInterned) interned.clear();
    tree = deepFreeze(JSON.parse(text) as Record<string, unknown>);
    interned.set(text, tree);
    shared.add(tree);
  }
  return tree;
}

/** The shared tree of a serialization already interned, if it is. */
export function internedFieldsV1(text: string): FieldsV1 | undefined {
  return interned.get(text);
}

/**
 * The field set of a FieldsV1 value. A tree this module made decodes without
 * parsing. Throws on a malformed element key, as {@link FieldSet.fromFieldsV1} does.
 */
export function decodeFieldsV1(value: unknown): FieldSet {
  if (typeof value !== "object" || value === null) return FieldSet.fromFieldsV1(value);
  let set = setOfTree.get(value);
  if (set === undefined) {
    set = FieldSet.fromFieldsV1(value);
    if (Object.isFrozen(value)) setOfTree.set(value, set);
    // An unchanged set then encodes to the very tree it came from.
    if (shared.has(value)) treeOfSet.set(set, value as FieldsV1);
  }
  return set;
}

/** Whether `value` is a FieldsV1 tree {@link encodeFieldSet} made (frozen, shareable). */
export function isSharedFieldsV1(value: unknown): value is FieldsV1 {
  return typeof value === "object" && value !== null && shared.has(value);
}

/** Distinct serializations kept for sharing; past this many the table starts over (shared trees stay valid). */
const maxInterned = 20_000;
const interned = new Map<string, FieldsV1>();
const treeOfSet = new WeakMap<FieldSet, FieldsV1>();
const setOfTree = new WeakMap<object, FieldSet>();
const shared = new WeakSet<object>();

/** `JSON.stringify(set.toFieldsV1())`, without building the tree. */
function fieldsV1Text(set: FieldSet): string {
  let out = "{";
  let first = true;
  if (set.member && set.children.size > 0) {
    out += '".":{}';
    first = false;
  }
  const elements = sortElements([...set.children.keys()]);
  for (const element of elements) {
    const child = set.children.get(element)!;
    if (child.empty()) continue;
    out += `${first ? "" : ","}${quoteElement(element)}:${fieldsV1Text(child)}`;
    first = false;
  }
  return `${out}}`;
}

/** Element keys as JSON strings; the same few hundred recur in every object of a kind. */
const quotedElements = new Map<string, string>();

/** An element key as a JSON string. */
export function quoteElement(element: string): string {
  let out = quotedElements.get(element);
  if (out === undefined) {
    if (quotedElements.size >= maxInterned) quotedElements.clear();
    out = JSON.stringify(element);
    quotedElements.set(element, out);
  }
  return out;
}

/** `quoteElement(fieldElement(name))`, remembered per name. */
export function quoteField(name: string): string {
  let out = quotedFields.get(name);
  if (out === undefined) {
    if (quotedFields.size >= maxInterned) quotedFields.clear();
    out = JSON.stringify(`f:${name}`);
    quotedFields.set(name, out);
  }
  return out;
}

const quotedFields = new Map<string, string>();

function deepFreeze<T extends object>(value: T): T {
  for (const member of Object.values(value))
    if (typeof member === "object" && member !== null) deepFreeze(member);
  return Object.freeze(value);
}
