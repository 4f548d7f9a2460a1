/** An item waiting in a delaying queue until `readyAt`. */
export interface WaitingEntry<T> {
  readonly item: T;
  readyAt: number;
  /** Insertion order, so entries with equal ready times come out first-in first-out. */
  seq: number;
  /** Position in the heap array. */
  index: number;
}

/**
 * A binary min-heap of waiting items ordered by ready time, with one entry per
 * item (client-go's `waitForPriorityQueue` plus its `knownEntries` map).
 */
export class ReadyHeap<T> {
  readonly #entries: WaitingEntry<T>[] = [];
  readonly #byItem = new Map<T, WaitingEntry<T>>();
  #seq = 0;

  get size(): number {
    return this.#entries.length;
  }

  /** The entry that is ready first, if any. */
  peek(): WaitingEntry<T> | undefined {
    return this.#entries[0];
  }

  /**
   * Adds `item` to wait until `readyAt`. An item already waiting keeps the
   * earlier of its two ready times, as client-go's delaying queue does.
   */
  insert(item: T, readyAt: number): void {
    const known = this.#byItem.get(item);
    if (known !== undefined) {
      if (readyAt < known.readyAt) {
        known.readyAt = readyAt;
        this.#siftUp(known.index);
      }
      return;
    }
    const entries = this.#entries;
    const entry: WaitingEntry<T> = { item, readyAt, seq: this.#seq++, index: entries.length };
    entries.push(entry);
    this.#byItem.set(item, entry);
    this.#siftUp(entry.index);
  }

  /** Removes and returns the entry that is ready first. The caller checks `size` first. */
  pop(): WaitingEntry<T> {
    const entries = this.#entries;
    const top = entries[0]!;
    const last = entries.pop()!;
    if (last !== top) {
      entries[0] = last;
      last.index = 0;
      this.#siftDown(0);
    }
    this.#byItem.delete(top.item);
    return top;
  }

  clear(): void {
    this.#entries.length = 0;
    this.#byItem.clear();
  }

  #siftUp(index: number): void {
    const entries = this.#entries;
    const entry = entries[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = entries[parentIndex]!;
      if (!before(entry, parent)) break;
      entries[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    entries[index] = entry;
    entry.index = index;
  }

  #siftDown(index: number): void {
    const entries = this.#entries;
    const length = entries.length;
    const entry = entries[index]!;
    for (;;) {
      let childIndex = 2 * index + 1;
      if (childIndex >= length) break;
      let child = entries[childIndex]!;
      const rightIndex = childIndex + 1;
      if (rightIndex < length) {
        const right = entries[rightIndex]!;
        if (before(right, child)) {
          childIndex = rightIndex;
          child = right;
        }
      }
      if (!before(child, entry)) break;
      entries[index] = child;
      child.index = index;
      index = childIndex;
    }
    entries[index] = entry;
    entry.index = index;
  }
}

function before<T>(a: WaitingEntry<T>, b: WaitingEntry<T>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}
