import { sortedKeys, sortNames } from "../json.js";
import { compareElements, sortFew } from "./fieldpath.js";
import {
  closeToken,
  type FieldsV1,
  leafToken,
  memberToken,
  openToken,
  quoteElement,
  quoteField,
  TokenWriter,
} from "./fields-v1.js";
import { childType, resolve, type TypeNode } from "./schema.js";
import { isObject, itemIdentity } from "./typed.js";

/*
 * The ownership of a created object, read straight from the object as a
 * FieldsV1 tree: what `compare(undefined, object)` and the field-set encoding
 * give, without building a field set.
 *
 * The walk writes FieldsV1 tokens ({@link TokenWriter}): objects made from
 * one template write the same ones and share one tree without any text being
 * written.
 */

type JsonObject = Record<string, unknown>;

/** Paths never tracked (apimachinery's `stripMeta`). */
export const strippedMetadata = [
  "name",
  "namespace",
  "creationTimestamp",
  "selfLink",
  "uid",
  "clusterName",
  "generation",
  "managedFields",
  "resourceVersion",
];

/**
 * `strip(withoutReset(compare(undefined, object).added))` as a shared FieldsV1
 * tree (an empty one when nothing is owned), or undefined where that takes the
 * general path (reset paths below the root, a keyed list with a repeated key,
 * an object that is not a granular struct).
 */
export function createdFieldsV1(
  object: JsonObject,
  type: TypeNode,
  resetFields: ReadonlyArray<readonly string[]> | undefined,
): FieldsV1 | undefined {
  let cache = shapes.get(type);
  if (cache === undefined) {
    cache = { roots: new Map(), hits: 0, misses: 0, bypass: 0 };
    shapes.set(type, cache);
  }
  if (cache.bypass > 0) {
    cache.bypass--;
    return walkCreated(object, type, resetFields);
  }
  const reset = resetKey(resetFields);
  let root = cache.roots.get(reset);
  if (root === undefined) {
    root = newShapeNode();
    cache.roots.set(reset, root);
  }
  cursor = root;
  if (readObject(object, false) && cursor.tree !== undefined) {
    cache.hits++;
    return cursor.tree ?? undefined;
  }
  const tree = walkCreated(object, type, resetFields);
  if (shapeNodes > maxShapeNodes) {
    shapes = new WeakMap();
    shapeNodes = 0;
  } else {
    cursor = root;
    inserting = true;
    try {
      readObject(object, false);
    } finally {
      inserting = false;
    }
    cursor.tree = tree ?? null;
  }
  // Where objects rarely share a shape, the shape is not worth reading for a while.
  if (++cache.misses >= shapeWindow) {
    if (cache.hits * 8 < cache.misses) cache.bypass = bypassCalls;
    cache.hits = 0;
    cache.misses = 0;
  }
  return tree;
}

/*
 * Objects made from one template (a ReplicaSet's pods, a Job's) own the same
 * fields, and what a created object owns depends only on its shape: the keys
 * of every object in it, the kind of every value, and the scalars of list
 * items (where list keys and set members are). Each type keeps a trie of the
 * shapes it met, ending at their trees, so an object of a known shape costs a
 * map lookup per key instead of a walk against its type.
 *
 * A shape is read as a sequence of symbols: an object is OPEN, then each key
 * (a string) and its value, then CLOSE; a value is an object, a list (LIST,
 * its items, END) or, as a member, its kind (a number). In a list, and as a
 * list item's member, a scalar is its value: a string or boolean as itself, a
 * number after NUMBER, null as NULL. Keys are strings and markers numbers, so
 * no two shapes read alike.
 */
interface ShapeNode {
  /** The first branch, kept outside a map: most nodes have no other. */
  key: unknown;
  child: ShapeNode | undefined;
  /** Every later branch. */
  more: Map<unknown, ShapeNode> | undefined;
  /** The created object's tree where a whole shape ends here; null: the general path's (none). */
  tree?: FieldsV1 | null;
}

interface ShapeCache {
  /** A trie per set of reset fields. */
  readonly roots: Map<string, ShapeNode>;
  hits: number;
  misses: number;
  /** Calls left that walk without reading the shape. */
  bypass: number;
}

