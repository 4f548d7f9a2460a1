import { createHash } from "node:crypto";
import { NodeFilesystem } from "../node-filesystem.js";
import type { ImageRecord, PulledImage } from "./runtime.js";
import { RuntimeError } from "./runtime.js";

// The simulated runtime's images and addresses: containerd's image names and
// digests, and host-local IPAM over the node's pod CIDR.

/** Pod addresses from a CIDR as host-local IPAM hands them out: .2 up, round robin, freed on release. */
export class IpPool {
  readonly #base: number;
  readonly #count: number;
  readonly #inUse = new Set<number>();
  #next = 2;

  constructor(cidr: string) {
    [this.#base, this.#count] = parseCIDR(cidr);
  }

  allocate(): string {
    // .0 is the network, .1 the gateway, the last the broadcast.
    const usable = this.#count - 3;
    for (let i = 0; i < usable; i++) {
      const offset = 2 + ((this.#next - 2 + i) % usable);
      if (!this.#inUse.has(offset)) {
        this.#inUse.add(offset);
        this.#next = offset + 1;
        return formatIPv4(this.#base + offset);
      }
    }
    throw new RuntimeError("StartError", "failed to allocate an IP: the node's pod CIDR is exhausted");
  }

  release(ip: string | undefined): void {
    if (ip !== undefined) this.#inUse.delete(parseIPv4(ip) - this.#base);
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

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function parseCIDR(cidr: string): [base: number, count: number] {
  const match = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
  const bits = match ? Number(match[2]) : Number.NaN;
  if (!match || !(bits >= 8 && bits <= 30))
    throw new TypeError(
      `SimulatedRuntime: podCIDR must be an IPv4 CIDR from /8 to /30, got ${JSON.stringify(cidr)}`,
    );
  const size = 2 ** (32 - bits);
  const base = parseIPv4(match[1] as string);
  return [base - (base % size), size];
}

function parseIPv4(ip: string): number {
  return ip.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
}

function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/** A container's own files at start: the directories of a small Linux image, and its hostname. */
export function imageLayer(hostname: string): NodeFilesystem {
  const layer = new NodeFilesystem();
  for (const dir of ["/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr", "/var"])
    layer.mkdir(dir);
  layer.writeFile("/etc/hostname", `${hostname}\n`);
  return layer;
}
