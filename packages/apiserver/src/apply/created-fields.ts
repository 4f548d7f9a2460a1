import { sortedKeys } from "../json.js";
import { compareElements, sortFew } from "./fieldpath.js";
import { quoteElement, quoteField } from "./fields-v1.js";
import { childType, resolve, type TypeNode } from "./schema.js";
import { isEmptyContainer, isObject, itemIdentity } from "./typed.js";

/*
 * The ownership of a created object, written straight from the object as
 * FieldsV1 text: what `compare(undefined, object)` and the field-set encoding
 * give, without building a field set.
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
 * `strip(withoutReset(compare(undefined, object).added))` as FieldsV1 text, or
 * undefined where that takes the general path (reset paths below the root,
 * a keyed list with a repeated key, an object that is not a granular struct).
 */
export function createdFieldsText(
  object: JsonObject,
  type: TypeNode,
  resetFields: ReadonlyArray<readonly string[]> | undefined,
): string | undefined {
  const t = resolve(type, object);
  if ((t.kind !== "struct" && t.kind !== "map") || t.atomic) return undefined;
  let skip = strippedRootNames;
  if (resetFields !== undefined && resetFields.length > 0) {
    if (resetFields.some((path) => path.length !== 1)) return undefined;
    skip = new Set([...strippedRootNames, ...resetFields.map((path) => path[0]!)]);
  }
  try {
    let body = "";
    for (const name of sortedKeys(object)) {
      if (skip.has(name)) continue;
      const type = childType(t, name);
      const text =
        name === "metadata"
          ? metadataText(object.metadata, type)
          : addedFieldsV1Text(object[name], type, false);
      if (text !== undefined) body += `${body === "" ? "" : ","}${quoteField(name)}:${text}`;
    }
    return `{${body}}`;
  } catch (error) {
    if (error instanceof DuplicateItems) return undefined;
    throw error;
  }
}

/** The created metadata's FieldsV1 text: never a member itself, without the fields never tracked. */
function metadataText(metadata: unknown, type: TypeNode): string | undefined {
  const t = resolve(type, metadata);
  if (!isObject(metadata) || (t.kind !== "struct" && t.kind !== "map") || t.atomic) return undefined;
  const children = addedFieldsText(metadata, t, strippedMetadataNames);
  return children === "" ? undefined : `{${children}}`;
}

const strippedRootNames: ReadonlySet<string> = new Set(["apiVersion", "kind"]);

const strippedMetadataNames: ReadonlySet<string> = new Set(strippedMetadata);

/**
 * `added(value, …)` serialized as FieldsV1 without building the set: the
 * JSON text of the subtree, or undefined when it holds no member. A keyed
 * list with two items of one key throws {@link DuplicateItems} (the set would
 * unite them; callers take the general path then).
 */
export function addedFieldsV1Text(value: unknown, type: TypeNode, listItem: boolean): string | undefined {
  const t = resolve(type, value);
  const member = listItem || (t as { zero?: boolean }).zero !== true;
  let body = "";
  if (value !== null && !isEmptyContainer(value)) {
    if (t.kind === "list" && t.listType !== "atomic" && Array.isArray(value)) body = itemsText(value, t);
    else if ((t.kind === "struct" || t.kind === "map") && !t.atomic && isObject(value))
      body = addedFieldsText(value, t, undefined);
  }
  if (body === "") return member ? "{}" : undefined;
  return member ? `{".":{},${body}}` : `{${body}}`;
}

/** The items of a keyed list or set, in FieldsV1 order, separated by commas. */
function itemsText(value: readonly unknown[], t: Extract<TypeNode, { kind: "list" }>): string {
  const identify = itemIdentity(t);
  const itemType = t.listType === "map" ? t.items : scalarType;
  const elements = value.map(identify);
  const order = sortFew(
    value.map((_, i) => i),
    (a, b) => compareElements(elements[a]!, elements[b]!),
  );
  let body = "";
  for (let i = 0; i < order.length; i++) {
    const element = elements[order[i]!]!;
    if (i > 0 && elements[order[i - 1]!] === element) throw new DuplicateItems();
    body += `${i === 0 ? "" : ","}${quoteElement(element)}:${addedFieldsV1Text(value[order[i]!], itemType, true)}`;
  }
  return body;
}

/**
 * The children of a granular struct or map as {@link addedFieldsV1Text} writes
 * them, separated by commas, in FieldsV1 order, leaving out `skip`.
 */
export function addedFieldsText(
  value: Record<string, unknown>,
  type: TypeNode,
  skip: ReadonlySet<string> | undefined,
): string {
  let body = "";
  for (const name of sortedKeys(value)) {
    if (skip?.has(name)) continue;
    const text = addedFieldsV1Text(value[name], childType(type, name), false);
    if (text !== undefined) body += `${body === "" ? "" : ","}${quoteField(name)}:${text}`;
  }
  return body;
}

/** Two items of a keyed list with the same key, met while serializing. */
export class DuplicateItems extends Error {}

const scalarType: TypeNode = { kind: "scalar" };
