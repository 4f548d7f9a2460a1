/**
 * Field sets: tries of paths into an object, as structured-merge-diff's
 * `fieldpath.Set` keeps them, with the `FieldsV1` encoding of managedFields.
 *
 * A node's key is the path element in its FieldsV1 spelling: `f:<name>` for a
 * field or map key, `k:<json>` for an item of a keyed list (key fields sorted
 * by name), `v:<json>` for an item of a set, `i:<n>` for an index.
 */

export type Scalar = string | number | boolean | null;

/** One path element, decoded. */
export type PathElement =
  | { field: string }
  | { key: ReadonlyArray<readonly [string, Scalar]> }
  | { value: Scalar }
  | { index: number };

export class FieldSet {
  /** Whether the path ending at this node is itself in the set (FieldsV1's `"."`). */
  member = false;
  readonly children = new Map<string, FieldSet>();
  /**
   * The shared FieldsV1 tree this node encodes to, once known (kept by
   * `fields-v1.ts`; a node is not changed once encoded or decoded).
   */
  tree: object | undefined = undefined;

  /** The child node for an element key, created when absent. */
  child(element: string): FieldSet {
    let node = this.children.get(element);
    if (node === undefined) {
      node = new FieldSet();
      this.children.set(element, node);
    }
    return node;
  }

  /** Inserts a path (a list of element keys) as a member. */
  insert(path: readonly string[]): this {
    let node: FieldSet = this;
    for (const element of path) node = node.child(element);
    node.member = true;
    return this;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = this;
    for (const element of path) {
      node = node.children.get(element);
      if (node === undefined) return false;
    }
    return node.member;
  }

  /** No member anywhere below (or at) this node. */
  empty(): boolean {
    if (this.member) return false;
    for (const child of this.children.values()) if (!child.empty()) return false;
    return true;
  }

  clone(): FieldSet {
    const copy = new FieldSet();
    copy.member = this.member;
    for (const [element, child] of this.children) copy.children.set(element, child.clone());
    return copy;
  }

  /*
   * The set operations below never modify their operands and share unchanged
   * subtrees with them (and may return an operand itself), so a set must not be
   * modified once it is built: `insert`, `child` and `compact` are for building.
   */

  union(other: FieldSet): FieldSet {
    if (other === this || other.empty()) return this;
    if (this.empty()) return other;
    let result: FieldSet | undefined;
    if (other.member && !this.member) {
      result = this.#shallowCopy();
      result.member = true;
    }
    for (const [element, theirs] of other.children) {
      const mine = this.children.get(element);
      const both = mine === undefined ? theirs : mine.union(theirs);
      if (both === mine) continue;
      result ??= this.#shallowCopy();
      result.children.set(element, both);
    }
    return result ?? this;
  }

  difference(other: FieldSet): FieldSet {
    if (other === this) return new FieldSet();
    let result: FieldSet | undefined;
    if (this.member && other.member) {
      result = this.#shallowCopy();
      result.member = false;
    }
    for (const [element, mine] of this.children) {
      const theirs = other.children.get(element);
      if (theirs === undefined) continue;
      const rest = mine.difference(theirs);
      if (rest === mine) continue;
      result ??= this.#shallowCopy();
      if (rest.empty()) result.children.delete(element);
      else result.children.set(element, rest);
    }
    return result ?? this;
  }

  /** Whether both sets have the same members. */
  equals(other: FieldSet): boolean {
    if (other === this) return true;
    if (this.member !== other.member || this.children.size !== other.children.size) return false;
    for (const [element, mine] of this.children) {
      const theirs = other.children.get(element);
      if (theirs === undefined || !mine.equals(theirs)) return false;
    }
    return true;
  }

