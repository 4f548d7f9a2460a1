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