const OPEN = 0;
const CLOSE = 1;
const LIST = 2;
const END = 3;
const NUMBER = 4;
const NULL = 5;
const STRING_KIND = 6;
const NUMBER_KIND = 7;
const BOOLEAN_KIND = 8;
const UNDEFINED = 9;

let shapes = new WeakMap<TypeNode, ShapeCache>();
/** Trie nodes made since the tries last started over. */
let shapeNodes = 0;
/** Past this many nodes, every type's trie starts over. */
const maxShapeNodes = 100_000;
/** Lookups per window; in a window with under one hit in eight, the next {@link bypassCalls} calls walk at once. */
const shapeWindow = 64;
const bypassCalls = 1024;

/** Where the shape read so far leads (one read at a time: a read never waits). */
let cursor: ShapeNode = newShapeNode();
/** Whether a read adds the nodes it misses (after a walk, to remember the shape). */
let inserting = false;

function newShapeNode(): ShapeNode {
  return { key: undefined, child: undefined, more: undefined };
}

/** Moves the cursor along `symbol`; false where the trie has no such branch (and nothing is inserted). */
function step(symbol: unknown): boolean {
  let next = cursor.key === symbol ? cursor.child : cursor.more?.get(symbol);
  if (next === undefined) {
    if (!inserting) return false;
    next = newShapeNode();
    if (cursor.child === undefined) {
      cursor.key = symbol;
      cursor.child = next;
    } else (cursor.more ??= new Map()).set(symbol, next);
    shapeNodes++;
  }
  cursor = next;
  return true;
}

function readObject(value: JsonObject, listItem: boolean): boolean {
  if (!step(OPEN)) return false;
  // for…in, not Object.keys: no array per object (the objects are plain JSON).
  for (const name in value) {
    if (!step(name)) return false;
    const member = value[name];
    if (typeof member === "object" && member !== null) {
      if (!(Array.isArray(member) ? readList(member) : readObject(member as JsonObject, false))) return false;
    } else if (!(listItem ? readScalar(member) : step(kindOf(member)))) return false;
  }
  return step(CLOSE);
}

function readList(items: readonly unknown[]): boolean {
  if (!step(LIST)) return false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === "object" && item !== null) {
      if (!(Array.isArray(item) ? readList(item) : readObject(item as JsonObject, true))) return false;
    } else if (!readScalar(item)) return false;
  }
  return step(END);
}

function readScalar(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return step(value);
    case "number":
      return step(NUMBER) && step(value);
    default:
      return step(value === null ? NULL : UNDEFINED);
  }
}

function kindOf(value: unknown): number {
  switch (typeof value) {
    case "string":
      return STRING_KIND;
    case "number":
      return NUMBER_KIND;
    case "boolean":
      return BOOLEAN_KIND;
    default:
      return value === null ? NULL : UNDEFINED;
  }
}

function resetKey(resetFields: ReadonlyArray<readonly string[]> | undefined): string {
  if (resetFields === undefined || resetFields.length === 0) return "";
  let key = resetKeys.get(resetFields);
  if (key === undefined) {
    key = JSON.stringify(resetFields);
    resetKeys.set(resetFields, key);
  }
  return key;
}

const resetKeys = new WeakMap<ReadonlyArray<readonly string[]>, string>();

/** {@link createdFieldsV1} by walking the object against its type. */
function walkCreated(
  object: JsonObject,
  type: TypeNode,
  resetFields: ReadonlyArray<readonly string[]> | undefined,
): FieldsV1 | undefined {
  const t = resolve(type, object);
  if ((t.kind !== "struct" && t.kind !== "map") || t.atomic) return undefined;
  let skip = strippedRootNames;
  if (resetFields !== undefined && resetFields.length > 0) {
    if (resetFields.some((path) => path.length !== 1)) return undefined;
    skip = new Set([...strippedRootNames, ...resetFields.map((path) => path[0]!)]);
  }
  const writer = tokens.reset();
  try {
    writer.write(openToken);
    for (const name of sortedKeys(object)) {
      if (skip.has(name)) continue;
      const type = childType(t, name);
      const mark = writer.mark();
      writer.write(quoteField(name));
      const wrote =
        name === "metadata"
          ? metadataTokens(writer, object.metadata, type)
          : addedTokens(writer, object[name], type, false);
      if (!wrote) writer.rewind(mark);
    }
    writer.write(closeToken);
  } catch (error) {
    if (error instanceof DuplicateItems) return undefined;
    throw error;
  }
  return writer.tree();
}

