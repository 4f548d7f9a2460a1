import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  certificateRequestProblem,
  createCertificateRequest,
  derObjectIdentifier,
  derOctetString,
  derSequence,
  derSetOf,
  derTimeOf,
  derUnsignedInteger,
  ipAddressOctets,
  ipAddressText,
  marshalName,
  nameAttributeTypes,
  nameValues,
  pemBlock,
  pemBlocks,
  readCertificateRequest,
  tlv,
} from "./index.js";

// X.509 read and written as Go's crypto/x509: the bytes of names, times and
// integers as encoding/asn1 marshals them, and requests made here read back
// (and, for openssl and Go, verified by their own signatures).

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const ecKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;

describe("marshalName (pkix.Name.ToRDNSequence)", () => {
  it("writes the organization before the common name, as PrintableStrings when they fit", () => {
    const der = marshalName({ commonName: "system:node:n1", organization: ["system:nodes"] });
    const text = (value: string) => Buffer.from(value).toString("hex");
    expect(hex(der)).toBe(
      `3030${"3115301306035504" + "0a130c"}${text("system:nodes")}${"3117301506035504" + "03130e"}${text("system:node:n1")}`,
    );
  });

  it("writes a UTF8String for text a PrintableString cannot hold (@, *, &, non-ASCII)", () => {
    for (const value of ["jane@example.com", "a*b", "R&D", "Zoë"]) {
      const der = marshalName({ commonName: value });
      // SEQUENCE { SET { SEQUENCE { OID, value } } }: the value's tag follows the five-octet OID.
      expect(der[2 + 2 + 2 + 5]).toBe(0x0c);
    }
    expect(marshalName({ commonName: "it's (ok) +,-./:=?" })[11]).toBe(0x13);
  });

  it("puts all values of one type in one set, sorted, and the types in Go's order", () => {
    const name = marshalName({
      commonName: "cn",
      organizationalUnit: ["ou"],
      organization: ["zulu", "alfa"],
      country: ["DE"],
      serialNumber: "7",
    });
    const request = readCertificateRequest(
      createCertificateRequest(
        {
          subject: {
            commonName: "cn",
            organizationalUnit: ["ou"],
            organization: ["zulu", "alfa"],
            country: ["DE"],
            serialNumber: "7",
          },
        },
        ecKey(),
      ),
    );
    if (typeof request === "string") throw new Error(request);
    expect(request.subject.raw.equals(name)).toBe(true);
    const t = nameAttributeTypes;
    expect(request.subject.attributes.map((a) => a.type)).toEqual([
      t.country,
      t.organization,
      t.organization,
      t.organizationalUnit,
      t.commonName,
      t.serialNumber,
    ]);
    // DER sorts a set's members by their encoding: "alfa" before "zulu".
    expect(nameValues(request.subject, t.organization)).toEqual(["alfa", "zulu"]);
  });

  it("writes nothing for an empty name", () => {
    expect(hex(marshalName({}))).toBe("3000");
  });
});

describe("DER values as encoding/asn1 writes them", () => {
  it("writes non-negative integers minimally, with a zero octet before a high bit", () => {
    expect(hex(derUnsignedInteger(Buffer.from([0x80])))).toBe("02020080");
    expect(hex(derUnsignedInteger(Buffer.from([0, 0, 1])))).toBe("020101");
    expect(hex(derUnsignedInteger(Buffer.from([0, 0])))).toBe("020100");
    expect(hex(derUnsignedInteger(Buffer.alloc(0)))).toBe("020100");
  });

  it("writes UTCTime through 2049 and GeneralizedTime from 2050, to the second", () => {
    expect(derTimeOf(new Date("2049-12-31T23:59:59.999Z")).toString("latin1").slice(2)).toBe("491231235959Z");
    expect(derTimeOf(new Date("2049-12-31T23:59:59Z"))[0]).toBe(0x17);
    expect(derTimeOf(new Date("2050-01-01T00:00:00Z")).toString("latin1").slice(2)).toBe("20500101000000Z");
    expect(derTimeOf(new Date("2050-01-01T00:00:00Z"))[0]).toBe(0x18);
    expect(derTimeOf(new Date("1949-06-01T00:00:00Z"))[0]).toBe(0x18);
  });

  it("writes long lengths in as few octets as they need", () => {
    expect(hex(tlv(0x04, Buffer.alloc(127)).subarray(0, 2))).toBe("047f");
    expect(hex(tlv(0x04, Buffer.alloc(128)).subarray(0, 3))).toBe("048180");
    expect(hex(tlv(0x04, Buffer.alloc(256)).subarray(0, 4))).toBe("04820100");
  });

  it("writes object identifiers with multi-octet arcs", () => {
    expect(hex(derObjectIdentifier("1.2.840.113549.1.9.14"))).toBe("06092a864886f70d01090e");
    expect(hex(derObjectIdentifier("2.5.29.17"))).toBe("0603551d11");
  });

  it("round-trips PEM in 64-column lines", () => {
    const der = Buffer.alloc(100, 7);
    const text = pemBlock("CERTIFICATE", der);
    expect(text.split("\n")[1]).toHaveLength(64);
    expect(pemBlocks(text)).toEqual([{ type: "CERTIFICATE", headers: [], bytes: der }]);
  });
});

