import { formatIPAddress, type IPFamily, newInternalError, newInvalid, parseIPAddress } from "@reconcile/api";
import { pickFree } from "./bitmap-pick.js";
import { FieldErrors } from "./field-errors.js";
import { goStrings } from "./go-syntax.js";

// The cluster IPs Services take, as kube-apiserver's service IP allocators
// (pkg/registry/core/service/ipallocator, one per family of
// `--service-cluster-ip-range`): a resource of the registry that the Service
// kind's write hooks draw on.

/** kubeadm's `--service-cluster-ip-range`, the one most clusters run with. */
export const defaultServiceCIDR = "10.96.0.0/12";

/** kube-apiserver's largest service range: at most 20 bits of addresses (a /12 or a /108). */
const maxRangeBits = 20;
/** An IPv6 range's bitmap is capped at this many addresses, as upstream caps it. */
const maxIPv6Addresses = 65_536;

/**
 * The cluster IPs of a cluster's service ranges: one range, or two of
 * different families for a dual-stack cluster (`"10.96.0.0/12,fd00:10:96::/108"`),
 * the first being the primary family. Each range is a bitmap allocator: the
 * network address (and an IPv4 broadcast address) is never handed out, the
 * first usable address of the primary range is `default/kubernetes`'s, and
 * automatic picks prefer the upper band above upstream's static offset
 * (min(max(16, size/16), 256) addresses), so IPs users choose from the bottom
 * rarely collide.
 */
export class ClusterIPAllocator {
  /** The ranges as given. */
  readonly cidr: string;
  /** The families served, the primary first. */
  readonly families: readonly IPFamily[];
  readonly #ranges: readonly IPRange[];

  constructor(cidrs: string = defaultServiceCIDR, random: () => number = Math.random) {
    const texts = cidrs.split(",").map((text) => text.trim());
    if (texts.length > 2)
      throw new Error(`service CIDRs ${JSON.stringify(cidrs)}: at most two ranges (one per IP family)`);
    const ranges = texts.map((text) => new IPRange(text, random));
    if (ranges.length === 2 && ranges[0]!.family === ranges[1]!.family)
      throw new Error(
        `service CIDRs ${JSON.stringify(cidrs)}: the two ranges must be of different IP families`,
      );
    this.cidr = cidrs;
    this.#ranges = ranges;
    this.families = ranges.map((range) => range.family);
  }

  /** The first usable address of the primary range: `default/kubernetes`'s. */
  get first(): string {
    return this.#ranges[0]!.first;
  }

  /** How many addresses are taken, over every range. */
  get used(): number {
    let used = 0;
    for (const range of this.#ranges) used += range.used;
    return used;
  }

  /** Marks an address taken without checks (recovery from storage at start). */
  restore(ip: string): void {
    const address = parseIPAddress(ip);
    if (address === undefined) return;
    this.#rangeOf(address.family)?.take(address.value);
  }

  /**
   * Takes `requested` (422 if outside its family's range or already taken,
   * with upstream's messages) or, with none, a random free address of
   * `family` (the primary family unless named). The family must be served.
   * A 422 shows `clusterIPs`, the Service's list as allocation sees it.
   */
  allocate(
    service: string,
    requested?: string,
    family: IPFamily = this.families[0]!,
    clusterIPs: readonly string[] = requested === undefined ? [] : [requested],
  ): string {
    if (requested !== undefined) {
      const address = parseIPAddress(requested);
      const range = address === undefined ? undefined : this.#rangeOf(address.family);
      const primary = this.#ranges[0]!;
      if (address === undefined || range === undefined || !range.contains(address.value))
        throw invalid(
          service,
          clusterIPs,
          `failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${(range ?? primary).cidr}`,
        );
      if (!range.take(address.value))
        throw invalid(
          service,
          clusterIPs,
          `failed to allocate IP ${requested}: provided IP is already allocated`,
        );
      return requested;
    }
    const range = this.#rangeOf(family);
    if (range === undefined)
      throw newInternalError(`failed to allocate a serviceIP: ${family} is not configured`);
    const ip = range.next();
    if (ip === undefined) throw newInternalError("failed to allocate a serviceIP: range is full");
    return ip;
  }

  /** Gives an address back (a Service deleted, or a create that failed). */
  release(ip: string): void {
    const address = parseIPAddress(ip);
    if (address === undefined) return;
    this.#rangeOf(address.family)?.release(address.value);
  }

  #rangeOf(family: IPFamily): IPRange | undefined {
    for (const range of this.#ranges) if (range.family === family) return range;
    return undefined;
  }
}

/** One family's range: a bitmap of the usable addresses above the network address. */
class IPRange {
  readonly cidr: string;
  readonly family: IPFamily;
  /** The first usable address (the network address plus one). */
  readonly #base: bigint;
  readonly #size: number;
  readonly #offset: number;
  readonly #allocated = new Set<number>();
  readonly #random: () => number;

