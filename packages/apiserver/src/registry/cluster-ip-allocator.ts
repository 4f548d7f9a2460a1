import { newInternalError, newInvalid } from "@reconcile/api";
import { pickFree } from "./bitmap-pick.js";
import { FieldErrors } from "./field-errors.js";

// The cluster IPs Services take, as kube-apiserver's service IP allocator
// (pkg/registry/core/service/ipallocator): a resource of the registry that
// the Service kind's write hooks draw on.

/** kubeadm's `--service-cluster-ip-range`, the one most clusters run with. */
export const defaultServiceCIDR = "10.96.0.0/12";

/**
 * Cluster IPs of one IPv4 service CIDR (kube-apiserver's bitmap allocator):
 * the network and broadcast addresses are never handed out, the first usable
 * address is `default/kubernetes`'s, and automatic picks prefer the upper
 * band above upstream's static offset (min(max(16, size/16), 256) addresses),
 * so IPs users choose from the bottom rarely collide.
 */
export class ClusterIPAllocator {
  readonly cidr: string;
  readonly #base: number;
  readonly #size: number;
  readonly #offset: number;
  readonly #allocated = new Set<number>();
  readonly #random: () => number;

  constructor(cidr: string = defaultServiceCIDR, random: () => number = Math.random) {
    const [address, bitsText] = cidr.split("/");
    const network = parseIPv4(address ?? "");
    const bits = Number(bitsText);
    if (network === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32 || bitsText === "")
      throw new Error(`service CIDR ${JSON.stringify(cidr)} is not an IPv4 CIDR`);
    const total = 2 ** (32 - bits);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    this.cidr = cidr;
    this.#base = (network & mask) >>> 0;
    // Network and broadcast addresses are not allocatable.
    this.#size = Math.max(0, total - 2);
    this.#offset = this.#size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(this.#size / 16)), 256);
    this.#random = random;
  }

  /** The first usable address: `default/kubernetes`'s. */
  get first(): string {
    return formatIPv4(this.#base + 1);
  }

  /** How many addresses are taken. */
  get used(): number {
    return this.#allocated.size;
  }

  /** Marks an address taken without checks (recovery from storage at start). */
  restore(ip: string): void {
    const index = this.#indexOf(ip);
    if (index !== undefined) this.#allocated.add(index);
  }

  /**
   * Takes `requested` (422 if outside the range or already taken, with
   * upstream's messages) or, with none, a random free address.
   */
  allocate(service: string, requested?: string): string {
    if (requested !== undefined) {
      const index = this.#indexOf(requested);
      if (index === undefined)
        throw invalid(
          service,
          requested,
          `failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${this.cidr}`,
        );
      if (this.#allocated.has(index))
        throw invalid(
          service,
          requested,
          `failed to allocate IP ${requested}: provided IP is already allocated`,
        );
      this.#allocated.add(index);
      return requested;
    }
    const index = pickFree(this.#allocated, this.#offset, this.#size, this.#random);
    if (index === undefined) throw newInternalError("failed to allocate a serviceIP: range is full");
    this.#allocated.add(index);
    return formatIPv4(this.#base + 1 + index);
  }

  /** Gives an address back (a Service deleted, or a create that failed). */
  release(ip: string): void {
    const index = this.#indexOf(ip);
    if (index !== undefined) this.#allocated.delete(index);
  }

  /** The address's index among the usable ones, undefined outside the range. */
  #indexOf(ip: string): number | undefined {
    const address = parseIPv4(ip);
    if (address === undefined) return undefined;
    const index = address - this.#base - 1;
    return index >= 0 && index < this.#size ? index : undefined;
  }
}

/** Upstream's allocation error: `spec.clusterIPs` with the requested list as the value. */
function invalid(name: string, ip: string, detail: string) {
  const errors = new FieldErrors();
  errors.invalid("spec.clusterIPs", [ip], detail);
  return newInvalid({ group: "", kind: "Service" }, name, errors.list);
}

function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}
