import { createPublicKey, verify, X509Certificate } from "node:crypto";

// What kube-apiserver checks of the PEM in a CertificateSigningRequest: the
// request parses as PKCS #10 and its signature verifies with its own key
// (`certificates.ParseCSR` and `CheckSignature`); an issued certificate is
// one or more parseable CERTIFICATE blocks (`validateCertificate`). Error
// texts are those of Go's encoding/pem and crypto/x509 where they are
// fixed strings.

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

/** One DER element: its tag and where its content lies. */
interface Element {
  readonly tag: number;
  readonly start: number;
  readonly contentStart: number;
  readonly end: number;
}

class Asn1Error extends Error {}

function element(der: Buffer, offset: number, limit: number, expectedTag: number, what: string): Element {
  if (offset + 2 > limit) throw new Asn1Error("asn1: syntax error: data truncated");
  const tag = der[offset]!;
  if (tag !== expectedTag)
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

function objectIdentifier(der: Buffer, oid: Element): string {
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

const sequence = 0x30;

/** Signature algorithms Go's x509 verifies: the hash for each (null: Ed25519), by OID. */
const signatureHashes: Readonly<Record<string, string | null>> = {
  "1.2.840.113549.1.1.5": "sha1",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.3.101.112": null,
};

/** The parts of a PKCS #10 request that its signature covers and is checked with, and its subject. */
interface CertificationRequest {
  readonly subject: Element;
  readonly info: Buffer;
  readonly publicKey: Buffer;
  readonly algorithm: string;
  readonly signature: Buffer;
}

function parseCertificationRequest(der: Buffer): CertificationRequest {
  const outer = element(der, 0, der.length, sequence, "CertificationRequest");
  if (outer.end !== der.length) throw new Asn1Error("asn1: syntax error: trailing data");
  const info = element(der, outer.contentStart, outer.end, sequence, "CertificationRequestInfo");
  const algorithm = element(der, info.end, outer.end, sequence, "AlgorithmIdentifier");
  const signature = element(der, algorithm.end, outer.end, 0x03, "signature");
  const version = element(der, info.contentStart, info.end, 0x02, "version");
  const subject = element(der, version.end, info.end, sequence, "subject");
  const publicKey = element(der, subject.end, info.end, sequence, "subjectPKInfo");
  const oid = element(der, algorithm.contentStart, algorithm.end, 0x06, "algorithm");
  return {
    subject,
    info: der.subarray(info.start, info.end),
    publicKey: der.subarray(publicKey.start, publicKey.end),
    algorithm: objectIdentifier(der, oid),
    // A BIT STRING's first octet counts the unused bits of the last: zero for signatures.
    signature: der.subarray(signature.contentStart + 1, signature.end),
  };
}

/**
 * Why `pem` is not a certificate request whose signature verifies, or
 * undefined when it is (upstream's `validateCSR`).
 */
export function certificateRequestProblem(pem: string): string | undefined {
  const block = pemBlocks(pem)[0];
  if (block === undefined || block.type !== "CERTIFICATE REQUEST")
    return "PEM block type must be CERTIFICATE REQUEST";
  let request: CertificationRequest;
  try {
    request = parseCertificationRequest(block.bytes);
  } catch (error) {
    if (error instanceof Asn1Error) return error.message;
    throw error;
  }
  const hash = signatureHashes[request.algorithm];
  if (hash === undefined) return "x509: cannot verify signature: algorithm unimplemented";
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey({ key: request.publicKey, format: "der", type: "spki" });
  } catch {
    return "x509: unsupported public key type";
  }
  const ecdsa = key.asymmetricKeyType === "ec";
  let verified = false;
  try {
    verified = verify(hash, request.info, ecdsa ? { key, dsaEncoding: "der" } : key, request.signature);
  } catch {
    verified = false;
  }
  if (verified) return undefined;
  if (ecdsa) return "x509: ECDSA verification failure";
  if (key.asymmetricKeyType === "ed25519") return "x509: Ed25519 verification failure";
  return "crypto/rsa: verification error";
}

/** The organizations (O) of a request's subject, in order; undefined when `pem` is not a request. */
export function certificateRequestOrganizations(pem: string): string[] | undefined {
  const block = pemBlocks(pem)[0];
  if (block === undefined || block.type !== "CERTIFICATE REQUEST") return undefined;
  const der = block.bytes;
  try {
    const { subject } = parseCertificationRequest(der);
    const organizations: string[] = [];
    // Name ::= SEQUENCE OF SET OF AttributeTypeAndValue ::= SEQUENCE { type OID, value ANY }.
    for (let at = subject.contentStart; at < subject.end; ) {
      const set = element(der, at, subject.end, 0x31, "RelativeDistinguishedName");
      for (let inner = set.contentStart; inner < set.end; ) {
        const pair = element(der, inner, set.end, sequence, "AttributeTypeAndValue");
        const type = element(der, pair.contentStart, pair.end, 0x06, "type");
        if (objectIdentifier(der, type) === "2.5.4.10" && type.end < pair.end) {
          const value = element(der, type.end, pair.end, der[type.end]!, "value");
          organizations.push(der.subarray(value.contentStart, value.end).toString("utf8"));
        }
        inner = pair.end;
      }
      at = set.end;
    }
    return organizations;
  } catch (error) {
    if (error instanceof Asn1Error) return undefined;
    throw error;
  }
}

/** Why `pem` is not a chain of CERTIFICATE blocks, or undefined (upstream's `validateCertificate`; empty is fine). */
export function certificateChainProblem(pem: string): string | undefined {
  if (pem === "") return undefined;
  const blocks = pemBlocks(pem);
  if (blocks.length === 0) return "must contain at least one CERTIFICATE PEM block";
  for (const block of blocks) {
    if (block.type !== "CERTIFICATE") return `only CERTIFICATE PEM blocks are allowed, found "${block.type}"`;
    if (block.headers.length > 0) return "no PEM block headers are permitted";
    try {
      new X509Certificate(block.bytes);
    } catch {
      return "x509: malformed certificate";
    }
  }
  return undefined;
}