  /** A new node with this one's membership and children (the children shared). */
  #shallowCopy(): FieldSet {
    const copy = new FieldSet();
    copy.member = this.member;
    for (const [element, child] of this.children) copy.children.set(element, child);
    return copy;
  }

  intersection(other: FieldSet): FieldSet {
    const result = new FieldSet();
    result.member = this.member && other.member;
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element);
      if (theirs === undefined) continue;
      const both = child.intersection(theirs);
      if (!both.empty()) result.children.set(element, both);
    }
    return result;
  }

  /** Whether the two sets have a member in common. */
  overlaps(other: FieldSet): boolean {
    if (this.member && other.member) return true;
    const [small, large] = this.children.size <= other.children.size ? [this, other] : [other, this];
    for (const [element, child] of small.children) {
      const theirs = large.children.get(element);
      if (theirs !== undefined && child.overlaps(theirs)) return true;
    }
    return false;
  }

  /** This set without the children `elements` of the node at `path` (the rest shared). */
  without(path: readonly string[], elements: readonly string[]): FieldSet {
    if (path.length === 0) {
      if (!elements.some((element) => this.children.has(element))) return this;
      const result = new FieldSet();
      result.member = this.member;
      for (const [element, child] of this.children)
        if (!elements.includes(element)) result.children.set(element, child);
      return result;
    }
    const child = this.children.get(path[0]!);
    if (child === undefined) return this;
    const rest = child.without(path.slice(1), elements);
    if (rest === child) return this;
    const result = new FieldSet();
    result.member = this.member;
    for (const [element, node] of this.children) {
      if (element !== path[0]) result.children.set(element, node);
      else if (!rest.empty()) result.children.set(element, rest);
    }
    return result;
  }

  /** This set with the node at `path` no longer a member itself (its children kept). */
  withoutMember(path: readonly string[]): FieldSet {
    if (path.length === 0) {
      if (!this.member) return this;
      const result = new FieldSet();
      for (const [element, child] of this.children) result.children.set(element, child);
      return result;
    }
    const child = this.children.get(path[0]!);
    if (child === undefined) return this;
    const rest = child.withoutMember(path.slice(1));
    if (rest === child) return this;
    const result = new FieldSet();
    result.member = this.member;
    for (const [element, node] of this.children) {
      if (element !== path[0]) result.children.set(element, node);
      else if (!rest.empty()) result.children.set(element, rest);
    }
    return result;
  }

  /** Drops nodes with no member below them. */
  compact(): this {
    for (const [element, child] of this.children) {
      child.compact();
      if (child.empty()) this.children.delete(element);
    }
    return this;
  }

  /**
   * Every member path, in structured-merge-diff's iteration order: at each
   * level the members first, then the paths below, each sorted as FieldsV1 sorts.
   */
  paths(): string[][] {
    const out: string[][] = [];
    const walk = (node: FieldSet, prefix: string[]) => {
      const elements = sortElements([...node.children.keys()]);
      for (const element of elements) if (node.children.get(element)!.member) out.push([...prefix, element]);
      for (const element of elements) walk(node.children.get(element)!, [...prefix, element]);
    };
    walk(this, []);
    return out;
  }

  /** The FieldsV1 JSON object: `"."` first, then the elements in upstream's order. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.member && this.children.size > 0) out["."] = {};
    for (const element of sortElements([...this.children.keys()])) {
      const child = this.children.get(element)!;
      if (child.empty()) continue;
      out[element] = child.toFieldsV1();
    }
    return out;
  }

  /** Reads a FieldsV1 object. Throws on a malformed element key; ignores unknown prefixes, as upstream does. */
  static fromFieldsV1(value: unknown): FieldSet {
    const set = new FieldSet();
    const read = (node: FieldSet, json: unknown) => {
      if (typeof json !== "object" || json === null || Array.isArray(json)) {
        throw new Error("FieldsV1 must be a JSON object");
      }
      const entries = Object.entries(json as Record<string, unknown>);
      if (entries.length === 0) node.member = true;
      for (const [element, child] of entries) {
        if (element === ".") {
          node.member = true;
          continue;
        }
        if (element[1] !== ":") throw new Error(`unexpected path element ${JSON.stringify(element)}`);
        if (!"fkvi".includes(element[0]!)) continue;
        const canonical = canonicalElement(element);
        read(node.child(canonical), child);
      }
    };
    read(set, value);
    return set;
  }
}

/** The element key of a struct field or map key. */
export function fieldElement(name: string): string {
  return `f:${name}`;
}

/** The element key of a keyed list item: `k:` and its key fields as compact JSON, sorted by name. */
export function keyElement(fields: Record<string, Scalar>): string {
  let out = "k:{";
  let first = true;
  for (const name of Object.keys(fields).sort()) {
    out += `${first ? "" : ","}${JSON.stringify(name)}:${JSON.stringify(fields[name])}`;
    first = false;
  }
  return `${out}}`;
}

/** The element key of a set item. */
export function valueElement(value: Scalar): string {
  return `v:${JSON.stringify(value)}`;
}

export function indexElement(index: number): string {
  return `i:${index}`;
}

