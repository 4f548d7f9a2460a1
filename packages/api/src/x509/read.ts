import { createPublicKey, verify, X509Certificate } from "node:crypto";
import {
  Asn1Error,
  type DerElement,
  derChildren,
  derElement,
  derString,
  derTag,
  derTime,
  objectIdentifier,
  pemBlocks,
} from "./der.js";

// PKCS #10 certificate signing requests and X.509 certificates read as Go's
// crypto/x509 reads them (`ParseCertificateRequest`, `ParseCertificate`), as
// far as Kubernetes looks into them: the subject, the subject alternative
// names, the public key and the signature. kube-apiserver checks requests
// with it; the CSR signing and approving controllers read them.

/** An attribute of a distinguished name: its type (dotted OID) and its text. */
export interface NameAttribute {
  readonly type: string;
  readonly value: string;
}

/** A distinguished name: its DER, and its attributes in order (only those whose values are strings). */
export interface DistinguishedName {
  readonly raw: Buffer;
  readonly attributes: readonly NameAttribute[];
}

/** Dotted OIDs of the name attributes Go's `pkix.Name` knows. */
export const nameAttributeTypes = {
  country: "2.5.4.6",
  province: "2.5.4.8",
  locality: "2.5.4.7",
  streetAddress: "2.5.4.9",
  postalCode: "2.5.4.17",
  organization: "2.5.4.10",
  organizationalUnit: "2.5.4.11",
  commonName: "2.5.4.3",
  serialNumber: "2.5.4.5",
} as const;

/** The values of one attribute type, in order. */
export function nameValues(name: DistinguishedName, type: string): string[] {
  return name.attributes.filter((attribute) => attribute.type === type).map((attribute) => attribute.value);
}

/** The common name as `pkix.Name` keeps it: the last CN, or "". */
export function commonNameOf(name: DistinguishedName): string {
  return nameValues(name, nameAttributeTypes.commonName).at(-1) ?? "";
}

const stringTags = new Set<number>([
  derTag.utf8String,
  derTag.printableString,
  derTag.numericString,
  derTag.t61String,
  derTag.ia5String,
  derTag.bmpString,
]);

function readName(der: Buffer, name: DerElement): DistinguishedName {
  const attributes: NameAttribute[] = [];
  // Name ::= SEQUENCE OF SET OF AttributeTypeAndValue ::= SEQUENCE { type OID, value ANY }.
  for (let at = name.contentStart; at < name.end; ) {
    const set = derElement(der, at, name.end, derTag.set, "RelativeDistinguishedName");
    for (let inner = set.contentStart; inner < set.end; ) {
      const pair = derElement(der, inner, set.end, derTag.sequence, "AttributeTypeAndValue");
      const type = derElement(der, pair.contentStart, pair.end, derTag.objectIdentifier, "type");
      if (type.end < pair.end) {
        const value = derElement(der, type.end, pair.end, undefined, "value");
        if (stringTags.has(value.tag))
          attributes.push({ type: objectIdentifier(der, type), value: derString(der, value) });
      }
      inner = pair.end;
    }
    at = set.end;
  }
  return { raw: der.subarray(name.start, name.end), attributes };
}

/** Subject alternative names, by kind, as Go's x509 keeps them. */
export interface SubjectAlternativeNames {
  readonly dnsNames: readonly string[];
  readonly emailAddresses: readonly string[];
  /** Each address's 4 or 16 octets. */
  readonly ipAddresses: readonly Buffer[];
  readonly uris: readonly string[];
}

const subjectAltNameOid = "2.5.29.17";
const extensionRequestOid = "1.2.840.113549.1.9.14";