  constructor(cidr: string, random: () => number) {
    const [addressText, bitsText = ""] = cidr.split("/");
    const network = parseIPAddress(addressText ?? "");
    const bits = Number(bitsText);
    const width = network?.family === "IPv6" ? 128 : 32;
    if (network === undefined || bitsText === "" || !Number.isInteger(bits) || bits < 0 || bits > width)
      throw new Error(`service CIDR ${JSON.stringify(cidr)} is not a CIDR`);
    if (width - bits > maxRangeBits)
      throw new Error(
        `service CIDR ${JSON.stringify(cidr)} is too large; for ${width}-bit addresses, the mask must be >= ${width - maxRangeBits}`,
      );
    const total = 2 ** (width - bits);
    const hostBits = BigInt(width - bits);
    this.cidr = cidr;
    this.family = network.family;
    this.#base = ((network.value >> hostBits) << hostBits) + 1n;
    // The network address is never handed out; nor is IPv4's broadcast address.
    const usable = network.family === "IPv6" ? Math.min(total, maxIPv6Addresses) - 1 : total - 2;
    this.#size = Math.max(0, usable);
    this.#offset = total <= 16 ? 0 : Math.min(Math.max(16, Math.floor(total / 16)), 256);
    this.#random = random;
  }

  get first(): string {
    return formatIPAddress(this.family, this.#base);
  }

  get used(): number {
    return this.#allocated.size;
  }

  contains(address: bigint): boolean {
    return this.#indexOf(address) !== undefined;
  }

  /** Marks the address taken; false if it already was or is outside the range. */
  take(address: bigint): boolean {
    const index = this.#indexOf(address);
    if (index === undefined || this.#allocated.has(index)) return false;
    this.#allocated.add(index);
    return true;
  }

  /** A random free address, taken. */
  next(): string | undefined {
    const index = pickFree(this.#allocated, Math.min(this.#offset, this.#size), this.#size, this.#random);
    if (index === undefined) return undefined;
    this.#allocated.add(index);
    return formatIPAddress(this.family, this.#base + BigInt(index));
  }

  release(address: bigint): void {
    const index = this.#indexOf(address);
    if (index !== undefined) this.#allocated.delete(index);
  }

  /** The address's index among the usable ones, undefined outside the range. */
  #indexOf(address: bigint): number | undefined {
    const offset = address - this.#base;
    return offset >= 0n && offset < BigInt(this.#size) ? Number(offset) : undefined;
  }
}

/** Upstream's allocation error: `spec.clusterIPs` with the Service's list as the value. */
function invalid(name: string, clusterIPs: readonly string[], detail: string) {
  const errors = new FieldErrors();
  errors.invalid("spec.clusterIPs", goStrings(clusterIPs), detail);
  return newInvalid({ group: "", kind: "Service" }, name, errors.list);
}
