import type { Environment } from "@marcbachmann/cel-js";
import { formatIPAddress, parseIPAddress } from "@reconcile/api";

/**
 * Kubernetes' IP and CIDR CEL libraries (k8s.io/apiserver/pkg/cel/library ip.go, cidr.go): `ip(s)`, `isIP`,
 * `ip.isCanonical`, `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`,
 * `isGlobalUnicast`; `cidr(s)`, `isCIDR`, `containsIP`, `containsCIDR`, `ip()`, `masked`, `prefixLength`; and
 * `string()` of either. Parsing is Go's netip: no leading zeros in IPv4 octets, and, as upstream adds, no
 * zones and no IPv4-mapped IPv6 addresses.
 */
export function registerNetworkLibraries(env: Environment): void {
  env.registerType("net.IP", IPAddress);
  env.registerType("net.CIDR", CIDRPrefix);
  env.registerType("kubernetes.IPLibrary", IPLibrary);
  env.registerConstant("ip", "kubernetes.IPLibrary", new IPLibrary());
  env.registerFunction("ip(string): net.IP", (text: string) => orThrow(parseIP(text)));
  env.registerFunction("isIP(string): bool", (text: string) => !(parseIP(text) instanceof Error));
  env.registerFunction("kubernetes.IPLibrary.isCanonical(string): bool", (_l: IPLibrary, text: string) => {
    const address = orThrow(parseIP(text));
    return address.toString() === text;
  });
  env.registerFunction("net.IP.family(): int", (a: IPAddress) => BigInt(a.family));
  env.registerFunction("net.IP.isUnspecified(): bool", (a: IPAddress) => a.value === 0n);
  env.registerFunction("net.IP.isLoopback(): bool", (a: IPAddress) => isLoopback(a));
  env.registerFunction("net.IP.isLinkLocalMulticast(): bool", (a: IPAddress) =>
    a.family === 4 ? a.value >> 8n === 0xe00000n : a.value >> 112n === 0xff02n,
  );
  env.registerFunction("net.IP.isLinkLocalUnicast(): bool", (a: IPAddress) => isLinkLocalUnicast(a));
  env.registerFunction("net.IP.isGlobalUnicast(): bool", (a: IPAddress) => {
    if (a.family === 4 && a.value === 0xffffffffn) return false;
    const multicast = a.family === 4 ? a.value >> 28n === 0xen : a.value >> 120n === 0xffn;
    return a.value !== 0n && !isLoopback(a) && !multicast && !isLinkLocalUnicast(a);
  });
  env.registerFunction("string(net.IP): string", (a: IPAddress) => a.toString());
  env.registerOperator(
    "net.IP == net.IP",
    (a: IPAddress, b: IPAddress) => a.family === b.family && a.value === b.value,
  );

  env.registerFunction("cidr(string): net.CIDR", (text: string) => orThrow(parseCIDR(text)));
  env.registerFunction("isCIDR(string): bool", (text: string) => !(parseCIDR(text) instanceof Error));
  env.registerFunction("net.CIDR.containsIP(net.IP): bool", (c: CIDRPrefix, a: IPAddress) => c.contains(a));
  env.registerFunction("net.CIDR.containsIP(string): bool", (c: CIDRPrefix, text: string) =>
    c.contains(orThrow(parseIP(text))),
  );
  env.registerFunction("net.CIDR.containsCIDR(net.CIDR): bool", (c: CIDRPrefix, o: CIDRPrefix) =>
    c.contains(o.address, o.bits),
  );
  env.registerFunction("net.CIDR.containsCIDR(string): bool", (c: CIDRPrefix, text: string) => {
    const other = orThrow(parseCIDR(text));
    return c.contains(other.address, other.bits);
  });
  env.registerFunction("net.CIDR.ip(): net.IP", (c: CIDRPrefix) => c.address);
  env.registerFunction("net.CIDR.masked(): net.CIDR", (c: CIDRPrefix) => c.masked());
  env.registerFunction("net.CIDR.prefixLength(): int", (c: CIDRPrefix) => BigInt(c.bits));
  env.registerFunction("string(net.CIDR): string", (c: CIDRPrefix) => c.toString());
  env.registerOperator(
    "net.CIDR == net.CIDR",
    (a: CIDRPrefix, b: CIDRPrefix) =>
      a.bits === b.bits && a.address.family === b.address.family && a.address.value === b.address.value,
  );
}

/** The `ip` namespace value (`ip.isCanonical(s)`). */
export class IPLibrary {}

/** An IP address: its family and its bits as one number. */
export class IPAddress {
  constructor(
    readonly family: 4 | 6,
    readonly value: bigint,
  ) {}

  get width(): number {
    return this.family === 4 ? 32 : 128;
  }

  /** Go's netip String: dotted IPv4; RFC 5952 IPv6 (lower case, the longest run of zero groups as `::`). */
  toString(): string {
    return formatIPAddress(this.family === 4 ? "IPv4" : "IPv6", this.value);
  }
}

/** A CIDR prefix as written (its address keeps host bits; `masked()` clears them). */
export class CIDRPrefix {
  constructor(
    readonly address: IPAddress,
    readonly bits: number,
  ) {}

  /** Whether the masked prefix holds `other`: an address (`otherBits` undefined) or a prefix that long. */
  contains(other: IPAddress, otherBits?: number): boolean {
    if (other.family !== this.address.family) return false;
    if (otherBits !== undefined && otherBits < this.bits) return false;
    const hostBits = BigInt(this.address.width - this.bits);
    return other.value >> hostBits === this.address.value >> hostBits;
  }

  masked(): CIDRPrefix {
    const hostBits = BigInt(this.address.width - this.bits);
    return new CIDRPrefix(
      new IPAddress(this.address.family, (this.address.value >> hostBits) << hostBits),
      this.bits,
    );
  }

  toString(): string {
    return `${this.address.toString()}/${this.bits}`;
  }
}

function orThrow<T>(value: T | Error): T {
  if (value instanceof Error) throw value;
  return value;
}

function isLoopback(a: IPAddress): boolean {
  return a.family === 4 ? a.value >> 24n === 127n : a.value === 1n;
}

function isLinkLocalUnicast(a: IPAddress): boolean {
  return a.family === 4 ? a.value >> 16n === 0xa9fen : a.value >> 118n === 0x3fan;
}

/** parseIPAddr upstream: netip.ParseAddr, then no zone and no IPv4-mapped IPv6. */
export function parseIP(text: string): IPAddress | Error {
  if (text.includes("%"))
    return new Error(`IP address ${JSON.stringify(text)} with zone value is not allowed`);
  const parsed = parseIPAddress(text);
  if (parsed === undefined) {
    return new Error(
      `IP Address ${JSON.stringify(text)} parse error during conversion from string: ParseAddr(${JSON.stringify(text)}): unable to parse IP`,
    );
  }
  if (parsed.family === "IPv6" && parsed.value >> 32n === 0xffffn) {
    return new Error(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
  }
  return new IPAddress(parsed.family === "IPv4" ? 4 : 6, parsed.value);
}

/** netip.ParsePrefix, with the same restrictions on the address as `ip()`. */
export function parseCIDR(text: string): CIDRPrefix | Error {
  const slash = text.lastIndexOf("/");
  const fail = () =>
    new Error(
      `network address ${JSON.stringify(text)} parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(text)}): invalid prefix`,
    );
  if (slash < 0) return fail();
  const address = parseIP(text.slice(0, slash));
  if (address instanceof Error) return address;
  const length = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(length) || Number(length) > address.width) return fail();
  return new CIDRPrefix(address, Number(length));
}
