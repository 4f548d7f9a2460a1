import { type DeepReadonly, nothing, type Pod } from "@reconcile/api";
import { type AffinityTerm, termMatches } from "./affinity-terms.js";

/** Counts per topology pair, read-only. */
export interface PairCounts {
  get(key: string, value: string): number;
  /** Pairs with a non-zero count. */
  readonly size: number;
}

/**
 * Matching pods per topology pair (key, then value). Two levels of maps keep
 * the lookups on the label strings themselves, whose hashes are cached.
 */
export class TopologyCounts implements PairCounts {
  readonly #byKey = new Map<string, Map<string, number>>();
  size = 0;

  get(key: string, value: string): number {
    return this.#byKey.get(key)?.get(value) ?? 0;
  }

  add(key: string, value: string, delta: number): void {
    let values = this.#byKey.get(key);
    if (values === undefined) this.#byKey.set(key, (values = new Map()));
    const before = values.get(value) ?? 0;
    const count = before + delta;
    // A count can fall to zero (preemption's RemovePod): the pair is then gone.
    if (count === 0) values.delete(value);
    else values.set(value, count);
    if (before === 0 && count !== 0) this.size++;
    else if (before !== 0 && count === 0) this.size--;
  }

  /** Every pair with its count. */
  *pairs(): IterableIterator<[string, string, number]> {
    for (const [key, values] of this.#byKey) for (const [value, count] of values) yield [key, value, count];
  }

  clone(): TopologyCounts {
    const copy = new TopologyCounts();
    for (const [key, values] of this.#byKey) copy.#byKey.set(key, new Map(values));
    copy.size = this.size;
    return copy;
  }
}

/**
 * The sum of several counts and a private delta: the existing pods'
 * anti-affinity counts a cycle reads from the cache's index, plus what
 * preemption's what-ifs add or take away, without touching the index.
 */
export class SummedCounts implements PairCounts {
  readonly #parts: readonly PairCounts[];
  #delta: TopologyCounts | undefined;

  constructor(parts: readonly PairCounts[], delta?: TopologyCounts) {
    this.#parts = parts;
    this.#delta = delta;
  }

  get(key: string, value: string): number {
    let total = this.#delta?.get(key, value) ?? 0;
    for (const part of this.#parts) total += part.get(key, value);
    return total;
  }

  get size(): number {
    if (this.#delta === undefined || this.#delta.size === 0) {
      let size = 0;
      for (const part of this.#parts) size += part.size;
      return size;
    }
    // With a delta, a pair may sum to zero: count the pairs that do not (preemption's rare path).
    const seen = new Set<string>();
    let size = 0;
    const visit = (key: string, value: string) => {
      const id = `${key}\u0000${value}`;
      if (seen.has(id)) return;
      seen.add(id);
      if (this.get(key, value) !== 0) size++;
    };
    for (const part of [...this.#parts, this.#delta]) {
      if (part instanceof TopologyCounts) for (const [key, value] of part.pairs()) visit(key, value);
    }
    return size;
  }

  add(key: string, value: string, delta: number): void {
    this.#delta ??= new TopologyCounts();
    this.#delta.add(key, value, delta);
  }

  clone(): SummedCounts {
    return new SummedCounts(this.#parts, this.#delta?.clone());
  }
}

interface IndexEntry {
  term: AffinityTerm;
  counts: TopologyCounts;
}

const termKeys = new WeakMap<AffinityTerm, string>();

/** One string per distinct term: what it selects and over which topology. */
function termKey(term: AffinityTerm): string {
  let key = termKeys.get(term);
  if (key === undefined) {
    const selector = (s: AffinityTerm["selector"]) => (s === nothing() ? "\u2205" : `{${s.toString()}}`);
    key = [
      [...term.namespaces].sort().join(","),
      selector(term.namespaceSelector),
      selector(term.selector),
      term.topologyKey,
    ].join("\u0000");
    termKeys.set(term, key);
  }
  return key;
}

/**
 * The required anti-affinity terms of the pods on live nodes, grouped by
 * distinct term, with per topology pair how many pods carry each. A cycle
 * then finds where an existing pod's anti-affinity selects the incoming pod
 * by testing each distinct term once, instead of every pod on every node.
 */
export class AntiAffinityIndex {
  readonly #entries = new Map<string, IndexEntry>();

  /** Adds (`delta` 1) or removes (−1) the terms of a pod on a node with these labels. */
  update(
    terms: readonly AffinityTerm[],
    labels: Readonly<Record<string, string>> | undefined,
    delta: number,
  ): void {
    for (const term of terms) {
      const value = labels?.[term.topologyKey];
      if (value === undefined) continue;
      const key = termKey(term);
      let entry = this.#entries.get(key);
      if (entry === undefined) this.#entries.set(key, (entry = { term, counts: new TopologyCounts() }));
      entry.counts.add(term.topologyKey, value, delta);
      if (entry.counts.size === 0) this.#entries.delete(key);
    }
  }

  /** The counts of the terms that select `pod`. */
  selecting(
    pod: DeepReadonly<Pod>,
    namespaceLabels: Readonly<Record<string, string>> | undefined,
  ): PairCounts[] {
    const matched: PairCounts[] = [];
    for (const { term, counts } of this.#entries.values()) {
      if (termMatches(term, pod, namespaceLabels)) matched.push(counts);
    }
    return matched;
  }
}

/** How many incoming pods' terms the cache keeps counts for (the least recently used go first). */
const maxIndexedTerms = 64;

/**
 * Per topology pair, how many pods on live nodes a term selects, for the
 * terms incoming pods have been asking about (a Deployment's replicas ask
 * the same). A term's counts are built by one scan when first asked for and
 * then kept up to date as pods come and go, so later cycles read them at
 * once instead of testing every pod.
 */
export class SelectedPodsIndex {
  readonly #entries = new Map<string, IndexEntry>();

  /** The counts for `term`; `scan` visits every pod on a live node with the node's labels, when they must be built. */
  counts(
    term: AffinityTerm,
    scan: (
      visit: (pod: DeepReadonly<Pod>, labels: Readonly<Record<string, string>> | undefined) => void,
    ) => void,
  ): PairCounts {
    const key = termKey(term);
    let entry = this.#entries.get(key);
    if (entry !== undefined) {
      // Most recently used last.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      return entry.counts;
    }
    entry = { term, counts: new TopologyCounts() };
    const built = entry;
    scan((pod, labels) => countPod(built, pod, labels, 1));
    this.#entries.set(key, entry);
    if (this.#entries.size > maxIndexedTerms) this.#entries.delete(this.#entries.keys().next().value!);
    return entry.counts;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** A pod placed on (1) or taken off (−1) a live node with these labels. */
  update(pod: DeepReadonly<Pod>, labels: Readonly<Record<string, string>> | undefined, delta: number): void {
    for (const entry of this.#entries.values()) countPod(entry, pod, labels, delta);
  }
}

function countPod(
  entry: IndexEntry,
  pod: DeepReadonly<Pod>,
  labels: Readonly<Record<string, string>> | undefined,
  delta: number,
): void {
  const value = labels?.[entry.term.topologyKey];
  if (value !== undefined && termMatches(entry.term, pod, undefined))
    entry.counts.add(entry.term.topologyKey, value, delta);
}
