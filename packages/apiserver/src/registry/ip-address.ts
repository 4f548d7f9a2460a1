import { isIPv4, isIPv6 } from "node:net";

// IP addresses as numbers, for the service IP allocators: parsed from text as
// Go's `net.ParseIP` reads them (no leading zeros in IPv4 octets, no zone)
// and written as Go's `net.IP.String` writes them (RFC 5952: lower case, the
// longest run of two or more zero groups shortened to `::`).

export type IPFamily = "IPv4" | "IPv6";

export interface IPAddress {
  readonly family: IPFamily;
  readonly value: bigint;
}

/** The address of `text`, or undefined if it is not an IP address. */
export function parseIP(text: string): IPAddress | undefined {
  if (isIPv4(text)) {
    const value = ipv4Value(text);
    return value === undefined ? undefined : { family: "IPv4", value: BigInt(value) };
  }
  if (!isIPv6(text) || text.includes("%")) return undefined;
  const value = ipv6Value(text);
  return value === undefined ? undefined : { family: "IPv6", value };
}

/** The family of an address Go would parse, or undefined. */
export function familyOf(text: string): IPFamily | undefined {
  return parseIP(text)?.family;
}

/** The text of an address. */
export function formatIP(family: IPFamily, value: bigint): string {
  if (family === "IPv4") {
    const v = Number(value);
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
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
  const hex = (part: number[]) => part.map((group) => group.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** Dotted IPv4 text to a number; leading zeros are refused, as Go refuses them. */
function ipv4Value(text: string): number | undefined {
  let value = 0;
  for (const part of text.split(".")) {
    if (part.length > 1 && part[0] === "0") return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

/** IPv6 text (already checked by `isIPv6`) to a number, an embedded IPv4 tail included. */
function ipv6Value(text: string): bigint | undefined {
  let body = text;
  const tail: number[] = [];
  const lastColon = body.lastIndexOf(":");
  const last = body.slice(lastColon + 1);
  if (last.includes(".")) {
    const v4 = ipv4Value(last);
    if (v4 === undefined) return undefined;
    tail.push(v4 >>> 16, v4 & 0xffff);
    body = body.slice(0, lastColon + 1);
    if (body.endsWith(":") && !body.endsWith("::")) body = body.slice(0, -1);
  }
  const [head = "", rest] = body.split("::");
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16));
  const before = parse(head);
  const after = [...(rest === undefined ? [] : parse(rest)), ...tail];
  const missing = 8 - before.length - after.length;
  const groups =
    rest === undefined ? [...before, ...after] : [...before, ...new Array(missing).fill(0), ...after];
  if (groups.length !== 8) return undefined;
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(group);
  return value;
}
