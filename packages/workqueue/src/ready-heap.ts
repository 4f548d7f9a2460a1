/** The ready time of one waiting item. A heap node whose time differs from it is stale. */
interface WaitingEntry<T> {
  readonly item: T;
  readyAt: number;
}

const initialCapacity = 64;

/**
 * The waiting items of a delaying queue: a binary min-heap ordered by ready
 * time (ties first-in first-out), with one live entry per item (client-go's
 * `waitForPriorityQueue` plus its `knownEntries` map).
 *
 * Ready times and insertion numbers live in typed arrays beside the entries,
 * so sifting compares adjacent numbers instead of chasing an object per
 * level. Moving an item to an earlier time pushes a new node and leaves the
 * old one stale (its time no longer matches the entry); stale nodes are
 * dropped when they reach the top. Nodes never need their position tracked.
 */
export class ReadyHeap<T> {
  #times = new Float64Array(initialCapacity);
  #seqs = new Float64Array(initialCapacity);
  #entries: (WaitingEntry<T> | undefined)[] = new Array(initialCapacity).fill(undefined);
  #length = 0;
  #nextSeq = 0;
  readonly #byItem = new Map<T, WaitingEntry<T>>();

  /** Number of items waiting. */
  get size(): number {
    return this.#byItem.size;
  }

  /**
   * Makes `item` wait until `readyAt`. An item already waiting keeps the
   * earlier of its two ready times, as client-go's delaying queue does.
   */
  insert(item: T, readyAt: number): void {
    const known = this.#byItem.get(item);
    if (known === undefined) {
      const entry: WaitingEntry<T> = { item, readyAt };
      this.#byItem.set(item, entry);
      this.#push(entry, readyAt);
    } else if (readyAt < known.readyAt) {
      known.readyAt = readyAt;
      this.#push(known, readyAt);
    }
  }

  /** The earliest ready time of a waiting item, or undefined when none waits. */
  nextReadyAt(): number | undefined {
    while (this.#length > 0) {
      const head = this.#entries[0]!;
      const time = this.#times[0]!;
      // A stale node's time is later than its entry's: entries only move earlier, and a popped
      // entry is never reused (the item gets a new one if it waits again).
      if (head.readyAt === time) return time;
      this.#removeHead();
    }
    return undefined;
  }

  /** Removes and returns the item that is ready first. Call {@link nextReadyAt} first: it must have returned a time. */
  pop(): T {
    const { item } = this.#entries[0]!;
    this.#byItem.delete(item);
    this.#removeHead();
    return item;
  }

  clear(): void {
    this.#entries.fill(undefined, 0, this.#length);
    this.#length = 0;
    this.#byItem.clear();
  }

  #push(entry: WaitingEntry<T>, time: number): void {
    if (this.#length === this.#times.length) this.#grow();
    const seq = this.#nextSeq++;
    const times = this.#times;
    const seqs = this.#seqs;
    const entries = this.#entries;
    let index = this.#length++;
    while (index > 0) {
      const parent = (index - 1) >> 1;
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

  /** Replaces the head by the last node and sifts it down. */
  #removeHead(): void {
    const length = --this.#length;
    const times = this.#times;
    const seqs = this.#seqs;
    const entries = this.#entries;
    const time = times[length]!;
    const seq = seqs[length]!;
    const entry = entries[length];
    entries[length] = undefined;
    if (length === 0) return;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      let childTime = times[child]!;
      const right = child + 1;
      if (right < length) {
        const rightTime = times[right]!;
        if (rightTime < childTime || (rightTime === childTime && seqs[right]! < seqs[child]!)) {
          child = right;
          childTime = rightTime;
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
  }

  #grow(): void {
    const capacity = this.#times.length * 2;
    const times = new Float64Array(capacity);
    times.set(this.#times);
    this.#times = times;
    const seqs = new Float64Array(capacity);
    seqs.set(this.#seqs);
    this.#seqs = seqs;
    const entries = new Array<WaitingEntry<T> | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.#length; i++) entries[i] = this.#entries[i];
    this.#entries = entries;
  }
}
