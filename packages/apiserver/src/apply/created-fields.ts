import { sortedKeys, sortNames } from "../json.js";
import { compareElements, sortFew } from "./fieldpath.js";
import { type FieldsV1, internedFieldsV1, internFieldsV1, quoteElement, quoteField } from "./fields-v1.js";
import { childType, resolve, type TypeNode } from "./schema.js";
import { isObject, itemIdentity } from "./typed.js";

/*
 * The ownership of a created object, read straight from the object as a
 * FieldsV1 tree: what `compare(undefined, object)` and the field-set encoding
 * give, without building a field set.
 *
 * The walk writes tokens, not text: `{.` (a member with children, `{".":{}`),
 * `{` (a non-member with children), a quoted field or element name, `{}` (a
 * member without children) and `}`. Objects made from one template write the
 * same tokens, so the tokens are followed down a trie of those seen before;
 * where the trie has the whole sequence, its end holds the shared tree and no
 * text is written at all. Text is made only for a sequence the trie lacks.
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
  const writer = new TokenWriter();
  try {
    writer.write(open);
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
    writer.write(close);
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
  writer.write(open);
  if (!childTokens(writer, metadata, Object.keys(metadata), t, strippedMetadataNames)) {
    writer.rewind(mark);
    return false;
  }
  writer.write(close);
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
        writer.write(member ? openMember : open);
        wrote = itemTokens(writer, value, t);
      }
    } else if ((t.kind === "struct" || t.kind === "map") && !t.atomic) {
      const names = Object.keys(value);
      if (names.length > 0) {
        writer.write(member ? openMember : open);
        wrote = childTokens(writer, value as JsonObject, names, t, undefined);
      }
    }
    if (wrote) {
      writer.write(close);
      return true;
    }
    writer.rewind(mark);
  }
  if (!member) return false;
  writer.write(leaf);
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

/** Two items of a keyed list with the same key, met while serializing. */
export class DuplicateItems extends Error {}

const scalarType: TypeNode = { kind: "scalar" };

// The tokens. Names are JSON strings (they start with a quote), so none is mistaken for another.
const open = "{";
const openMember = "{.";
const leaf = "{}";
const close = "}";

/** A point of the trie: the token sequences seen so far, and the tree where one ends. */
interface TrieNode {
  readonly next: Map<string, TrieNode>;
  tree?: FieldsV1;
}

/** Past this many trie points the trie starts over (the trees it held stay valid where they are used). */
const maxTrieNodes = 50_000;
let trie: TrieNode = { next: new Map() };
let trieNodes = 0;

/** The tokens of one walk: kept (for text, should the trie lack them) and followed down the trie. */
class TokenWriter {
  readonly #tokens: string[] = [];
  /** Where the tokens so far lead in the trie; undefined once they left it. */
  #at: TrieNode | undefined = trie;
  /** The trie point of each token written (before it), so a rewind finds its way back. */
  readonly #path: (TrieNode | undefined)[] = [];

  write(token: string): void {
    this.#path.push(this.#at);
    this.#tokens.push(token);
    if (this.#at !== undefined) this.#at = this.#at.next.get(token);
  }

  mark(): number {
    return this.#tokens.length;
  }

  /** Takes back every token written since `mark`. */
  rewind(mark: number): void {
    if (mark === this.#tokens.length) return;
    this.#at = this.#path[mark];
    this.#tokens.length = mark;
    this.#path.length = mark;
  }

  /**
   * The shared tree of the tokens written: the trie's, else the text's. A
   * sequence is added to the trie the second time its text is met, so an
   * object of a shape met once costs no trie points.
   */
  tree(): FieldsV1 {
    if (this.#at?.tree !== undefined) return this.#at.tree;
    const text = fieldsV1Text(this.#tokens);
    const seen = internedFieldsV1(text);
    if (seen === undefined) return internFieldsV1(text);
    if (trieNodes + this.#tokens.length > maxTrieNodes) {
      trie = { next: new Map() };
      trieNodes = 0;
    }
    let node = trie;
    for (const token of this.#tokens) {
      let next = node.next.get(token);
      if (next === undefined) {
        next = { next: new Map() };
        node.next.set(token, next);
        trieNodes++;
      }
      node = next;
    }
    node.tree = seen;
    return seen;
  }
}

/** The FieldsV1 text of a token sequence. */
function fieldsV1Text(tokens: readonly string[]): string {
  let text = "";
  // Whether the last token ended a value (or the `".":{}` of a member): a name after it takes a comma.
  let afterValue = false;
  for (const token of tokens) {
    if (token === open) {
      text += "{";
      afterValue = false;
    } else if (token === openMember) {
      text += '{".":{}';
      afterValue = true;
    } else if (token === leaf || token === close) {
      text += token;
      afterValue = true;
    } else {
      text += `${afterValue ? "," : ""}${token}:`;
      afterValue = false;
    }
  }
  return text;
}
