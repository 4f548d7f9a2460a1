import { createHash } from "node:crypto";
import { formatIPAddress, type IPFamily, parseIPAddress } from "@reconcile/api";
import { NodeFilesystem } from "../node-filesystem.js";
import type { ImageRecord, PulledImage } from "./runtime.js";
import { RuntimeError } from "./runtime.js";

// The simulated runtime's images and addresses: containerd's image names and
// digests, and host-local IPAM over the node's pod CIDRs.

/**
 * A node's pod addresses: one pool per pod CIDR (comma-separated, the primary
 * first; two of different families on a dual-stack node).
 */
export class PodIPs {
  readonly #pools: IpPool[];

  constructor(cidrs: string) {
    this.#pools = cidrs.split(",").map((cidr) => new IpPool(cidr.trim()));
  }

  /** An address from each pool, the primary first; none if one pool is full (what was taken goes back). */
  allocate(): string[] {
    const taken: string[] = [];
    try {
      for (const pool of this.#pools) taken.push(pool.allocate());
    } catch (error) {
      this.release(taken);
      throw error;
    }
    return taken;
  }

  /** Gives back a pod's addresses, one per pool in order. */
  release(ips: readonly (string | undefined)[]): void {
    for (const [i, ip] of ips.entries()) this.#pools[i]?.release(ip);
  }
}

/**
 * Pod addresses from a CIDR (IPv4 or IPv6) as host-local IPAM hands them
 * out: the network address plus 2 up, round robin, freed on release (an
 * IPv6 range is used up to its first 65,536 addresses).
 */
export class IpPool {
  readonly #family: IPFamily;
  readonly #base: bigint;
  readonly #count: number;
  readonly #inUse = new Set<number>();
  #next = 2;

  constructor(cidr: string) {
    [this.#family, this.#base, this.#count] = parseCIDR(cidr);
  }

  allocate(): string {
    // The network address and the gateway (+1) are not handed out, nor IPv4's broadcast address.
    const usable = this.#count - (this.#family === "IPv4" ? 3 : 2);
    for (let i = 0; i < usable; i++) {
      const offset = 2 + ((this.#next - 2 + i) % usable);
      if (!this.#inUse.has(offset)) {
        this.#inUse.add(offset);
        this.#next = offset + 1;
        return formatIPAddress(this.#family, this.#base + BigInt(offset));
      }
    }
    throw new RuntimeError("StartError", "failed to allocate an IP: the node's pod CIDR is exhausted");
  }

  release(ip: string | undefined): void {
    const address = ip === undefined ? undefined : parseIPAddress(ip);
    if (address !== undefined && address.family === this.#family)
      this.#inUse.delete(Number(address.value - this.#base));
  }
}

/** `nginx` → `docker.io/library/nginx:latest`, as containerd names images. */
export function normaliseImage(image: string): string {
  let name = image;
  const firstSlash = name.indexOf("/");
  const first = firstSlash === -1 ? "" : name.slice(0, firstSlash);
  if (firstSlash === -1) name = `docker.io/library/${name}`;
  else if (!first.includes(".") && !first.includes(":") && first !== "localhost") name = `docker.io/${name}`;
  const lastSlash = name.lastIndexOf("/");
  if (!name.includes("@") && !name.slice(lastSlash).includes(":")) name = `${name}:latest`;
  return name;
}

export function repositoryOf(name: string): string {
  const at = name.indexOf("@");
  if (at !== -1) return name.slice(0, at);
  const lastSlash = name.lastIndexOf("/");
  const colon = name.indexOf(":", lastSlash);
  return colon === -1 ? name : name.slice(0, colon);
}

export function pulled(image: ImageRecord): PulledImage {
  return { imageRef: image.repoDigests[0] ?? image.id, size: image.size };
}

/** The record of a pulled image: ids and digests derived from its name, and a stable, plausible size of 5–100 MB. */
export function imageRecord(name: string): ImageRecord {
  const digest = sha256Hex(name);
  return {
    id: `sha256:${sha256Hex(`config:${name}`)}`,
    repoTags: [name],
    repoDigests: [`${repositoryOf(name)}@sha256:${digest}`],
    size: 5_000_000 + (Number.parseInt(digest.slice(0, 8), 16) % 95_000_000),
  };
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function parseCIDR(cidr: string): [family: IPFamily, base: bigint, count: number] {
  const [text = "", bitsText = ""] = cidr.split("/");
  const address = parseIPAddress(text);
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  if (address?.family === "IPv6") {
    if (!(bits >= 64 && bits <= 126))
      throw new TypeError(
        `SimulatedRuntime: an IPv6 podCIDR must be from /64 to /126, got ${JSON.stringify(cidr)}`,
      );
    const hostBits = BigInt(128 - bits);
    return ["IPv6", (address.value >> hostBits) << hostBits, Math.min(2 ** (128 - bits), 65_536)];
  }
  if (address === undefined || !(bits >= 8 && bits <= 30))
    throw new TypeError(
      `SimulatedRuntime: podCIDR must be an IPv4 CIDR from /8 to /30, got ${JSON.stringify(cidr)}`,
    );
  const size = 2 ** (32 - bits);
  return ["IPv4", address.value - (address.value % BigInt(size)), size];
}

/** A container's own files at start: the directories of a small Linux image, and its hostname. */
export function imageLayer(hostname: string): NodeFilesystem {
  const layer = new NodeFilesystem();
  for (const dir of ["/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr", "/var"])
    layer.mkdir(dir);
  layer.writeFile("/etc/hostname", `${hostname}\n`);
  return layer;
}
