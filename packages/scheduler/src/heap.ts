/** A binary min-heap over `less`, with removal by key (the queue's activeQ and backoffQ). */
export class Heap<T> {
  readonly #items: T[] = [];
  readonly #index = new Map<string, number>();
  readonly #keyOf: (item: T) => string;
  readonly #less: (a: T, b: T) => boolean;

  constructor(keyOf: (item: T) => string, less: (a: T, b: T) => boolean) {
    this.#keyOf = keyOf;
    this.#less = less;
  }

  get length(): number {
    return this.#items.length;
  }

  has(key: string): boolean {
    return this.#index.has(key);
  }

  get(key: string): T | undefined {
    const at = this.#index.get(key);
    return at === undefined ? undefined : this.#items[at];
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds the item, or replaces the item with the same key and restores the order. */
  push(item: T): void {
    const key = this.#keyOf(item);
    const at = this.#index.get(key);
    if (at !== undefined) {
      this.#items[at] = item;
      this.#fix(at);
      return;
    }
    this.#items.push(item);
    this.#index.set(key, this.#items.length - 1);
    this.#up(this.#items.length - 1);
  }

  pop(): T | undefined {
    if (this.#items.length === 0) return undefined;
    const top = this.#items[0]!;
    this.#removeAt(0);
    return top;
  }

  delete(key: string): T | undefined {
    const at = this.#index.get(key);
    if (at === undefined) return undefined;
    const item = this.#items[at]!;
    this.#removeAt(at);
    return item;
  }

  values(): readonly T[] {
    return this.#items;
  }

  #removeAt(at: number): void {
    const last = this.#items.length - 1;
    this.#index.delete(this.#keyOf(this.#items[at]!));
    if (at !== last) {
      this.#items[at] = this.#items[last]!;
      this.#index.set(this.#keyOf(this.#items[at]!), at);
    }
    this.#items.pop();
    if (at < this.#items.length) this.#fix(at);
  }

  #fix(at: number): void {
    if (!this.#up(at)) this.#down(at);
  }

  #up(at: number): boolean {
    let moved = false;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.#less(this.#items[at]!, this.#items[parent]!)) break;
      this.#swap(at, parent);
      at = parent;
      moved = true;
    }
    return moved;
  }

  #down(at: number): void {
    const n = this.#items.length;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= n) return;
      const right = left + 1;
      let smallest = left;
      if (right < n && this.#less(this.#items[right]!, this.#items[left]!)) smallest = right;
      if (!this.#less(this.#items[smallest]!, this.#items[at]!)) return;
      this.#swap(at, smallest);
      at = smallest;
    }
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    [items[a], items[b]] = [items[b]!, items[a]!];
    this.#index.set(this.#keyOf(items[a]!), a);
    this.#index.set(this.#keyOf(items[b]!), b);
  }
}
