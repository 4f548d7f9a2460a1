/**
 * A FIFO over a circular array that doubles when full: O(1) `push` and
 * `shift` (an `Array.shift()` on a long array is O(n)), and O(1) indexed
 * reads from the oldest item. Callers that need a bound enforce it.
 */
export class RingBuffer<T> {
  #items: (T | undefined)[];
  #head = 0;
  #length = 0;

  constructor(initialCapacity = 16) {
    this.#items = new Array(Math.max(1, initialCapacity));
  }

  get length(): number {
    return this.#length;
  }

  push(item: T): void {
    if (this.#length === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#length) % this.#items.length] = item;
    this.#length++;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#items.length;
    this.#length--;
    return item;
  }

  /** The item `index` places after the oldest (0 = oldest). */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.#length) return undefined;
    return this.#items[(this.#head + index) % this.#items.length];
  }

  clear(): void {
    this.#items = new Array(16);
    this.#head = 0;
    this.#length = 0;
  }

  #grow(): void {
    const grown = new Array<T | undefined>(this.#items.length * 2);
    for (let i = 0; i < this.#length; i++) grown[i] = this.#items[(this.#head + i) % this.#items.length];
    this.#items = grown;
    this.#head = 0;
  }
}
