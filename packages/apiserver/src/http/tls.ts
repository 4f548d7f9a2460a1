import { generateKeyPair, randomBytes, sign } from "node:crypto";
import { promisify } from "node:util";
import forge from "node-forge";
import { frontProxyClientName } from "./auth/request-header.js";
/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

/** What {@link generateServingCertificates} returns: the CA and a serving certificate it signed. */
export interface ServingCertificates {
  /** The self-signed CA, as a kubeconfig's `certificate-authority-data` carries it (PEM). */
  ca: CertificateAndKey;
  /** The serving certificate (PEM, the leaf only) and its key, for `https.createServer`. */
  serving: CertificateAndKey;
}

export interface ServingCertificateOptions {
  /** DNS names in the serving certificate. Default `["localhost"]`. */
  dnsNames?: readonly string[] | undefined;
  /** IP addresses in the serving certificate. Default `["127.0.0.1", "::1"]`. */
  ipAddresses?: readonly string[] | undefined;
  /** The time the certificates start being valid. Default: now, less one hour (clock skew). */
  notBefore?: Date | undefined;
  /**
   * How long both certificates are valid, in days. Default 365, as kube-apiserver's
   * self-signed serving certificate (`GenerateSelfSignedCertKey`) is valid for a year.
   */
  validityDays?: number | undefined;
  /** The CA's common name. Default `reconcile-ca@<unix seconds>`, as kube-apiserver names its own. */
  caCommonName?: string | undefined;
}

/**
 * A CA and a serving certificate for the loopback names and addresses, generated
 * fresh (RSA 2048, keys made by Node's own crypto). kube-apiserver, given no
 * certificate, does the same for itself (`GenerateSelfSignedCertKey`: a
 * `<host>-ca@<time>` CA signing `<host>@<time>`), so a client can pin the CA
 * instead of skipping verification.
 */
export async function generateServingCertificates(
  options: ServingCertificateOptions = {},
): Promise<ServingCertificates> {
  const notBefore = options.notBefore ?? new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(notBefore.getTime() + (options.validityDays ?? 365) * 24 * 60 * 60 * 1000);
  const stamp = Math.floor(notBefore.getTime() / 1000);
  const dnsNames = options.dnsNames ?? ["localhost"];
  const ipAddresses = options.ipAddresses ?? ["127.0.0.1", "::1"];

  // Both keys at once, off the event loop (RSA key generation takes a while).
  const [caKeys, servingKeys] = await Promise.all([newKeyPair(), newKeyPair()]);
  const { caCert, caSubject } = selfSignedCA(
    options.caCommonName ?? `reconcile-ca@${stamp}`,
    caKeys,
    notBefore,
    notAfter,
  );

  const servingCert = forge.pki.createCertificate();
  servingCert.publicKey = servingKeys.publicKey;
  servingCert.serialNumber = randomSerial();
  servingCert.validity.notBefore = notBefore;
  servingCert.validity.notAfter = notAfter;
  servingCert.setSubject([
    {
      name: "commonName",
      value: `${dnsNames[0] ?? ipAddresses[0] ?? "localhost"}@${stamp}`,
      valueTagClass: utf8,
    },
  ]);
  servingCert.setIssuer(caSubject);
  servingCert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: [
        ...dnsNames.map((value) => ({ type: 2, value })),
        ...ipAddresses.map((ip) => ({ type: 7, ip })),
      ],
    },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signCertificate(servingCert, caKeys.privateKeyPem);

  return {
    ca: { cert: forge.pki.certificateToPem(caCert), key: caKeys.privateKeyPem },
    serving: { cert: forge.pki.certificateToPem(servingCert), key: servingKeys.privateKeyPem },
  };
}

/** A self-signed CA certificate named `commonName`, for `keys`. */
function selfSignedCA(
  commonName: string,
  keys: { publicKey: forge.pki.rsa.PublicKey; privateKeyPem: string },
  notBefore: Date,
  notAfter: Date,
): { caCert: forge.pki.Certificate; caSubject: forge.pki.CertificateField[] } {
  const caSubject = [{ name: "commonName", value: commonName, valueTagClass: utf8 }];
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = keys.publicKey;
  caCert.serialNumber = randomSerial();
  caCert.validity.notBefore = notBefore;
  caCert.validity.notAfter = notAfter;
  caCert.setSubject(caSubject);
  caCert.setIssuer(caSubject);
  caCert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  signCertificate(caCert, keys.privateKeyPem);
  return { caCert, caSubject };
}

