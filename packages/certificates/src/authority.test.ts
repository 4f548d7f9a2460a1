import { createPublicKey, generateKeyPairSync, type KeyObject, X509Certificate } from "node:crypto";
import {
  createCertificateRequest,
  derBitString,
  derBoolean,
  derChildren,
  derElement,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derTimeOf,
  marshalName,
  objectIdentifier,
  pemBlock,
  pemBlocks,
  readCertificateRequest,
  signatureAlgorithmFor,
  signWith,
  tlv,
} from "@reconcile/api/x509";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { CertificateAuthority, keyUsagesFromStrings, type SigningPolicy } from "./authority.js";
import { kubeletClientProblem, kubeletServingProblem } from "./helpers.js";
import { CSRSigningController } from "./signer.js";

// The CA that signs approved requests: upstream's authority_test and
// signer_test tables (validity, usages, names), and the layout Go's
// x509.CreateCertificate gives a certificate, read back with Node's X.509
// parser and our DER reader.

const minute = 60_000;
const hour = 60 * minute;
const now = new Date("2026-03-01T12:00:00Z");
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);
const ecKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const caSubjectKeyId = Buffer.from("0102030405", "hex");

/** A self-signed CA for `key` (P-224 upstream; P-256 here), valid over [notBefore, notAfter], with a subject key id. */
function certificateAuthority(key: KeyObject, notBefore: Date, notAfter: Date): CertificateAuthority {
  const algorithm = signatureAlgorithmFor(key);
  const subject = marshalName({ commonName: "test-ca" });
  const extension = (oid: string, critical: boolean, value: Buffer) =>
    derSequence(derObjectIdentifier(oid), ...(critical ? [derBoolean(true)] : []), derOctetString(value));
  const tbs = derSequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, Buffer.from([42])),
    algorithm.identifier,
    subject,
    derSequence(derTimeOf(notBefore), derTimeOf(notAfter)),
    subject,
    createPublicKey(key).export({ type: "spki", format: "der" }),
    tlv(
      0xa3,
      derSequence(
        extension("2.5.29.15", true, tlv(0x03, Buffer.from([2, 0x84]))),
        extension("2.5.29.19", true, derSequence(derBoolean(true))),
        extension("2.5.29.14", false, derOctetString(caSubjectKeyId)),
      ),
    ),
  );
  const cert = pemBlock(
    "CERTIFICATE",
    derSequence(tbs, algorithm.identifier, derBitString(signWith(key, algorithm, tbs))),
  );
  return new CertificateAuthority(cert, key.export({ type: "pkcs8", format: "pem" }) as string);
}

const requestDer = (pem: string) => pemBlocks(pem)[0]!.bytes;

/** A certificate's extensions by OID: critical or not, and the value's hex. */
function extensionsOf(der: Buffer): Map<string, { critical: boolean; value: string }> {
  const outer = derElement(der, 0, der.length, 0x30, "Certificate");
  const tbs = derElement(der, outer.contentStart, outer.end, 0x30, "TBSCertificate");
  const wrapper = derChildren(der, tbs, "TBSCertificate").find((part) => part.tag === 0xa3)!;
  const list = derElement(der, wrapper.contentStart, wrapper.end, 0x30, "Extensions");
  const found = new Map<string, { critical: boolean; value: string }>();
  for (const extension of derChildren(der, list, "Extension")) {
    const parts = derChildren(der, extension, "Extension");
    const value = parts.at(-1)!;
    found.set(objectIdentifier(der, parts[0]!), {
      critical: parts.length === 3 && der[parts[1]!.contentStart] === 0xff,
      value: der.subarray(value.contentStart, value.end).toString("hex"),
    });
  }
  return found;
}

const policy = (overrides: Partial<SigningPolicy>): SigningPolicy => ({
  ttlMs: hour,
  usages: [],
  backdateMs: 0,
  shortMs: 0,
  now,
  ...overrides,
});

