import { FieldSet, sortElements } from "./fieldpath.js";

/**
 * FieldsV1 values as stored objects carry them: built once per distinct field
 * set, frozen, and shared by every object whose manager owns the same fields.
 *
 * Objects made from one template (the pods of a ReplicaSet, say) have the same
 * field sets, so they share one FieldsV1 tree instead of each holding a copy.
 * kube-apiserver keeps FieldsV1 as its serialized bytes per object; sharing
 * frozen trees costs less memory than either and needs no parsing to read.
 *
 * Every node of a tree is shared too (hash-consed: one frozen object per
 * distinct subtree), so a set that differs from an encoded one in a few
 * paths, as an update's does, encodes by building only the nodes along them.
 */
export type FieldsV1 = Readonly<Record<string, unknown>>;

/** The FieldsV1 tree of a set: the shared one for its serialization. */
export function encodeFieldSet(set: FieldSet): FieldsV1 {
  const tree = consSet(set) ?? leafTree;
  if (!setOfTree.has(tree)) setOfTree.set(tree, set);
  return tree;
}

/** The shared tree of a set, or undefined when it has no member (its parent leaves it out). */
function consSet(set: FieldSet): FieldsV1 | undefined {
  const known = set.tree as FieldsV1 | undefined;
  if (known !== undefined) return known;
  if (set.children.size === 0) return set.member ? leafTree : undefined;
  const members: [string, FieldsV1][] = [];
  for (const element of sortElements([...set.children.keys()])) {
    const child = consSet(set.children.get(element)!);
    if (child !== undefined) members.push([element, child]);
  }
  // A member whose children are all empty is still written `{".":{}}`.
  if (!set.member && members.length === 0) return undefined;
  const tree = consNode(set.member, members);
  set.tree = tree;
  return tree;
}

/** The shared tree of a serialization (which must be FieldsV1 as upstream writes it). */
function internFieldsV1(text: string): FieldsV1 {
  let tree = interned.get(text);
  if (tree === undefined) {
    if (interned.size >= maxInterned) interned.clear();
    tree = consJson(JSON.parse(text) as Record<string, unknown>);
    interned.set(text, tree);
  }
  return tree;
}

/** The shared tree of a parsed FieldsV1 value in FieldsV1 order. */
function consJson(json: Record<string, unknown>): FieldsV1 {
  const keys = Object.keys(json);
  if (keys.length === 0) return leafTree;
  const members: [string, FieldsV1][] = [];
  for (const key of keys)
    if (key !== ".") members.push([key, consJson(json[key] as Record<string, unknown>)]);
  return consNode(keys[0] === ".", members);
}

/** The one frozen node with `members` (trees already shared), and `".":{}` first when a member. */
function consNode(member: boolean, members: readonly (readonly [string, FieldsV1])[]): FieldsV1 {
  if (consedLevels >= maxConsed) {
    roots = [newLevel(), newLevel()];
    consedLevels = 0;
  }
  // Down a trie keyed by each member's element and then its (shared) tree: nothing to build or hash.
  let level = roots[member ? 1 : 0]!;
  for (const [element, child] of members) {
    let byTree = level.next.get(element);
    if (byTree === undefined) {
      byTree = new Map();
      level.next.set(element, byTree);
    }
    let next = byTree.get(child);
    if (next === undefined) {
      next = newLevel();
      byTree.set(child, next);
      consedLevels++;
    }
    level = next;
  }
  if (level.tree === undefined) {
    const node: Record<string, unknown> = member ? { ".": leafTree } : {};
    for (const [element, child] of members) node[element] = child;
    level.tree = Object.freeze(node);
    shared.add(level.tree);
  }
  return level.tree;
}

/** A point of the node trie: the nodes whose members so far lead here, and the one they end at. */
interface ConsLevel {
  readonly next: Map<string, Map<FieldsV1, ConsLevel>>;
  tree?: FieldsV1;
}

function newLevel(): ConsLevel {
  return { next: new Map() };
}