/** The front proxy's CA and the client certificate the API server passes requests on to aggregated servers with. */
export interface FrontProxyCertificates {
  /** `front-proxy-ca`: what aggregated servers trust as `requestheader-client-ca-file`. */
  ca: CertificateAndKey;
  /** `front-proxy-client`, signed by `ca`, for client authentication (kube-apiserver's `--proxy-client-cert-file`). */
  client: CertificateAndKey;
}

/** A front-proxy CA and its client certificate, named as kubeadm names them, valid for `validityDays` (365). */
export async function generateFrontProxyCertificates(validityDays = 365): Promise<FrontProxyCertificates> {
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(notBefore.getTime() + validityDays * 24 * 60 * 60 * 1000);
  const keys = await newKeyPair();
  const { caCert } = selfSignedCA("front-proxy-ca", keys, notBefore, notAfter);
  const ca = { cert: forge.pki.certificateToPem(caCert), key: keys.privateKeyPem };
  return { ca, client: await issueClientCertificate(ca, { username: frontProxyClientName, validityDays }) };
}

/** Names are UTF8String: Go's x509 (kubectl) refuses "@" in the default PrintableString. */
const utf8 = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;

/**
 * Signs with Node's crypto (SHA-256 with RSA): forge's own RSA is pure
 * JavaScript and takes a second or more per signature on a busy machine.
 */
function signCertificate(cert: forge.pki.Certificate, privateKeyPem: string): void {
  const algorithm = forge.pki.oids.sha256WithRSAEncryption!;
  cert.signatureOid = algorithm;
  cert.siginfo.algorithmOid = algorithm;
  const tbs = forge.asn1.toDer(tbsCertificate(cert)).getBytes();
  cert.signature = sign("sha256", Buffer.from(tbs, "binary"), privateKeyPem).toString("binary");
}

/** Node's native key generation: forge's own is pure JavaScript and takes seconds. */
async function newKeyPair(): Promise<{ publicKey: forge.pki.rsa.PublicKey; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateRsaKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    privateKeyPem: privateKey,
  };
}

const generateRsaKeyPair = promisify(generateKeyPair);

/** forge's `pki.getTBSCertificate`, which its type definitions leave out. */
const tbsCertificate = (
  forge.pki as unknown as { getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1 }
).getTBSCertificate;

/**
 * A positive serial number of 16 random octets, hex (RFC 5280: at most 20
 * octets, positive). The first octet is kept in 0x40–0x7f: forge drops only
 * one leading zero octet from the hex it is given, so a serial starting with
 * two (and then an octet below 0x80) became a DER INTEGER with needless
 * padding, which OpenSSL refuses ("illegal padding"); with its top bit set,
 * the number would read as negative.
 */
export function randomSerial(bytes: Buffer = randomBytes(16)): string {
  bytes[0] = ((bytes[0] ?? 0) & 0x3f) | 0x40;
  return bytes.toString("hex");
}

/** Who a client certificate names: its CN is the user, each O a group (as kube-apiserver reads them). */
export interface ClientCertificateSubject {
  username: string;
  groups?: readonly string[] | undefined;
  /** Default 365. */
  validityDays?: number | undefined;
}

/**
 * A client certificate and key signed by `ca`, for a kubeconfig's
 * `client-certificate-data`/`client-key-data`, as kubeadm makes them.
 */
export async function issueClientCertificate(
  ca: CertificateAndKey,
  subject: ClientCertificateSubject,
): Promise<CertificateAndKey> {
  const keys = await newKeyPair();
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = new Date(
    notBefore.getTime() + (subject.validityDays ?? 365) * 24 * 60 * 60 * 1000,
  );
  cert.setSubject([
    ...(subject.groups ?? []).map((value) => ({ name: "organizationName", value, valueTagClass: utf8 })),
    { name: "commonName", value: subject.username, valueTagClass: utf8 },
  ]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", clientAuth: true },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signCertificate(cert, ca.key);
  return { cert: forge.pki.certificateToPem(cert), key: keys.privateKeyPem };
}