/** The created metadata's tokens: never a member itself, without the fields never tracked. */
function metadataTokens(writer: TokenWriter, metadata: unknown, type: TypeNode): boolean {
  const t = resolve(type, metadata);
  if (!isObject(metadata) || (t.kind !== "struct" && t.kind !== "map") || t.atomic) return false;
  const mark = writer.mark();
  writer.write(openToken);
  if (!childTokens(writer, metadata, Object.keys(metadata), t, strippedMetadataNames)) {
    writer.rewind(mark);
    return false;
  }
  writer.write(closeToken);
  return true;
}

const strippedRootNames: ReadonlySet<string> = new Set(["apiVersion", "kind"]);

const strippedMetadataNames: ReadonlySet<string> = new Set(strippedMetadata);

/**
 * `added(value, …)` as tokens: whether the subtree holds a member (else it
 * wrote nothing). A keyed list with two items of one key throws
 * {@link DuplicateItems} (the set would unite them; callers take the general
 * path then).
 */
function addedTokens(writer: TokenWriter, value: unknown, type: TypeNode, listItem: boolean): boolean {
  const t = resolve(type, value);
  const member = listItem || (t as { zero?: boolean }).zero !== true;
  if (typeof value === "object" && value !== null) {
    const mark = writer.mark();
    let wrote = false;
    if (Array.isArray(value)) {
      if (t.kind === "list" && t.listType !== "atomic" && value.length > 0) {
        writer.write(member ? memberToken : openToken);
        wrote = itemTokens(writer, value, t);
      }
    } else if ((t.kind === "struct" || t.kind === "map") && !t.atomic) {
      const names = Object.keys(value);
      if (names.length > 0) {
        writer.write(member ? memberToken : openToken);
        wrote = childTokens(writer, value as JsonObject, names, t, undefined);
      }
    }
    if (wrote) {
      writer.write(closeToken);
      return true;
    }
    writer.rewind(mark);
  }
  if (!member) return false;
  writer.write(leafToken);
  return true;
}

/** The items of a keyed list or set, in FieldsV1 order; whether there were any. */
function itemTokens(writer: TokenWriter, value: readonly unknown[], t: Extract<TypeNode, { kind: "list" }>) {
  const identify = itemIdentity(t);
  const itemType = t.listType === "map" ? t.items : scalarType;
  if (value.length === 1) {
    writer.write(quoteElement(identify(value[0])));
    addedTokens(writer, value[0], itemType, true);
    return true;
  }
  const elements = value.map(identify);
  const order = sortFew(
    value.map((_, i) => i),
    (a, b) => compareElements(elements[a]!, elements[b]!),
  );
  for (let i = 0; i < order.length; i++) {
    const element = elements[order[i]!]!;
    if (i > 0 && elements[order[i - 1]!] === element) throw new DuplicateItems();
    writer.write(quoteElement(element));
    addedTokens(writer, value[order[i]!], itemType, true);
  }
  return order.length > 0;
}

/**
 * The children of a granular struct or map (`names`, its keys), in FieldsV1
 * order, leaving out `skip`; whether any wrote.
 */
function childTokens(
  writer: TokenWriter,
  value: JsonObject,
  names: string[],
  type: TypeNode,
  skip: ReadonlySet<string> | undefined,
): boolean {
  let wrote = false;
  for (const name of sortNames(names)) {
    if (skip?.has(name)) continue;
    const mark = writer.mark();
    writer.write(quoteField(name));
    if (addedTokens(writer, value[name], childType(type, name), false)) wrote = true;
    else writer.rewind(mark);
  }
  return wrote;
}

/** The writer of every walk (one at a time: a walk never waits). */
const tokens = new TokenWriter();

/** Two items of a keyed list with the same key, met while serializing. */
export class DuplicateItems extends Error {}

const scalarType: TypeNode = { kind: "scalar" };