describe("IP addresses", () => {
  it.each([
    ["10.0.0.1", "0a000001", "10.0.0.1"],
    ["::1", "00000000000000000000000000000001", "::1"],
    ["2001:db8::8a2e:370:7334", "20010db80000000000008a2e03707334", "2001:db8::8a2e:370:7334"],
    ["::ffff:1.2.3.4".replace("1.2.3.4", "102:304"), "00000000000000000000ffff01020304", "1.2.3.4"],
    ["1:0:0:1:0:0:0:1", "00010000000000010000000000000001", "1:0:0:1::1"],
  ])("reads %s as Go's net.ParseIP and writes it back as net.IP.String", (text, octets, back) => {
    const read = ipAddressOctets(text);
    expect(read === undefined ? undefined : hex(read)).toBe(octets);
    expect(ipAddressText(Buffer.from(octets, "hex"))).toBe(back);
  });

  it("refuses what is not an address", () => {
    for (const text of ["256.0.0.1", "1.2.3", "1::2::3", "1:2:3:4:5:6:7", "12345::", "host"])
      expect(ipAddressOctets(text)).toBeUndefined();
  });
});

describe("createCertificateRequest (x509.CreateCertificateRequest)", () => {
  it.each([
    ["ECDSA P-256", () => ecKey()],
    ["ECDSA P-384", () => generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey],
    ["RSA", () => generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey],
    ["Ed25519", () => generateKeyPairSync("ed25519").privateKey],
  ])("makes a request signed with an %s key that reads back whole", (_, key) => {
    const pem = createCertificateRequest(
      {
        subject: { commonName: "system:node:n1", organization: ["system:nodes"] },
        dnsNames: ["n1.example"],
        ipAddresses: ["10.0.0.1", "::ffff:a00:2", "fd00::1"],
        emailAddresses: ["ops@example.com"],
        uris: ["spiffe://cluster/ns/a"],
      },
      key(),
    );
    expect(certificateRequestProblem(pem)).toBeUndefined();
    const request = readCertificateRequest(pem);
    if (typeof request === "string") throw new Error(request);
    expect(request.dnsNames).toEqual(["n1.example"]);
    expect(request.emailAddresses).toEqual(["ops@example.com"]);
    // An IPv4-mapped address is written in four octets, as Go writes it.
    expect(request.ipAddresses.map(ipAddressText)).toEqual(["10.0.0.1", "10.0.0.2", "fd00::1"]);
    expect(request.uris).toEqual(["spiffe://cluster/ns/a"]);
    expect(nameValues(request.subject, nameAttributeTypes.organization)).toEqual(["system:nodes"]);
  });

  it("writes an empty attribute set when nothing is asked beyond the subject", () => {
    const pem = createCertificateRequest({ subject: { commonName: "jane" } }, ecKey());
    const der = pemBlocks(pem)[0]!.bytes;
    expect(der.includes(Buffer.from([0xa0, 0x00]))).toBe(true);
    const request = readCertificateRequest(pem);
    expect(typeof request === "string" ? request : request.dnsNames).toEqual([]);
  });

  it("refuses an IP address it cannot read", () => {
    expect(() => createCertificateRequest({ ipAddresses: ["10.0.0"] }, ecKey())).toThrow(
      'x509: invalid IP address "10.0.0"',
    );
  });
});

describe("readCertificateRequest (x509.ParseCertificateRequest)", () => {
  /** A request whose extension request holds `altNames` (the signature is not checked here). */
  function requestWithAltNames(altNames: Buffer): string {
    const extension = derSequence(derObjectIdentifier("2.5.29.17"), derOctetString(altNames));
    const attributes = tlv(
      0xa0,
      derSequence(derObjectIdentifier("1.2.840.113549.1.9.14"), derSetOf([derSequence(extension)])),
    );
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const info = derSequence(
      tlv(0x02, Buffer.from([0])),
      derSequence(),
      publicKey.export({ type: "spki", format: "der" }),
      attributes,
    );
    const der = derSequence(
      info,
      derSequence(derObjectIdentifier("1.2.840.10045.4.3.2")),
      tlv(0x03, Buffer.from([0])),
    );
    return pemBlock("CERTIFICATE REQUEST", der);
  }

  it("refuses an IP address of another length than 4 or 16, with Go's text", () => {
    const pem = requestWithAltNames(derSequence(tlv(0x87, Buffer.from([1, 2, 3, 4, 5]))));
    expect(readCertificateRequest(pem)).toBe("x509: cannot parse IP address of length 5");
    expect(certificateRequestProblem(pem)).toBe("x509: cannot parse IP address of length 5");
  });

  it("refuses a DNS name that is not IA5, with Go's text", () => {
    const pem = requestWithAltNames(derSequence(tlv(0x82, Buffer.from("zoë.example", "utf8"))));
    expect(readCertificateRequest(pem)).toBe("x509: SAN dNSName is malformed");
  });

  it("passes over kinds of name it does not keep (a directory name)", () => {
    const pem = requestWithAltNames(
      derSequence(tlv(0xa4, derSequence()), tlv(0x82, Buffer.from("a.example"))),
    );
    const request = readCertificateRequest(pem);
    expect(typeof request === "string" ? request : request.dnsNames).toEqual(["a.example"]);
  });
});