describe("CertificateAuthority.sign (authority_test)", () => {
  const caKey = ecKey();
  const ca = certificateAuthority(caKey, at(-24 * hour), at(24 * hour));
  const plainRequest = requestDer(createCertificateRequest({}, ecKey()));

  it("issues as the CA: its subject as issuer, its key id as authority key id, signed by its key", () => {
    const der = ca.sign(plainRequest, policy({}));
    const cert = new X509Certificate(der);
    expect(cert.issuer).toBe("CN=test-ca");
    expect(cert.verify(createPublicKey(caKey))).toBe(true);
    expect(cert.ca).toBe(false);
    expect(new Date(cert.validFrom)).toEqual(now);
    expect(new Date(cert.validTo)).toEqual(at(hour));
    const extensions = extensionsOf(der);
    // BasicConstraints {cA: false} written as an empty SEQUENCE, critical; the authority key id as [0].
    expect(extensions.get("2.5.29.19")).toEqual({ critical: true, value: "3000" });
    expect(extensions.get("2.5.29.35")).toEqual({ critical: false, value: "30078005" + "0102030405" });
    // No key usage asked: no key usage extension, no subject key id (not a CA).
    expect([...extensions.keys()]).toEqual(["2.5.29.19", "2.5.29.35"]);
  });

  it.each([
    ["signing", { "2.5.29.15": { critical: true, value: "030207" + "80" } }],
    ["client auth", { "2.5.29.37": { critical: false, value: "300a06082b06010505070302" } }],
  ])("writes the usage %s as Go does", (usage, expected) => {
    const extensions = extensionsOf(ca.sign(plainRequest, policy({ usages: [usage] })));
    for (const [oid, value] of Object.entries(expected)) expect(extensions.get(oid)).toEqual(value);
  });

  it.each([
    ["backdate without short", { backdateMs: 5 * minute }, -5 * minute, 55 * minute],
    [
      "backdate without short and super small ttl",
      { ttlMs: minute, backdateMs: 5 * minute },
      -5 * minute,
      -4 * minute,
    ],
    ["backdate with short", { backdateMs: 5 * minute, shortMs: 8 * hour }, -5 * minute, hour],
    [
      "backdate with short and super small ttl",
      { ttlMs: minute, backdateMs: 5 * minute, shortMs: 8 * hour },
      -5 * minute,
      minute,
    ],
    [
      "backdate with short but longer ttl",
      { ttlMs: 24 * hour, backdateMs: 5 * minute, shortMs: 8 * hour },
      -5 * minute,
      24 * hour - 5 * minute,
    ],
    ["truncate expiration", { ttlMs: 48 * hour }, 0, 24 * hour],
  ])("%s", (_, overrides, notBefore, notAfter) => {
    const cert = new X509Certificate(ca.sign(plainRequest, policy(overrides)));
    expect(new Date(cert.validFrom)).toEqual(at(notBefore));
    expect(new Date(cert.validTo)).toEqual(at(notAfter));
  });

  it("copies URI subject alternative names", () => {
    const uri = "help://me@what:8080/where/when?why=true";
    const cert = new X509Certificate(
      ca.sign(requestDer(createCertificateRequest({ uris: [uri] }, ecKey())), policy({})),
    );
    expect(cert.subjectAltName).toBe(`URI:${uri}`);
  });

  it("refuses to sign once the CA has expired, with upstream's texts", () => {
    const expired = certificateAuthority(caKey, at(-24 * hour), now);
    expect(() => expired.sign(plainRequest, policy({}))).toThrow(
      "the signer has expired: NotAfter=2026-03-01 12:00:00 +0000 UTC",
    );
    expect(() => expired.sign(plainRequest, policy({ backdateMs: 5 * minute }))).toThrow(
      "refusing to sign a certificate that expired in the past: NotAfter=2026-03-01 12:00:00 +0000 UTC",
    );
  });

  it("signs a request already parsed as it signs its DER, and still checks its signature", () => {
    const parsed = readCertificateRequest(
      createCertificateRequest({ subject: { commonName: "jane" } }, ecKey()),
    );
    if (typeof parsed === "string") throw new Error(parsed);
    expect(new X509Certificate(ca.sign(parsed, policy({}))).subject).toBe("CN=jane");
    const forged = {
      ...parsed,
      subject: { ...parsed.subject },
      info: Buffer.from(parsed.info).fill(0, 10, 20),
    };
    expect(() => ca.sign(forged, policy({}))).toThrow(/^unable to verify certificate request signature: /);
  });

  it("refuses a request whose signature does not verify, and bytes that are no request", () => {
    const tampered = Buffer.from(plainRequest);
    const at = tampered.length - 5;
    tampered[at] = tampered[at]! ^ 0xff;
    expect(() => ca.sign(tampered, policy({}))).toThrow(
      "unable to verify certificate request signature: x509: ECDSA verification failure",
    );
    expect(() => ca.sign(Buffer.from([0x30, 5, 1]), policy({}))).toThrow(
      "unable to parse certificate request: asn1: syntax error: data truncated",
    );
  });

  it("refuses a key that is not the certificate's", () => {
    const cert = ca.certificatePem;
    expect(
      () => new CertificateAuthority(cert, ecKey().export({ type: "pkcs8", format: "pem" }) as string),
    ).toThrow("tls: private key does not match public key");
  });
});

