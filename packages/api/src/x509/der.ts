// DER and PEM as Go's encoding/asn1 and encoding/pem read and write them, for
// the few X.509 structures the API works with: certificate signing requests,
// certificates and their names. Error texts are Go's where they are fixed
// strings.

/** One PEM block: its type, headers and decoded bytes. */
export interface PemBlock {
  readonly type: string;
  readonly headers: readonly string[];
  readonly bytes: Buffer;
}

const beginMarker = /-----BEGIN ([^\r\n-]*)-----\r?\n/g;
const endMarker = /-----END ([^\r\n-]*)-----/g;

/** The first position in ascending `positions` at or after `from`, if any. */
function firstAtOrAfter(positions: readonly number[], from: number): number | undefined {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (positions[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return positions[low];
}

/** How many malformed blocks (an END found, the body not base64) are passed over before reading stops. */
const malformedBlockLimit = 100;

/**
 * The PEM blocks of `text`, in order, as Go's `pem.Decode` finds them one
 * after another: a BEGIN line without its END, or whose body is not base64,
 * is passed over. Every END marker is indexed first and a body holding
 * another marker is refused at that marker, so that many BEGIN lines cost no
 * more than reading them once; reading stops after {@link malformedBlockLimit}
 * other malformed bodies (Go goes on, in quadratic time).
 */
export function pemBlocks(text: string): PemBlock[] {
  const ends = new Map<string, number[]>();
  for (const match of text.matchAll(endMarker)) {
    const list = ends.get(match[1]!) ?? [];
    list.push(match.index);
    ends.set(match[1]!, list);
  }
  const blocks: PemBlock[] = [];
  let after = 0;
  let malformed = 0;
  for (const match of text.matchAll(beginMarker)) {
    if (match.index < after) continue;
    const type = match[1]!;
    const bodyStart = match.index + match[0].length;
    const end = firstAtOrAfter(ends.get(type) ?? [], bodyStart);
    if (end === undefined) continue;
    // A body holding another marker is not base64: seen at the next marker, without reading the body.
    if (text.indexOf("-----", bodyStart) < end) continue;
    const lines = text.slice(bodyStart, end).split(/\r?\n/);
    const headers: string[] = [];
    // Headers (`Proc-Type: 4,ENCRYPTED`) come first and end at a blank line.
    if (lines[0]?.includes(":")) {
      while (lines.length > 0 && lines[0] !== "") headers.push(lines.shift()!);
      lines.shift();
    }
    const body = lines.join("");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) {
      if (++malformed > malformedBlockLimit) break;
      continue;
    }
    blocks.push({ type, headers, bytes: Buffer.from(body, "base64") });
    after = end + `-----END ${type}-----`.length;
  }
  return blocks;
}

/** `pem.EncodeToMemory`: base64 in lines of 64, no headers. */
export function pemBlock(type: string, der: Uint8Array): string {
  const body = Buffer.from(der).toString("base64");
  let lines = "";
  for (let at = 0; at < body.length; at += 64) lines += `${body.slice(at, at + 64)}\n`;
  return `-----BEGIN ${type}-----\n${lines}-----END ${type}-----\n`;
}

/** One DER element: its tag and where it and its content lie in the buffer read. */
export interface DerElement {
  readonly tag: number;
  readonly start: number;
  readonly contentStart: number;
  readonly end: number;
}

/** Malformed DER, with Go's encoding/asn1 text. */
export class Asn1Error extends Error {}

/** DER tags used here. */
export const derTag = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  objectIdentifier: 0x06,
  utf8String: 0x0c,
  numericString: 0x12,
  printableString: 0x13,
  t61String: 0x14,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
} as const;

/**
 * The element at `offset`, which must end by `limit`; with `expectedTag`, one
 * of another tag is an error that names `what`.
 */
export function derElement(
  der: Uint8Array,
  offset: number,
  limit: number,
  expectedTag: number | undefined,
  what: string,
): DerElement {
  if (offset + 2 > limit) throw new Asn1Error("asn1: syntax error: data truncated");
  const tag = der[offset]!;
  if (expectedTag !== undefined && tag !== expectedTag)
    throw new Asn1Error(`asn1: structure error: tags don't match (${what}: want ${expectedTag}, got ${tag})`);
  let length = der[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new Asn1Error("asn1: syntax error: indefinite or oversized length");
    if (contentStart + octets > limit) throw new Asn1Error("asn1: syntax error: data truncated");
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + der[contentStart + i]!;
    contentStart += octets;
  }
  const end = contentStart + length;
  if (end > limit) throw new Asn1Error("asn1: syntax error: data truncated");
  return { tag, start: offset, contentStart, end };
}