/** `{}`: a member without children, and the `"."` of one with them. */
const leafTree: FieldsV1 = Object.freeze({});

/** Past this many trie points the node trie starts over (shared trees stay valid where they are used). */
const maxConsed = 100_000;
/** The node tries of non-members and of members. */
let roots: ConsLevel[] = [newLevel(), newLevel()];
let consedLevels = 0;

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
    // An unchanged set (or subtree of one) then encodes to the very tree it came from.
    if (shared.has(value)) remember(set, value as FieldsV1);
  }
  return set;
}

/** Maps each node of `set`, decoded from the shared `tree`, to its node of the tree. */
function remember(set: FieldSet, tree: FieldsV1): void {
  set.tree = tree;
  for (const [element, child] of set.children) {
    const subtree = tree[element];
    if (typeof subtree === "object" && subtree !== null && shared.has(subtree))
      remember(child, subtree as FieldsV1);
  }
}

/** Whether `value` is a FieldsV1 tree {@link encodeFieldSet} made (frozen, shareable). */
export function isSharedFieldsV1(value: unknown): value is FieldsV1 {
  return typeof value === "object" && value !== null && shared.has(value);
}

/** Distinct serializations kept for sharing; past this many the table starts over (shared trees stay valid). */
const maxInterned = 20_000;
const interned = new Map<string, FieldsV1>();
const setOfTree = new WeakMap<object, FieldSet>();
const shared = new WeakSet<object>([leafTree]);

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

/*
 * FieldsV1 as tokens: `{.` (a member with children, `{".":{}`), `{` (a
 * non-member with children), a quoted field or element name, `{}` (a node
 * without children) and `}`. Names are JSON strings (they start with a
 * quote), so none is mistaken for another. Objects made from one template
 * write the same tokens, so the tokens are followed down a trie of those seen
 * before; where the trie has the whole sequence, its end holds the shared
 * tree and no text is written at all. Text is made only for a sequence the
 * trie lacks.
 */
export const openToken = "{";
export const memberToken = "{.";
export const leafToken = "{}";
export const closeToken = "}";

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
export class TokenWriter {
  readonly #tokens: string[] = [];
  /** Where the tokens so far lead in the trie; undefined once they left it. */
  #at: TrieNode | undefined = trie;

  /** Starts a new sequence (the writer's arrays are kept, so writing allocates nothing). */
  reset(): this {
    this.#tokens.length = 0;
    this.#at = trie;
    return this;
  }

  write(token: string): void {
    this.#tokens.push(token);
    if (this.#at !== undefined) this.#at = this.#at.next.get(token);
  }

  mark(): number {
    return this.#tokens.length;
  }

  /** Takes back every token written since `mark` (rare: a subtree that held no member). */
  rewind(mark: number): void {
    if (mark === this.#tokens.length) return;
    this.#tokens.length = mark;
    let at: TrieNode | undefined = trie;
    for (let i = 0; i < mark && at !== undefined; i++) at = at.next.get(this.#tokens[i]!);
    this.#at = at;
  }

  /**
   * The shared tree of the tokens written: the trie's, else the text's. A
   * sequence is added to the trie the second time its text is met, so an
   * object of a shape met once costs no trie points.
   */
  tree(): FieldsV1 {
    if (this.#at?.tree !== undefined) return this.#at.tree;
    const text = textOfTokens(this.#tokens);
    const seen = interned.get(text);
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
function textOfTokens(tokens: readonly string[]): string {
  let text = "";
  // Whether the last token ended a value (or the `".":{}` of a member): a name after it takes a comma.
  let afterValue = false;
  for (const token of tokens) {
    if (token === openToken) {
      text += "{";
      afterValue = false;
    } else if (token === memberToken) {
      text += '{".":{}';
      afterValue = true;
    } else if (token === leafToken || token === closeToken) {
      text += token;
      afterValue = true;
    } else {
      text += `${afterValue ? "," : ""}${token}:`;
      afterValue = false;
    }
  }
  return text;
}
