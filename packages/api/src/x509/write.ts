import { createPublicKey, type KeyObject, sign } from "node:crypto";
import {
  derBitString,
  derGoString,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derSetOf,
  pemBlock,
  tlv,
} from "./der.js";
import {
  commonNameOf,
  type DistinguishedName,
  ipv4Octets,
  nameAttributeTypes,
  nameValues,
  type SubjectAlternativeNames,
} from "./read.js";

// X.509 structures written as Go's crypto/x509 writes them: names
// (`pkix.Name.ToRDNSequence`), subject alternative names (`marshalSANs`),
// signature algorithms by key, and PKCS #10 requests
// (`x509.CreateCertificateRequest`, which kubelets and client-go's
// `cert.MakeCSR` use).

/** The parts of a `pkix.Name` Go writes, each a list except the common name and serial number. */
export interface NameTemplate {
  country?: readonly string[] | undefined;
  province?: readonly string[] | undefined;
  locality?: readonly string[] | undefined;
  streetAddress?: readonly string[] | undefined;
  postalCode?: readonly string[] | undefined;
  organization?: readonly string[] | undefined;
  organizationalUnit?: readonly string[] | undefined;
  commonName?: string | undefined;
  serialNumber?: string | undefined;
}

/** A parsed name as `pkix.Name.FillFromRDNSequence` keeps it. */
export function nameTemplateOf(name: DistinguishedName): NameTemplate {
  const t = nameAttributeTypes;
  return {
    country: nameValues(name, t.country),
    province: nameValues(name, t.province),
    locality: nameValues(name, t.locality),
    streetAddress: nameValues(name, t.streetAddress),
    postalCode: nameValues(name, t.postalCode),
    organization: nameValues(name, t.organization),
    organizationalUnit: nameValues(name, t.organizationalUnit),
    commonName: commonNameOf(name),
    serialNumber: nameValues(name, t.serialNumber).at(-1) ?? "",
  };
}

/**
 * `pkix.Name.ToRDNSequence`, DER: country, province, locality, street,
 * postal code, organization, unit, common name, serial number, each type's
 * values in one set. Other attributes of a parsed name are not written.
 */
export function marshalName(name: NameTemplate): Buffer {
  const t = nameAttributeTypes;
  const rdn = (type: string, values: readonly string[] | undefined) =>
    values === undefined || values.length === 0
      ? []
      : [derSetOf(values.map((value) => derSequence(derObjectIdentifier(type), derGoString(value))))];
  return derSequence(
    ...rdn(t.country, name.country),
    ...rdn(t.province, name.province),
    ...rdn(t.locality, name.locality),
    ...rdn(t.streetAddress, name.streetAddress),
    ...rdn(t.postalCode, name.postalCode),
    ...rdn(t.organization, name.organization),
    ...rdn(t.organizationalUnit, name.organizationalUnit),
    ...rdn(t.commonName, name.commonName ? [name.commonName] : []),
    ...rdn(t.serialNumber, name.serialNumber ? [name.serialNumber] : []),
  );
}

/** Whether any subject alternative name is present. */
export function hasSubjectAltNames(names: Partial<SubjectAlternativeNames>): boolean {
  return (
    (names.dnsNames?.length ?? 0) +
      (names.emailAddresses?.length ?? 0) +
      (names.ipAddresses?.length ?? 0) +
      (names.uris?.length ?? 0) >
    0
  );
}

/** `marshalSANs`: DNS names, emails, IP addresses (an IPv4-mapped address in four octets), URIs, in that order. */
export function marshalSubjectAltNames(names: Partial<SubjectAlternativeNames>): Buffer {
  const ia5 = (tag: number, text: string) => tlv(tag, Buffer.from(text, "latin1"));
  // Go's `To4`: an IPv4-mapped address is written in four octets.
  const ip = (octets: Buffer) => tlv(0x87, ipv4Octets(octets) ?? octets);
  return derSequence(
    ...(names.dnsNames ?? []).map((name) => ia5(0x82, name)),
    ...(names.emailAddresses ?? []).map((email) => ia5(0x81, email)),
    ...(names.ipAddresses ?? []).map(ip),
    ...(names.uris ?? []).map((uri) => ia5(0x86, uri)),
  );
}

