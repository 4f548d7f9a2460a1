import { pickFree } from "./bitmap-pick.js";

// The node ports Services take, as kube-apiserver's service node port
// allocator (pkg/registry/core/service/portallocator): a resource of the
// registry that the Service kind's write hooks draw on.

/** kube-apiserver's default `--service-node-port-range`. */
export const defaultServiceNodePortRange = "30000-32767";

/**
 * Why a requested node port cannot be had, worded as upstream's allocator
 * errors (`ErrNotInRange`, `ErrAllocated`); the Service's write turns it into
 * a 422 on the port's `nodePort` field.
 */
export class NodePortUnavailable extends Error {}

/**
 * The node ports of one range (kube-apiserver's bitmap port allocator with
 * the static subrange): automatic picks prefer the ports above the bottom
 * band of min(max(16, size/32), 128) ports, so ports users choose from the
 * bottom rarely collide with allocated ones.
 */
export class NodePortAllocator {
  readonly range: string;
  readonly #base: number;
  readonly #size: number;
  readonly #offset: number;
  readonly #allocated = new Set<number>();
  readonly #random: () => number;

  constructor(range: string = defaultServiceNodePortRange, random: () => number = Math.random) {
    const match = /^(\d{1,5})(?:-(\d{1,5})|\+(\d{1,5}))?$/.exec(range.trim());
    const first = Number(match?.[1]);
    // "base-last" or "base+size", as upstream's `net.ParsePortRange`; one port alone is a range of one.
    const size = match?.[2] !== undefined ? Number(match[2]) - first + 1 : Number(match?.[3] ?? 0) + 1;
    if (match === null || first > 65535 || size < 1 || first + size - 1 > 65535)
      throw new Error(
        `service node port range ${JSON.stringify(range)} is not a port range such as 30000-32767`,
      );
    this.#base = first;
    this.#size = size;
    this.range = `${first}-${first + size - 1}`;
    this.#offset = size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128);
    this.#random = random;
  }

  /** How many ports are taken. */
  get used(): number {
    return this.#allocated.size;
  }

  /** Whether `port` is taken. */
  has(port: number): boolean {
    return this.#allocated.has(port - this.#base);
  }

  /** Marks a port taken without checks (recovery from storage at start). */
  restore(port: number): void {
    const index = port - this.#base;
    if (index >= 0 && index < this.#size) this.#allocated.add(index);
  }

  /** Takes `port`; a {@link NodePortUnavailable} names why it cannot be had. */
  allocate(port: number): void {
    const index = port - this.#base;
    if (!Number.isInteger(index) || index < 0 || index >= this.#size)
      throw new NodePortUnavailable(
        `provided port is not in the valid range. The range of valid ports is ${this.range}`,
      );
    if (this.#allocated.has(index)) throw new NodePortUnavailable("provided port is already allocated");
    this.#allocated.add(index);
  }

  /** A random free port, upper band first; undefined when the range is full. */
  allocateNext(): number | undefined {
    const index = pickFree(this.#allocated, this.#offset, this.#size, this.#random);
    if (index === undefined) return undefined;
    this.#allocated.add(index);
    return this.#base + index;
  }

  /** Gives a port back. */
  release(port: number): void {
    this.#allocated.delete(port - this.#base);
  }
}

/**
 * The node ports one write takes and gives back, as upstream's
 * `PortAllocationOperation`: ports are taken at once; releases wait for
 * `commit` (the write stored); `revert` gives back what was taken.
 */
export class NodePortOperation {
  readonly #allocator: NodePortAllocator;
  readonly #taken: number[] = [];
  readonly #toRelease: number[] = [];

  constructor(allocator: NodePortAllocator) {
    this.#allocator = allocator;
  }

  allocate(port: number): void {
    this.#allocator.allocate(port);
    this.#taken.push(port);
  }

  allocateNext(): number | undefined {
    const port = this.#allocator.allocateNext();
    if (port !== undefined) this.#taken.push(port);
    return port;
  }

  /** Releases `port` once the write is stored. */
  releaseDeferred(port: number): void {
    this.#toRelease.push(port);
  }

  commit(): void {
    for (const port of this.#toRelease) this.#allocator.release(port);
  }

  revert(): void {
    for (const port of this.#taken) this.#allocator.release(port);
  }
}
