/**
 * An unbounded FIFO on a power-of-two circular array: O(1) push and shift,
 * growing by doubling (client-go's `buffer.RingGrowing`). A plain array with
 * `shift()` would copy the whole backlog on every take.
 */
export class RingBuffer<T> {
  #items: (T | undefined)[];
  #head = 0;
  #length = 0;

  constructor(initialCapacity = 16) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.#items = new Array(capacity);
  }

  get length(): number {
    return this.#length;
  }

  push(item: T): void {
    if (this.#length === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#length) & (this.#items.length - 1)] = item;
    this.#length++;
  }

  /** Removes and returns the oldest item; undefined when empty. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#items.length - 1);
    this.#length--;
    return item;
  }

  /** The oldest item without removing it. */
  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#items[this.#head];
  }

  clear(): void {
    this.#items = new Array(16);
    this.#head = 0;
    this.#length = 0;
  }

  /** Items oldest first. */
  *[Symbol.iterator](): IterableIterator<T> {
    const mask = this.#items.length - 1;
    for (let i = 0; i < this.#length; i++) yield this.#items[(this.#head + i) & mask] as T;
  }

  #grow(): void {
    const old = this.#items;
    const mask = old.length - 1;
    const items: (T | undefined)[] = new Array(old.length * 2);
    for (let i = 0; i < this.#length; i++) items[i] = old[(this.#head + i) & mask];
    this.#items = items;
    this.#head = 0;
  }
}