describe("the certificate's subject and names, as Go writes them", () => {
  const ca = certificateAuthority(ecKey(), at(-hour), at(100 * 24 * hour));

  /** A request whose subject is written CN first, then O, then an emailAddress (as `openssl req -subj` orders them). */
  function opensslOrderedRequest(key: KeyObject): Buffer {
    const attribute = (oid: string, tag: number, value: string) =>
      tlv(0x31, derSequence(derObjectIdentifier(oid), tlv(tag, Buffer.from(value))));
    const subject = derSequence(
      attribute("2.5.4.3", 0x0c, "jane"),
      attribute("2.5.4.10", 0x0c, "devs"),
      attribute("1.2.840.113549.1.9.1", 0x16, "jane@example.com"),
    );
    const algorithm = signatureAlgorithmFor(key);
    const info = derSequence(
      tlv(0x02, Buffer.from([0])),
      subject,
      createPublicKey(key).export({ type: "spki", format: "der" }),
      tlv(0xa0),
    );
    return derSequence(info, algorithm.identifier, derBitString(signWith(key, algorithm, info)));
  }

  it("re-encodes the subject in pkix.Name's order and drops attributes it does not know", () => {
    const cert = new X509Certificate(
      ca.sign(opensslOrderedRequest(ecKey()), policy({ usages: ["client auth"] })),
    );
    expect(cert.subject).toBe("O=devs\nCN=jane");
  });

  it("signs an RSA request too, keeping its key", () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const cert = new X509Certificate(ca.sign(opensslOrderedRequest(privateKey), policy({})));
    expect(cert.publicKey.export({ type: "spki", format: "der" })).toEqual(
      publicKey.export({ type: "spki", format: "der" }),
    );
  });

  it("marks the subject alternative names critical when the subject is empty (RFC 5280 §4.2.1.6)", () => {
    const withSubject = createCertificateRequest(
      { subject: { commonName: "a" }, dnsNames: ["a.example"] },
      ecKey(),
    );
    const withoutSubject = createCertificateRequest({ dnsNames: ["a.example"] }, ecKey());
    expect(extensionsOf(ca.sign(requestDer(withSubject), policy({}))).get("2.5.29.17")?.critical).toBe(false);
    expect(extensionsOf(ca.sign(requestDer(withoutSubject), policy({}))).get("2.5.29.17")?.critical).toBe(
      true,
    );
  });

  it("issues a kubelet's request as signer_test's TestSigner expects (an RSA CA, an ECDSA request)", () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const rsaCA = certificateAuthority(privateKey, at(-hour), at(365 * 24 * hour));
    const request = createCertificateRequest(
      { subject: { commonName: "system:node:k-a-node-s36b", organization: ["system:nodes"] } },
      ecKey(),
    );
    const der = rsaCA.sign(requestDer(request), {
      ttlMs: hour,
      usages: ["signing", "key encipherment", "server auth", "client auth"],
      backdateMs: 5 * minute,
      shortMs: 8 * hour,
      now,
    });
    const cert = new X509Certificate(der);
    expect(cert.subject).toBe("O=system:nodes\nCN=system:node:k-a-node-s36b");
    expect(new Date(cert.validFrom)).toEqual(at(-5 * minute));
    expect(new Date(cert.validTo)).toEqual(at(hour));
    expect(cert.publicKey.asymmetricKeyType).toBe("ec");
    const extensions = extensionsOf(der);
    // DigitalSignature | KeyEncipherment: bits 0 and 2, five unused.
    expect(extensions.get("2.5.29.15")).toEqual({ critical: true, value: "030205a0" });
    // server auth before client auth, as Go sorts its ExtKeyUsage values.
    expect(extensions.get("2.5.29.37")?.value).toBe("301406082b0601050507030106082b06010505070302");
    // SHA-256 with RSA, with NULL parameters.
    expect(der.includes(Buffer.from("300d06092a864886f70d01010b0500", "hex"))).toBe(true);
  });
});

describe("keyUsagesFromStrings", () => {
  it("sorts the extended usages by Go's enum and merges key usage bits", () => {
    expect(keyUsagesFromStrings(["client auth", "digital signature", "signing", "any", "s/mime"])).toEqual({
      keyUsage: 1,
      extKeyUsages: ["2.5.29.37.0", "1.3.6.1.5.5.7.3.2", "1.3.6.1.5.5.7.3.4"],
    });
    expect(keyUsagesFromStrings(["decipher only"]).keyUsage).toBe(256);
  });

  it("names the usages it does not know, as Go's %q of a slice", () => {
    expect(() => keyUsagesFromStrings(["client auth", "fly", "swim"])).toThrow(
      'unrecognized usage values: ["fly" "swim"]',
    );
  });
});

