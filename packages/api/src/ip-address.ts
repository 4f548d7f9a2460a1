// IP addresses as numbers, read as Go's netip reads them (no leading zeros
// in IPv4 octets, one to four hex digits per IPv6 group, an IPv4 tail
// allowed) and written as Go writes them (RFC 5952: lower case, the longest
// run of two or more zero groups shortened to `::`): for the API server's
// service IP allocators and CEL library, and the simulated pod network.

export type IPFamily = "IPv4" | "IPv6";

export interface ParsedIP {
  readonly family: IPFamily;
  readonly value: bigint;
}

/** The address of `text` (no zone), or undefined if it is not an IP address. */
export function parseIPAddress(text: string): ParsedIP | undefined {
  if (text.includes("%")) return undefined;
  if (text.includes(":")) {
    const value = ipv6Value(text);
    return value === undefined ? undefined : { family: "IPv6", value };
  }
  const value = ipv4Value(text);
  return value === undefined ? undefined : { family: "IPv4", value };
}

/** The family of an address, or undefined when it is none. */
export function ipFamilyOf(text: string): IPFamily | undefined {
  return parseIPAddress(text)?.family;
}

/** The text of an address. */
export function formatIPAddress(family: IPFamily, value: bigint): string {
  if (family === "IPv4") return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of zero groups (two or more; the first of equal runs) becomes "::".
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > bestLength) {
      bestStart = i;
      bestLength = end - i;
    }
    i = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** Dotted IPv4 text to a number; leading zeros are refused, as Go refuses them. */
function ipv4Value(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

/** IPv6 text to a number, an embedded IPv4 tail included. */
function ipv6Value(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = ipv4Value(piece);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(Number.parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "") : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(group);
  return value;
}