function isIA5(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** `parseSANExtension`: the GeneralNames of an extension's value; other kinds of name are passed over. */
function readSubjectAltNames(der: Buffer, value: DerElement): SubjectAlternativeNames {
  const names = {
    dnsNames: [] as string[],
    emailAddresses: [] as string[],
    ipAddresses: [] as Buffer[],
    uris: [] as string[],
  };
  const sequence = derElement(der, value.contentStart, value.end, derTag.sequence, "GeneralNames");
  for (const name of derChildren(der, sequence, "GeneralName")) {
    const content = der.subarray(name.contentStart, name.end);
    switch (name.tag) {
      case 0x81: {
        const email = content.toString("latin1");
        if (!isIA5(email)) throw new Asn1Error("x509: SAN rfc822Name is malformed");
        names.emailAddresses.push(email);
        break;
      }
      case 0x82: {
        const dns = content.toString("latin1");
        if (!isIA5(dns)) throw new Asn1Error("x509: SAN dNSName is malformed");
        names.dnsNames.push(dns);
        break;
      }
      case 0x86: {
        const uri = content.toString("latin1");
        if (!isIA5(uri)) throw new Asn1Error("x509: SAN uniformResourceIdentifier is malformed");
        names.uris.push(uri);
        break;
      }
      case 0x87:
        if (content.length !== 4 && content.length !== 16)
          throw new Asn1Error(`x509: cannot parse IP address of length ${content.length}`);
        names.ipAddresses.push(Buffer.from(content));
        break;
    }
  }
  return names;
}

/** An IPv4 address's four octets: itself, or the tail of an IPv4-mapped IPv6 address (Go's `net.IP.To4`). */
export function ipv4Octets(octets: Uint8Array): Uint8Array | undefined {
  if (octets.length === 4) return octets;
  const mapped =
    octets.length === 16 &&
    octets.subarray(0, 10).every((b) => b === 0) &&
    octets[10] === 0xff &&
    octets[11] === 0xff;
  return mapped ? octets.subarray(12) : undefined;
}

/** The text of an IP address's octets, as Go's `net.IP.String` writes it. */
export function ipAddressText(octets: Uint8Array): string {
  const v4 = ipv4Octets(octets);
  if (v4 !== undefined) return [...v4].join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((octets[i]! << 8) | octets[i + 1]!).toString(16));
  // The longest run of two or more zero groups becomes "::".
  let best = { at: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.length && j - i >= 2) best = { at: i, length: j - i };
    i = j;
  }
  if (best.at === -1) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.length).join(":")}`;
}

/** A parsed PKCS #10 request. */
export interface CertificateRequest extends SubjectAlternativeNames {
  readonly subject: DistinguishedName;
  /** The SubjectPublicKeyInfo, DER. */
  readonly publicKey: Buffer;
  /** The signed part (CertificationRequestInfo), DER. */
  readonly info: Buffer;
  /** The signature algorithm's dotted OID. */
  readonly signatureAlgorithm: string;
  readonly signature: Buffer;
}

/** Reads a PKCS #10 request's DER; throws {@link Asn1Error} with Go's text when it is malformed. */
export function parseCertificateRequest(der: Buffer): CertificateRequest {
  const outer = derElement(der, 0, der.length, derTag.sequence, "CertificationRequest");
  if (outer.end !== der.length) throw new Asn1Error("asn1: syntax error: trailing data");
  const info = derElement(der, outer.contentStart, outer.end, derTag.sequence, "CertificationRequestInfo");
  const algorithm = derElement(der, info.end, outer.end, derTag.sequence, "AlgorithmIdentifier");
  const signature = derElement(der, algorithm.end, outer.end, derTag.bitString, "signature");
  const version = derElement(der, info.contentStart, info.end, derTag.integer, "version");
  const subject = derElement(der, version.end, info.end, derTag.sequence, "subject");
  const publicKey = derElement(der, subject.end, info.end, derTag.sequence, "subjectPKInfo");
  const oid = derElement(der, algorithm.contentStart, algorithm.end, derTag.objectIdentifier, "algorithm");
  let names: SubjectAlternativeNames = { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] };
  // attributes [0] IMPLICIT SET OF Attribute ::= SEQUENCE { type OID, values SET OF ANY }.
  if (publicKey.end < info.end) {
    const attributes = derElement(der, publicKey.end, info.end, 0xa0, "attributes");
    for (const attribute of derChildren(der, attributes, "Attribute")) {
      const type = derElement(der, attribute.contentStart, attribute.end, derTag.objectIdentifier, "type");
      if (objectIdentifier(der, type) !== extensionRequestOid) continue;
      const values = derElement(der, type.end, attribute.end, derTag.set, "values");
      const extensions = derElement(der, values.contentStart, values.end, derTag.sequence, "Extensions");
      for (const extension of derChildren(der, extensions, "Extension")) {
        const parts = derChildren(der, extension, "Extension");
        if (parts[0]?.tag !== derTag.objectIdentifier) continue;
        if (objectIdentifier(der, parts[0]) !== subjectAltNameOid) continue;
        const value = parts.at(-1)!;
        if (value.tag !== derTag.octetString) throw new Asn1Error("x509: malformed extension value field");
        names = readSubjectAltNames(der, value);
      }
    }
  }
  return {
    subject: readName(der, subject),
    publicKey: der.subarray(publicKey.start, publicKey.end),
    info: der.subarray(info.start, info.end),
    signatureAlgorithm: objectIdentifier(der, oid),
    // A BIT STRING's first octet counts the unused bits of the last: zero for signatures.
    signature: der.subarray(signature.contentStart + 1, signature.end),
    ...names,
  };
}

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

/** Why a parsed request's signature does not verify with its own key (`CheckSignature`), or undefined. */
export function certificateRequestSignatureProblem(request: CertificateRequest): string | undefined {
  const hash = signatureHashes[request.signatureAlgorithm];
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

/**
 * The request in the first PEM block of `pem` (kube-apiserver's `ParseCSR`),
 * or why there is none: a block of another type, or DER Go would not read.
 */
export function readCertificateRequest(pem: string): CertificateRequest | string {
  const block = pemBlocks(pem)[0];
  if (block === undefined || block.type !== "CERTIFICATE REQUEST")
    return "PEM block type must be CERTIFICATE REQUEST";
  try {
    return parseCertificateRequest(block.bytes);
  } catch (error) {
    if (error instanceof Asn1Error) return error.message;
    throw error;
  }
}

/**
 * Why `pem` is not a certificate request whose signature verifies, or
 * undefined when it is (upstream's `validateCSR`).
 */
export function certificateRequestProblem(pem: string): string | undefined {
  const request = readCertificateRequest(pem);
  if (typeof request === "string") return request;
  return certificateRequestSignatureProblem(request);
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

/** What a signer needs of its CA certificate. */
export interface ParsedCertificate {
  readonly raw: Buffer;
  readonly subject: DistinguishedName;
  readonly issuer: DistinguishedName;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The SubjectPublicKeyInfo, DER. */
  readonly publicKey: Buffer;
  /** The subject key identifier extension's octets, if any. */
  readonly subjectKeyId: Buffer | undefined;
}

const subjectKeyIdOid = "2.5.29.14";

/** Reads a certificate's DER; throws {@link Asn1Error} when it is malformed. */
export function parseCertificate(der: Buffer): ParsedCertificate {
  const outer = derElement(der, 0, der.length, derTag.sequence, "Certificate");
  const tbs = derElement(der, outer.contentStart, outer.end, derTag.sequence, "TBSCertificate");
  const parts = derChildren(der, tbs, "TBSCertificate");
  // An explicit version ([0]) comes first when present.
  const fields = parts[0]?.tag === 0xa0 ? parts.slice(1) : parts;
  const [, , issuer, validity, subject, publicKey, ...rest] = fields;
  if (issuer === undefined || validity === undefined || subject === undefined || publicKey === undefined)
    throw new Asn1Error("x509: malformed tbs certificate");
  const [notBefore, notAfter] = derChildren(der, validity, "Validity");
  if (notBefore === undefined || notAfter === undefined) throw new Asn1Error("x509: malformed validity");
  let subjectKeyId: Buffer | undefined;
  const extensions = rest.find((part) => part.tag === 0xa3);
  if (extensions !== undefined) {
    const list = derElement(der, extensions.contentStart, extensions.end, derTag.sequence, "Extensions");
    for (const extension of derChildren(der, list, "Extension")) {
      const extensionParts = derChildren(der, extension, "Extension");
      if (extensionParts[0] === undefined || objectIdentifier(der, extensionParts[0]) !== subjectKeyIdOid)
        continue;
      const value = extensionParts.at(-1)!;
      const keyId = derElement(
        der,
        value.contentStart,
        value.end,
        derTag.octetString,
        "SubjectKeyIdentifier",
      );
      subjectKeyId = der.subarray(keyId.contentStart, keyId.end);
    }
  }
  return {
    raw: der.subarray(outer.start, outer.end),
    subject: readName(der, subject),
    issuer: readName(der, issuer),
    notBefore: derTime(der, notBefore),
    notAfter: derTime(der, notAfter),
    publicKey: der.subarray(publicKey.start, publicKey.end),
    subjectKeyId,
  };
}
