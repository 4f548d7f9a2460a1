import { type DeepReadonly, labelsEqual, type Pod, type Selector } from "@reconcile/api";
import type { NodeInfo } from "./node-info.js";

/** How many selectors of one namespace the index keeps counts for (the least recently used go first). */
const maxSelectorsPerNamespace = 1024;

const noLabels: Readonly<Record<string, string>> = Object.freeze({});

/** Whether topology spreading counts `pod` for `selector`: it matches and is not terminating. */
export function countsForSpreading(pod: DeepReadonly<Pod>, selector: Selector): boolean {
  return !pod.metadata?.deletionTimestamp && selector.matches(pod.metadata?.labels ?? noLabels);
}

/** Whether every selector counts `a` and `b` alike for spreading (same labels, both terminating or neither). */
export function sameForSpreading(a: DeepReadonly<Pod>, b: DeepReadonly<Pod>): boolean {
  return (
    !a.metadata?.deletionTimestamp === !b.metadata?.deletionTimestamp &&
    (a.metadata?.namespace ?? "") === (b.metadata?.namespace ?? "") &&
    labelsEqual(a.metadata?.labels, b.metadata?.labels)
  );
}

interface Entry {
  readonly selector: Selector;
  /** The live nodes holding pods the selector counts, and how many each holds. */
  readonly perNode: Map<NodeInfo, number>;
}

/**
 * Per namespace and label selector, the live nodes holding pods of that
 * namespace the selector counts for topology spreading (matching, not
 * terminating), for the selectors incoming pods' spreading constraints have
 * been asking about: thousands of ReplicaSets scaling up at once ask in
 * turn. A selector's counts are built by one scan when first asked for and
 * then kept up to date as pods come and go, so scoring reads the few nodes
 * that hold such pods instead of counting on every node for every pod.
 */
export class SpreadCountsIndex {
  readonly #byNamespace = new Map<string, Map<string, Entry>>();
  #size = 0;

  /** How many selectors are indexed. */
  get size(): number {
    return this.#size;
  }

  /**
   * The counts for `selector` in `namespace` (`key` names the pair);
   * `scan` visits every pod of the namespace on a live node when they must
   * be built.
   */
  counts(
    namespace: string,
    key: string,
    selector: Selector,
    scan: (visit: (nodeInfo: NodeInfo, pod: DeepReadonly<Pod>) => void) => void,
  ): ReadonlyMap<NodeInfo, number> {
    let entries = this.#byNamespace.get(namespace);
    if (entries === undefined) this.#byNamespace.set(namespace, (entries = new Map()));
    let entry = entries.get(key);
    if (entry !== undefined) {
      // Most recently used last.
      entries.delete(key);
      entries.set(key, entry);
      return entry.perNode;
    }
    entry = { selector, perNode: new Map() };
    const built = entry;
    if (!selector.empty()) scan((nodeInfo, pod) => count(built, nodeInfo, pod, 1));
    entries.set(key, entry);
    this.#size++;
    if (entries.size > maxSelectorsPerNamespace) {
      entries.delete(entries.keys().next().value!);
      this.#size--;
    }
    return entry.perNode;
  }

  /** A pod placed on (1) or taken off (−1) a live node. */
  update(nodeInfo: NodeInfo, pod: DeepReadonly<Pod>, delta: number): void {
    const entries = this.#byNamespace.get(pod.metadata?.namespace ?? "");
    if (entries === undefined) return;
    for (const entry of entries.values()) count(entry, nodeInfo, pod, delta);
  }
}

function count(entry: Entry, nodeInfo: NodeInfo, pod: DeepReadonly<Pod>, delta: number): void {
  if (entry.selector.empty() || !countsForSpreading(pod, entry.selector)) return;
  const n = (entry.perNode.get(nodeInfo) ?? 0) + delta;
  if (n === 0) entry.perNode.delete(nodeInfo);
  else entry.perNode.set(nodeInfo, n);
}
