import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from "node:crypto";
import {
  type CertificateRequest,
  certificateRequestSignatureProblem,
  derBitString,
  derBoolean,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derTimeOf,
  derUnsignedInteger,
  hasSubjectAltNames,
  marshalName,
  marshalSubjectAltNames,
  nameTemplateOf,
  type ParsedCertificate,
  parseCertificate,
  parseCertificateRequest,
  pemBlocks,
  type SignatureAlgorithm,
  signatureAlgorithmFor,
  signWith,
  tlv,
} from "@reconcile/api/x509";

// The CA that signs approved requests (pkg/controller/certificates/authority):
// the certificate Go's x509.CreateCertificate writes from a request and the
// permissive signing policy, byte for byte in its layout: the request's
// subject re-encoded as pkix.Name writes it, its subject alternative names,
// its public key, the usages asked for, and nothing else of the request.

/** How a certificate is issued (upstream's `PermissiveSigningPolicy`). */
export interface SigningPolicy {
  /** How long the certificate lives. */
  ttlMs: number;
  /** The CSR's `spec.usages`. */
  usages: readonly string[];
  /** How far `notBefore` lies before now (clock skew). */
  backdateMs: number;
  /** Certificates living less than this are not shortened by the backdate at their end. */
  shortMs: number;
  /** Now. */
  now: Date;
}

/** `x509.KeyUsage` bits by CSR usage. */
const keyUsageBits: Readonly<Record<string, number>> = {
  signing: 1 << 0,
  "digital signature": 1 << 0,
  "content commitment": 1 << 1,
  "key encipherment": 1 << 2,
  "key agreement": 1 << 4,
  "data encipherment": 1 << 3,
  "cert sign": 1 << 5,
  "crl sign": 1 << 6,
  "encipher only": 1 << 7,
  "decipher only": 1 << 8,
};

/** `x509.ExtKeyUsage` by CSR usage: Go's enum value (the order it sorts them in) and OID. */
const extKeyUsages: Readonly<Record<string, readonly [number, string]>> = {
  any: [0, "2.5.29.37.0"],
  "server auth": [1, "1.3.6.1.5.5.7.3.1"],
  "client auth": [2, "1.3.6.1.5.5.7.3.2"],
  "code signing": [3, "1.3.6.1.5.5.7.3.3"],
  "email protection": [4, "1.3.6.1.5.5.7.3.4"],
  "s/mime": [4, "1.3.6.1.5.5.7.3.4"],
  "ipsec end system": [5, "1.3.6.1.5.5.7.3.5"],
  "ipsec tunnel": [6, "1.3.6.1.5.5.7.3.6"],
  "ipsec user": [7, "1.3.6.1.5.5.7.3.7"],
  timestamping: [8, "1.3.6.1.5.5.7.3.8"],
  "ocsp signing": [9, "1.3.6.1.5.5.7.3.9"],
  "microsoft sgc": [10, "1.3.6.1.4.1.311.10.3.3"],
  "netscape sgc": [11, "2.16.840.1.113730.4.1"],
};

/** A failure to issue, with upstream's text. */
export class SigningError extends Error {}

/** `keyUsagesFromStrings`: the key usage bits and the extended usages' OIDs, sorted as Go sorts them. */
export function keyUsagesFromStrings(usages: readonly string[]): {
  keyUsage: number;
  extKeyUsages: string[];
} {
  let keyUsage = 0;
  const extended = new Map<number, string>();
  const unrecognized: string[] = [];
  for (const usage of usages) {
    const bit = keyUsageBits[usage];
    const ext = extKeyUsages[usage];
    if (bit !== undefined) keyUsage |= bit;
    else if (ext !== undefined) extended.set(ext[0], ext[1]);
    else unrecognized.push(usage);
  }
  if (unrecognized.length > 0)
    throw new SigningError(
      `unrecognized usage values: [${unrecognized.map((u) => JSON.stringify(u)).join(" ")}]`,
    );
  const extKeyUsageOids = [...extended.entries()].sort(([a], [b]) => a - b).map(([, oid]) => oid);
  return { keyUsage, extKeyUsages: extKeyUsageOids };
}

/** The first eight bits of `value` in reverse order, as X.509 numbers KeyUsage's bits from the left. */
function reverseBits(value: number): number {
  let reversed = 0;
  for (let bit = 0; bit < 8; bit++) if (value & (1 << bit)) reversed |= 1 << (7 - bit);
  return reversed;
}

/** `marshalKeyUsage`'s BIT STRING: one or two octets, the unused trailing bits counted. */
function keyUsageBitString(keyUsage: number): Buffer {
  const octets = [reverseBits(keyUsage & 0xff), reverseBits((keyUsage >> 8) & 0xff)];
  const bytes = octets[1] === 0 ? octets.slice(0, 1) : octets;
  let unused = 0;
  const last = bytes.at(-1)!;
  while (unused < 8 && (last & (1 << unused)) === 0) unused++;
  // An all-zero bit string has no bits at all.
  if (unused === 8) unused = 0;
  return tlv(0x03, Buffer.from([unused, ...bytes]));
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return derSequence(
    derObjectIdentifier(oid),
    ...(critical ? [derBoolean(true)] : []),
    derOctetString(value),
  );
}