/** The elements inside `parent`, in order. */
export function derChildren(der: Uint8Array, parent: DerElement, what: string): DerElement[] {
  const children: DerElement[] = [];
  for (let at = parent.contentStart; at < parent.end; ) {
    const child = derElement(der, at, parent.end, undefined, what);
    children.push(child);
    at = child.end;
  }
  return children;
}

/** An OBJECT IDENTIFIER's dotted form. */
export function objectIdentifier(der: Uint8Array, oid: DerElement): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = oid.contentStart; i < oid.end; i++) {
    value = value * 128 + (der[i]! & 0x7f);
    if ((der[i]! & 0x80) === 0) {
      if (arcs.length === 0)
        arcs.push(value < 80 ? Math.trunc(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join(".");
}

/** A string element's text: UTF8String, PrintableString, IA5String, T61String (Latin-1) or BMPString. */
export function derString(der: Uint8Array, element: DerElement): string {
  const content = Buffer.from(
    der.buffer,
    der.byteOffset + element.contentStart,
    element.end - element.contentStart,
  );
  switch (element.tag) {
    case derTag.t61String:
      return content.toString("latin1");
    case derTag.bmpString:
      return Buffer.from(content).swap16().toString("utf16le");
    default:
      return content.toString("utf8");
  }
}

/** A UTCTime or GeneralizedTime (`YYMMDDHHMMSSZ` / `YYYYMMDDHHMMSSZ`). */
export function derTime(der: Uint8Array, element: DerElement): Date {
  const text = derString(der, element);
  const match =
    element.tag === derTag.utcTime
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (match === null) throw new Asn1Error("asn1: time did not serialize back to the original value");
  let year = Number(match[1]);
  // RFC 5280: a two-digit year is 19YY when 50 or more, else 20YY.
  if (element.tag === derTag.utcTime) year += year >= 50 ? 1900 : 2000;
  return new Date(
    Date.UTC(
      year,
      Number(match[2]) - 1,
      Number(match[3]),
      Number(match[4]),
      Number(match[5]),
      Number(match[6]),
    ),
  );
}

// Writing.

function lengthOctets(length: number): number[] {
  if (length < 0x80) return [length];
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest & 0xff);
  return [0x80 | octets.length, ...octets];
}

/** A tag, its length and its contents. */
export function tlv(tag: number, ...contents: readonly Uint8Array[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag, ...lengthOctets(body.length)]), body]);
}

export const derSequence = (...contents: readonly Uint8Array[]): Buffer => tlv(derTag.sequence, ...contents);

/** A SET OF, its members sorted as DER wants (and Go's encoding/asn1 writes them). */
export function derSetOf(members: readonly Uint8Array[]): Buffer {
  return tlv(derTag.set, ...[...members].sort((a, b) => Buffer.compare(a, b)));
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function derObjectIdentifier(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split(".").map(Number);
  const octets: number[] = [];
  for (const arc of [first! * 40 + second!, ...rest]) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    octets.push(...groups);
  }
  return tlv(derTag.objectIdentifier, Buffer.from(octets));
}

/** A non-negative INTEGER from its big-endian magnitude: no leading zero octets but one before a high bit. */
export function derUnsignedInteger(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = Buffer.from(magnitude.subarray(start));
  if (trimmed.length === 0) return tlv(derTag.integer, Buffer.from([0]));
  return tlv(
    derTag.integer,
    (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed,
  );
}

export const derBoolean = (value: boolean): Buffer => tlv(derTag.boolean, Buffer.from([value ? 0xff : 0]));

export const derOctetString = (bytes: Uint8Array): Buffer => tlv(derTag.octetString, bytes);

/** A BIT STRING of whole octets. */
export const derBitString = (bytes: Uint8Array): Buffer => tlv(derTag.bitString, Buffer.from([0]), bytes);

/**
 * A time as Go's x509 writes a certificate's validity: UTCTime for the years
 * 1950 to 2049, GeneralizedTime otherwise, to the second.
 */
export function derTimeOf(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(derTag.utcTime, Buffer.from(digits.slice(2), "latin1"));
  return tlv(derTag.generalizedTime, Buffer.from(digits, "latin1"));
}

/** Whether Go's encoding/asn1 writes `value` as a PrintableString (else UTF8String): no `*`, no `&`. */
export function isPrintableString(value: string): boolean {
  return /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value);
}

/** A string as Go's encoding/asn1 marshals an untagged Go string. */
export const derGoString = (value: string): Buffer =>
  tlv(isPrintableString(value) ? derTag.printableString : derTag.utf8String, Buffer.from(value, "utf8"));