export function parseElement(element: string): PathElement {
  const body = element.slice(2);
  switch (element[0]) {
    case "f":
      return { field: body };
    case "k": {
      const fields = JSON.parse(body) as Record<string, Scalar>;
      return { key: Object.keys(fields).map((name) => [name, fields[name]!] as const) };
    }
    case "v":
      return { value: JSON.parse(body) as Scalar };
    case "i":
      return { index: Number(body) };
    default:
      throw new Error(`unexpected path element ${JSON.stringify(element)}`);
  }
}

/**
 * A path as conflict messages print it (structured-merge-diff's `Path.String`):
 * `.spec.replicas`, `[name="nginx"]`, `[="a"]` for set values, `[3]` for indexes.
 */
export function pathString(path: readonly string[]): string {
  let out = "";
  for (const element of path) {
    const parsed = parseElement(element);
    if ("field" in parsed) out += `.${parsed.field}`;
    else if ("key" in parsed)
      out += `[${[...parsed.key]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
        .join(",")}]`;
    else if ("value" in parsed) out += `[=${JSON.stringify(parsed.value)}]`;
    else out += `[${parsed.index}]`;
  }
  return out;
}

/** Upstream's element order: fields by name, then keys, then values, then indexes. */
export function compareElements(a: string, b: string): number {
  if (a.charCodeAt(0) === fieldCode && b.charCodeAt(0) === fieldCode) return compareStrings(a, b);
  const byKind = elementRank(a) - elementRank(b);
  if (byKind !== 0) return byKind;
  if (a[0] === "f") return compareStrings(a, b);
  const pa = parseCached(a);
  const pb = parseCached(b);
  if ("index" in pa && "index" in pb) return pa.index - pb.index;
  if ("value" in pa && "value" in pb) return compareScalars(pa.value, pb.value);
  if ("key" in pa && "key" in pb) {
    // Key fields are spelled sorted by name (keyElement), so they compare in order.
    const ka = pa.key;
    const kb = pb.key;
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const byName = compareStrings(ka[i]![0], kb[i]![0]);
      if (byName !== 0) return byName;
      const byValue = compareScalars(ka[i]![1], kb[i]![1]);
      if (byValue !== 0) return byValue;
    }
    return ka.length - kb.length;
  }
  return 0;
}

const fieldCode = "f".charCodeAt(0);

/** Sorts elements in place in upstream's order. */
export function sortElements(elements: string[]): string[] {
  return sortFew(elements, compareElements);
}

/**
 * Sorts in place, stably: by insertion for the few items a node or list
 * usually has (several times quicker than the generic sort there), by the
 * generic sort past 16.
 */
export function sortFew<T>(items: T[], compare: (a: T, b: T) => number): T[] {
  if (items.length > 16) return items.sort(compare);
  for (let i = 1; i < items.length; i++) {
    const item = items[i]!;
    let j = i - 1;
    while (j >= 0 && compare(items[j]!, item) > 0) {
      items[j + 1] = items[j]!;
      j--;
    }
    items[j + 1] = item;
  }
  return items;
}

function elementRank(element: string): number {
  switch (element[0]) {
    case "f":
      return 0;
    case "k":
      return 1;
    case "v":
      return 2;
    default:
      return 3;
  }
}

/** Parsed `k:`/`v:` elements; the same few keys recur across a kind's objects. */
const parsedElements = new Map<string, PathElement>();

function parseCached(element: string): PathElement {
  let parsed = parsedElements.get(element);
  if (parsed === undefined) {
    if (parsedElements.size >= 10_000) parsedElements.clear();
    parsed = parseElement(element);
    parsedElements.set(element, parsed);
  }
  return parsed;
}

/** null < numbers < strings < booleans, then by value (structured-merge-diff's value order). */
export function compareScalars(a: Scalar, b: Scalar): number {
  const byType = scalarRank(a) - scalarRank(b);
  if (byType !== 0) return byType;
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  return 0;
}

function scalarRank(value: Scalar): number {
  return value === null ? 0 : typeof value === "number" ? 1 : typeof value === "string" ? 2 : 3;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Re-spells a decoded `k:` element with its key fields sorted, so equal keys meet in the trie. */
function canonicalElement(element: string): string {
  if (element[0] !== "k" || !element.includes(",")) return element;
  const parsed = parseElement(element) as { key: ReadonlyArray<readonly [string, Scalar]> };
  return keyElement(Object.fromEntries(parsed.key));
}
