const initialCapacity = 16;
/** Capacity above which an emptied buffer is replaced by a small one, so a burst does not pin memory. */
const shrinkAbove = 4096;

/**
 * A first-in first-out ring buffer: O(1) push and shift (no `Array.shift()`,
 * which is O(n) on a long array), and a vacated slot is cleared at once so a
 * popped item can be garbage-collected.
 */
export class Fifo<T> {
  #slots: (T | undefined)[] = newSlots(initialCapacity);
  #mask = initialCapacity - 1;
  #head = 0;
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(item: T): void {
    if (this.#length > this.#mask) this.#grow();
    this.#slots[(this.#head + this.#length) & this.#mask] = item;
    this.#length++;
  }

  /** Removes and returns the oldest item. The caller checks `length` first. */
  shift(): T {
    const slots = this.#slots;
    const head = this.#head;
    const item = slots[head] as T;
    slots[head] = undefined;
    this.#head = (head + 1) & this.#mask;
    if (--this.#length === 0 && this.#mask >= shrinkAbove) this.clear();
    return item;
  }

  /** Removes every item. */
  clear(): void {
    this.#slots = newSlots(initialCapacity);
    this.#mask = initialCapacity - 1;
    this.#head = 0;
    this.#length = 0;
  }

  #grow(): void {
    const old = this.#slots;
    const capacity = old.length;
    const slots = newSlots<T>(capacity * 2);
    for (let i = 0; i < capacity; i++) slots[i] = old[(this.#head + i) & this.#mask];
    this.#slots = slots;
    this.#mask = capacity * 2 - 1;
    this.#head = 0;
  }
}

function newSlots<T>(capacity: number): (T | undefined)[] {
  // Filled, not holey, so element access stays on V8's fast path.
  return new Array<T | undefined>(capacity).fill(undefined);
}