/** An IP address's octets from its text: four for IPv4, sixteen for IPv6; undefined when it is neither. */
export function ipAddressOctets(text: string): Buffer | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4 !== null) {
    const octets = v4.slice(1).map(Number);
    return octets.every((o) => o <= 255) ? Buffer.from(octets) : undefined;
  }
  if (!/^[0-9a-fA-F:]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (all.some((group) => group.length === 0 || group.length > 4)) return undefined;
  const octets = Buffer.alloc(16);
  all.forEach((group, i) => {
    octets.writeUInt16BE(Number.parseInt(group, 16), i * 2);
  });
  return octets;
}

/** How a key signs: the AlgorithmIdentifier Go writes for it and Node's digest. */
export interface SignatureAlgorithm {
  readonly identifier: Buffer;
  readonly digest: string | null;
}

/** Go's `signingParamsForKey`: SHA-256 with RSA, ECDSA with the curve's hash, or Ed25519. */
export function signatureAlgorithmFor(key: KeyObject): SignatureAlgorithm {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return {
        identifier: derSequence(derObjectIdentifier("1.2.840.113549.1.1.11"), Buffer.from([0x05, 0])),
        digest: "sha256",
      };
    case "ec": {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const [oid, digest] =
        curve === "secp384r1"
          ? ["1.2.840.10045.4.3.3", "sha384"]
          : curve === "secp521r1"
            ? ["1.2.840.10045.4.3.4", "sha512"]
            : ["1.2.840.10045.4.3.2", "sha256"];
      return { identifier: derSequence(derObjectIdentifier(oid)), digest };
    }
    case "ed25519":
      return { identifier: derSequence(derObjectIdentifier("1.3.101.112")), digest: null };
    default:
      throw new Error("x509: only RSA, ECDSA and Ed25519 keys supported");
  }
}

/** Signs `data` with `key` as `algorithm` says (ECDSA signatures DER-encoded). */
export function signWith(key: KeyObject, algorithm: SignatureAlgorithm, data: Uint8Array): Buffer {
  return key.asymmetricKeyType === "ec"
    ? sign(algorithm.digest, data, { key, dsaEncoding: "der" })
    : sign(algorithm.digest, data, key);
}

/** What a certificate request asks for. */
export interface CertificateRequestTemplate extends Partial<Omit<SubjectAlternativeNames, "ipAddresses">> {
  subject?: NameTemplate | undefined;
  /** IP addresses, as text. */
  ipAddresses?: readonly string[] | undefined;
}

/**
 * `x509.CreateCertificateRequest`: a PKCS #10 request (PEM) for `template`,
 * signed with the private `key` (RSA, ECDSA or Ed25519), as a kubelet or
 * client-go's `cert.MakeCSR` makes them.
 */
export function createCertificateRequest(template: CertificateRequestTemplate, key: KeyObject): string {
  const algorithm = signatureAlgorithmFor(key);
  const ipAddresses = (template.ipAddresses ?? []).map((text) => {
    const octets = ipAddressOctets(text);
    if (octets === undefined) throw new Error(`x509: invalid IP address ${JSON.stringify(text)}`);
    return octets;
  });
  const names = { ...template, ipAddresses };
  const extensions = hasSubjectAltNames(names)
    ? [derSequence(derObjectIdentifier("2.5.29.17"), derOctetString(marshalSubjectAltNames(names)))]
    : [];
  const attributes =
    extensions.length === 0
      ? tlv(0xa0)
      : tlv(
          0xa0,
          derSequence(derObjectIdentifier("1.2.840.113549.1.9.14"), derSetOf([derSequence(...extensions)])),
        );
  const info = derSequence(
    tlv(0x02, Buffer.from([0])),
    marshalName(template.subject ?? {}),
    createPublicKey(key).export({ type: "spki", format: "der" }),
    attributes,
  );
  const der = derSequence(info, algorithm.identifier, derBitString(signWith(key, algorithm, info)));
  return pemBlock("CERTIFICATE REQUEST", der);
}
