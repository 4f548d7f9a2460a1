const initialCapacity = 64;

/**
 * A min-heap of entries ordered by time, ties first-in first-out: the
 * delaying queue's waiting items (client-go's `waitForPriorityQueue`).
 *
 * Times and insertion numbers live in typed arrays beside the entries, so
 * sifting compares adjacent numbers instead of chasing an object per level,
 * and no entry's position is tracked. Each node has four children, which
 * halves the depth of a binary heap: popping, the common operation when many
 * items fall due at once, moves half as many nodes for a few more comparisons
 * among children that share a cache line. The delaying queue moves an item to an
 * earlier time by pushing it again; it recognises the node left behind as
 * stale when it reaches the top.
 */
export class ReadyHeap<E> {
  #times = new Float64Array(initialCapacity);
  #seqs = new Float64Array(initialCapacity);
  #entries: (E | undefined)[] = new Array(initialCapacity).fill(undefined);
  #length = 0;
  #nextSeq = 0;

  /** Number of nodes, stale ones included. */
  get length(): number {
    return this.#length;
  }

  /** The entry with the earliest time. The caller checks `length` first. */
  peek(): E {
    return this.#entries[0]!;
  }

  /** The earliest time. The caller checks `length` first. */
  peekTime(): number {
    return this.#times[0]!;
  }

  push(entry: E, time: number): void {
    if (this.#length === this.#times.length) this.#grow();
    const seq = this.#nextSeq++;
    const times = this.#times;
    const seqs = this.#seqs;
    const entries = this.#entries;
    let index = this.#length++;
    while (index > 0) {
      const parent = (index - 1) >> 2;
      const parentTime = times[parent]!;
      if (parentTime < time || (parentTime === time && seqs[parent]! < seq)) break;
      times[index] = parentTime;
      seqs[index] = seqs[parent]!;
      entries[index] = entries[parent];
      index = parent;
    }
    times[index] = time;
    seqs[index] = seq;
    entries[index] = entry;
  }

  /** Removes and returns the entry with the earliest time. The caller checks `length` first. */
  pop(): E {
    const top = this.#entries[0]!;
    const length = --this.#length;
    const times = this.#times;
    const seqs = this.#seqs;
    const entries = this.#entries;
    const time = times[length]!;
    const seq = seqs[length]!;
    const entry = entries[length];
    // Cleared at once, so a popped entry is not kept reachable.
    entries[length] = undefined;
    if (length === 0) return top;
    let index = 0;
    for (;;) {
      // The earliest of up to four children, which sit side by side in the arrays.
      const first = 4 * index + 1;
      if (first >= length) break;
      let child = first;
      let childTime = times[first]!;
      const last = first + 3 < length ? first + 3 : length - 1;
      for (let sibling = first + 1; sibling <= last; sibling++) {
        const siblingTime = times[sibling]!;
        if (siblingTime < childTime || (siblingTime === childTime && seqs[sibling]! < seqs[child]!)) {
          child = sibling;
          childTime = siblingTime;
        }
      }
      if (time < childTime || (time === childTime && seq < seqs[child]!)) break;
      times[index] = childTime;
      seqs[index] = seqs[child]!;
      entries[index] = entries[child];
      index = child;
    }
    times[index] = time;
    seqs[index] = seq;
    entries[index] = entry;
    return top;
  }

  /** Removes every node, passing each entry to `visit`. */
  clear(visit: (entry: E) => void): void {
    const entries = this.#entries;
    const length = this.#length;
    this.#length = 0;
    for (let i = 0; i < length; i++) {
      const entry = entries[i]!;
      entries[i] = undefined;
      visit(entry);
    }
  }

  #grow(): void {
    const capacity = this.#times.length * 2;
    const times = new Float64Array(capacity);
    times.set(this.#times);
    this.#times = times;
    const seqs = new Float64Array(capacity);
    seqs.set(this.#seqs);
    this.#seqs = seqs;
    const entries = new Array<E | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.#length; i++) entries[i] = this.#entries[i];
    this.#entries = entries;
  }
}