describe("signer duration (Test_signer_duration)", () => {
  const caKey = ecKey();
  const ca = certificateAuthority(caKey, at(-hour), at(hour));
  const signer = new CSRSigningController({
    client: {} as never,
    csrInformer: { addEventHandler: () => undefined, hasSynced: () => true, getIndexer: () => ({}) as never },
    ca,
    certificateDurationMs: hour,
    clock: new FakeClock(now.getTime()),
  });
  it.each([
    ["can request shorter duration than TTL", 30 * 60, 30 * minute],
    ["cannot request longer duration than TTL", 3 * 3600, hour],
    ["cannot request negative duration", -60, 10 * minute],
    ["cannot request duration less than 10 mins", 10 * 60 - 1, 10 * minute],
    ["can request duration of exactly 10 mins", 10 * 60, 10 * minute],
    ["can request duration equal to the default", 3600, hour],
    ["can choose not to request a duration to get the default", undefined, hour],
  ])("%s", (_, expirationSeconds, want) => {
    expect(signer.durationFor(expirationSeconds)).toBe(want);
  });
});

describe("kubelet requests (ValidateKubeletServingCSR, ValidateKubeletClientCSR)", () => {
  const request = (template: Parameters<typeof createCertificateRequest>[0]) => {
    const parsed = readCertificateRequest(createCertificateRequest(template, ecKey()));
    if (typeof parsed === "string") throw new Error(parsed);
    return parsed;
  };
  const node = { commonName: "system:node:n1", organization: ["system:nodes"] };
  const serving = ["digital signature", "key encipherment", "server auth"];
  const client = ["digital signature", "key encipherment", "client auth"];

  it.each([
    ["fits", { subject: node, dnsNames: ["n1"] }, serving, undefined],
    [
      "fits without key encipherment (not RSA)",
      { subject: node, ipAddresses: ["1.2.3.4"] },
      ["server auth", "digital signature"],
      undefined,
    ],
    [
      "another organization",
      { subject: { ...node, organization: ["x"] }, dnsNames: ["n1"] },
      serving,
      "subject organization is not system:nodes",
    ],
    [
      "two organizations",
      { subject: { ...node, organization: ["system:nodes", "x"] }, dnsNames: ["n1"] },
      serving,
      "subject organization is not system:nodes",
    ],
    ["no DNS or IP name", { subject: node }, serving, "DNS or IP subjectAltName is required"],
    [
      "an email",
      { subject: node, dnsNames: ["n1"], emailAddresses: ["a@b"] },
      serving,
      "Email subjectAltNames are not allowed",
    ],
    [
      "a URI",
      { subject: node, dnsNames: ["n1"], uris: ["x://y"] },
      serving,
      "URI subjectAltNames are not allowed",
    ],
    [
      "client usages",
      { subject: node, dnsNames: ["n1"] },
      client,
      "usages did not match [digital signature key encipherment server auth]",
    ],
    [
      "another common name",
      { subject: { ...node, commonName: "n1" }, dnsNames: ["n1"] },
      serving,
      "subject common name does not begin with system:node:",
    ],
  ])("serving: %s", (_, template, usages, problem) => {
    expect(kubeletServingProblem(request(template), usages)).toBe(problem);
  });

  it.each([
    ["fits", { subject: node }, client, undefined],
    [
      "fits without key encipherment (not RSA)",
      { subject: node },
      ["client auth", "digital signature"],
      undefined,
    ],
    ["a DNS name", { subject: node, dnsNames: ["n1"] }, client, "DNS subjectAltNames are not allowed"],
    ["an IP", { subject: node, ipAddresses: ["1.2.3.4"] }, client, "IP subjectAltNames are not allowed"],
    ["an email", { subject: node, emailAddresses: ["a@b"] }, client, "Email subjectAltNames are not allowed"],
    [
      "another common name",
      { subject: { ...node, commonName: "jane" } },
      client,
      "subject common name does not begin with system:node:",
    ],
    [
      "serving usages",
      { subject: node },
      serving,
      "usages did not match [client auth digital signature key encipherment]",
    ],
  ])("client: %s", (_, template, usages, problem) => {
    expect(kubeletClientProblem(request(template), usages)).toBe(problem);
  });
});