/**
 * A CA certificate and its key, signing requests under a policy (upstream's
 * `CertificateAuthority`). The key may be RSA, ECDSA or Ed25519.
 */
export class CertificateAuthority {
  /** The CA certificate, PEM, as given. */
  readonly certificatePem: string;
  readonly certificate: ParsedCertificate;
  readonly #key: KeyObject;
  readonly #algorithm: SignatureAlgorithm;

  /** Throws when `certificatePem` holds no certificate or `keyPem` is not its key. */
  constructor(certificatePem: string, keyPem: string) {
    const block = pemBlocks(certificatePem).find((candidate) => candidate.type === "CERTIFICATE");
    if (block === undefined) throw new SigningError("the CA certificate PEM holds no CERTIFICATE block");
    this.certificatePem = certificatePem;
    this.certificate = parseCertificate(block.bytes);
    this.#key = createPrivateKey(keyPem);
    const fromKey = createPublicKey(this.#key).export({ type: "spki", format: "der" });
    if (!fromKey.equals(this.certificate.publicKey))
      throw new SigningError("tls: private key does not match public key");
    try {
      this.#algorithm = signatureAlgorithmFor(this.#key);
    } catch (error) {
      throw new SigningError((error as Error).message);
    }
  }

  /**
   * Issues a certificate for the PKCS #10 request (its DER, or the request
   * already parsed) under `policy`; returns its DER. The request's signature
   * is checked either way.
   */
  sign(requestDer: Buffer | CertificateRequest, policy: SigningPolicy): Buffer {
    let request: CertificateRequest;
    try {
      request = Buffer.isBuffer(requestDer) ? parseCertificateRequest(requestDer) : requestDer;
    } catch (error) {
      throw new SigningError(`unable to parse certificate request: ${(error as Error).message}`);
    }
    const problem = certificateRequestSignatureProblem(request);
    if (problem !== undefined)
      throw new SigningError(`unable to verify certificate request signature: ${problem}`);
    const { keyUsage, extKeyUsages } = keyUsagesFromStrings(policy.usages);
    const { notBefore, notAfter } = this.validity(policy);

    const subject = marshalName(nameTemplateOf(request.subject));
    const extensions: Buffer[] = [];
    if (keyUsage !== 0) extensions.push(extension("2.5.29.15", true, keyUsageBitString(keyUsage)));
    if (extKeyUsages.length > 0)
      extensions.push(extension("2.5.29.37", false, derSequence(...extKeyUsages.map(derObjectIdentifier))));
    // BasicConstraints { cA: false }: the default left out.
    extensions.push(extension("2.5.29.19", true, derSequence()));
    const authorityKeyId = this.certificate.subjectKeyId;
    if (authorityKeyId !== undefined && !this.certificate.subject.raw.equals(subject))
      extensions.push(extension("2.5.29.35", false, derSequence(tlv(0x80, authorityKeyId))));
    // RFC 5280 §4.2.1.6: critical when the subject is empty.
    if (hasSubjectAltNames(request))
      extensions.push(extension("2.5.29.17", subject.length === 2, marshalSubjectAltNames(request)));

    const tbs = derSequence(
      tlv(0xa0, tlv(0x02, Buffer.from([2]))),
      derUnsignedInteger(randomBytes(16)),
      this.#algorithm.identifier,
      this.certificate.subject.raw,
      derSequence(derTimeOf(notBefore), derTimeOf(notAfter)),
      subject,
      request.publicKey,
      tlv(0xa3, derSequence(...extensions)),
    );
    const signature = signWith(this.#key, this.#algorithm, tbs);
    return derSequence(tbs, this.#algorithm.identifier, derBitString(signature));
  }

  /** `PermissiveSigningPolicy.apply`'s validity: backdated, shortened by the backdate unless short, capped at the CA's end. */
  validity(policy: SigningPolicy): { notBefore: Date; notAfter: Date } {
    const now = policy.now.getTime();
    const signerNotAfter = this.certificate.notAfter.getTime();
    const notBefore = now - policy.backdateMs;
    let notAfter =
      policy.ttlMs < policy.shortMs ? now + policy.ttlMs : now + policy.ttlMs - policy.backdateMs;
    if (notAfter >= signerNotAfter) notAfter = signerNotAfter;
    const goTime = (ms: number) =>
      new Date(ms).toISOString().replace(".000Z", "Z").replace("T", " ").replace("Z", " +0000 UTC");
    if (notBefore >= signerNotAfter)
      throw new SigningError(`the signer has expired: NotAfter=${goTime(signerNotAfter)}`);
    if (now >= signerNotAfter)
      throw new SigningError(
        `refusing to sign a certificate that expired in the past: NotAfter=${goTime(signerNotAfter)}`,
      );
    return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
  }
}
