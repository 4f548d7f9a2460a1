import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import {
  certificateSigningRequests,
  clusterRoleBindings,
  clusterRoles,
  type KubeObject,
  StatusError,
} from "@reconcile/api";
import { certificateChainProblem, certificateRequestProblem } from "@reconcile/api/x509";
import { FakeClock } from "@reconcile/clock";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.js";
import forge from "node-forge";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// certificates.k8s.io/v1 CertificateSigningRequests: the requester recorded
// from the request, the PKCS #10 request checked down to its signature,
// approval through /approval and issuance through /status, with upstream's
// validation texts (pkg/apis/certificates/validation).

afterEach(closeKubectlClusters);

type CSR = CertificateSigningRequest & KubeObject;

/** DER, built by hand so the tests own every byte of the requests they send. */
function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  const length = n < 128 ? [n] : n < 256 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const bytes = [a! * 40 + b!];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const pem = (type: string, der: Buffer) =>
  `-----BEGIN ${type}-----\n${der
    .toString("base64")
    .match(/.{1,64}/g)!
    .join("\n")}\n-----END ${type}-----\n`;

/** A PKCS #10 request for `cn` in `organizations`, signed with an ECDSA P-256 key (as a kubelet makes them). */
function ecdsaRequest(cn: string, organizations: string[] = [], key?: KeyObject): string {
  const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const attribute = (type: string, value: string) =>
    tlv(0x31, tlv(0x30, oid(type), tlv(0x0c, Buffer.from(value))));
  const subject = tlv(0x30, ...organizations.map((o) => attribute("2.5.4.10", o)), attribute("2.5.4.3", cn));
  const info = tlv(
    0x30,
    tlv(0x02, Buffer.from([0])),
    subject,
    pair.publicKey.export({ type: "spki", format: "der" }),
    Buffer.from([0xa0, 0]),
  );
  const signature = sign("sha256", info, { key: key ?? pair.privateKey, dsaEncoding: "der" });
  const der = tlv(0x30, info, tlv(0x30, oid("1.2.840.10045.4.3.2")), tlv(0x03, Buffer.from([0]), signature));
  return pem("CERTIFICATE REQUEST", der);
}

/** An RSA request, as `openssl req` makes them (node-forge signs it). */
function rsaRequest(cn: string): string {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }) as string);
  csr.setSubject([{ name: "commonName", value: cn }]);
  csr.sign(
    forge.pki.privateKeyFromPem(privateKey.export({ type: "pkcs1", format: "pem" }) as string),
    forge.md.sha256.create(),
  );
  return forge.pki.certificationRequestToPem(csr);
}

/** A self-signed certificate, as a signer would put in `status.certificate`. */
function certificate(): string {
  const keys = forge.pki.rsa.generateKeyPair(1024);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date("2026-01-01T00:00:00Z");
  cert.validity.notAfter = new Date("2027-01-01T00:00:00Z");
  cert.setSubject([{ name: "commonName", value: "jane" }]);
  cert.setIssuer([{ name: "commonName", value: "ca" }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

function csr(name: string, request: string, spec: Partial<CSR["spec"]> = {}): CSR {
  return {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: b64(request),
      signerName: "kubernetes.io/kube-apiserver-client",
      usages: ["client auth"],
      ...spec,
    },
  } as CSR;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: number; causes: string[] }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof StatusError)) throw error;
    const causes = (error.status.details?.causes ?? []).map((cause) => `${cause.field}: ${cause.message}`);
    return { code: error.status.code ?? 0, causes };
  }
  throw new Error("the write was accepted");
}

function server() {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-03-01T12:00:00Z")) });
  return { api, csrs: api.client().resource(certificateSigningRequests) };
}

describe("the request's PEM", () => {
  it("accepts ECDSA and RSA requests whose signatures verify", () => {
    expect(certificateRequestProblem(ecdsaRequest("jane", ["dev"]))).toBeUndefined();
    expect(certificateRequestProblem(rsaRequest("joe"))).toBeUndefined();
  });

  it("names what is wrong: the block type, the DER, the signature", () => {
    expect(certificateRequestProblem("")).toBe("PEM block type must be CERTIFICATE REQUEST");
    expect(certificateRequestProblem(pem("CERTIFICATE", Buffer.from([0x30, 0])))).toBe(
      "PEM block type must be CERTIFICATE REQUEST",
    );
    expect(certificateRequestProblem(pem("CERTIFICATE REQUEST", Buffer.from([0x30, 5, 1])))).toBe(
      "asn1: syntax error: data truncated",
    );
    expect(certificateRequestProblem(pem("CERTIFICATE REQUEST", Buffer.from([0x02, 1, 0])))).toBe(
      "asn1: structure error: tags don't match (CertificationRequest: want 48, got 2)",
    );
    const stranger = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    expect(certificateRequestProblem(ecdsaRequest("jane", [], stranger))).toBe(
      "x509: ECDSA verification failure",
    );
  });

  it("reads PEM in one pass: many BEGIN lines without an END are passed over, the block after them found", () => {
    const unterminated = "-----BEGIN CERTIFICATE REQUEST-----\n".repeat(60_000);
    expect(certificateRequestProblem(unterminated)).toBe("PEM block type must be CERTIFICATE REQUEST");
    expect(certificateRequestProblem(unterminated + ecdsaRequest("jane"))).toBeUndefined();
    expect(
      certificateChainProblem("-----BEGIN CERTIFICATE-----\n".repeat(60_000) + certificate()),
    ).toBeUndefined();
    // Bodies that are not base64 for another reason are read whole: after a hundred, reading stops.
    const garbage = "-----BEGIN CERTIFICATE REQUEST-----\n!\n-----END CERTIFICATE REQUEST-----\n";
    expect(certificateRequestProblem(garbage.repeat(101) + ecdsaRequest("jane"))).toBe(
      "PEM block type must be CERTIFICATE REQUEST",
    );
    expect(certificateRequestProblem(garbage.repeat(100) + ecdsaRequest("jane"))).toBeUndefined();
    expect(
      certificateChainProblem("-----BEGIN CERTIFICATE-----\n".repeat(60_000) + certificate()),
    ).toBeUndefined();
  });

  it("checks an issued chain: CERTIFICATE blocks only, each parseable", () => {
    expect(certificateChainProblem("")).toBeUndefined();
    expect(certificateChainProblem(certificate() + certificate())).toBeUndefined();
    expect(certificateChainProblem("junk")).toBe("must contain at least one CERTIFICATE PEM block");
    expect(certificateChainProblem(ecdsaRequest("x"))).toBe(
      'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    );
    expect(certificateChainProblem(pem("CERTIFICATE", Buffer.from([1, 2, 3])))).toBe(
      "x509: malformed certificate",
    );
  });
});

describe("CertificateSigningRequest validation", () => {
  it("refuses a request that is not PEM, printing its bytes as Go does", async () => {
    const { api, csrs } = server();
    try {
      expect(await refusal(csrs.create(csr("bad", "-.")))).toEqual({
        code: 422,
        causes: [
          "spec.request: Invalid value: []byte{0x2d, 0x2e}: PEM block type must be CERTIFICATE REQUEST",
        ],
      });
    } finally {
      await api.close();
    }
  });

  it("checks usages, duration and signer name as upstream", async () => {
    const { api, csrs } = server();
    const request = ecdsaRequest("jane");
    try {
      expect(await refusal(csrs.create(csr("a", request, { usages: [] })))).toEqual({
        code: 422,
        causes: ["spec.usages: Required value"],
      });
      expect(
        await refusal(
          csrs.create(
            csr("b", request, { usages: ["client auth", "flying", "client auth"], expirationSeconds: 60 }),
          ),
        ),
      ).toEqual({
        code: 422,
        causes: [
          "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)",
          expect.stringMatching(
            /^spec\.usages\[1\]: Unsupported value: "flying": supported values: "any", "cert sign", /,
          ),
          'spec.usages[2]: Duplicate value: "client auth"',
        ],
      });
      expect(await refusal(csrs.create(csr("c", request, { signerName: "" })))).toEqual({
        code: 422,
        causes: ["spec.signerName: Required value"],
      });
      expect(await refusal(csrs.create(csr("d", request, { signerName: "example" })))).toEqual({
        code: 422,
        causes: [
          `spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
        ],
      });
      expect(await refusal(csrs.create(csr("e", request, { signerName: "example/x" })))).toEqual({
        code: 422,
        causes: [
          'spec.signerName: Invalid value: "example/x": should be a domain with at least two segments separated by dots',
        ],
      });
      expect(
        await refusal(csrs.create(csr("f", request, { signerName: "kubernetes.io/legacy-unknown" }))),
      ).toEqual({
        code: 422,
        causes: [
          'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
        ],
      });
    } finally {
      await api.close();
    }
  });
});

describe("CertificateSigningRequest writes", () => {
  it("a create clears what a client may not set; an update changes neither spec nor status", async () => {
    const { api, csrs } = server();
    try {
      const sent = csr("jane", ecdsaRequest("jane"), { username: "root", groups: ["system:masters"] });
      (sent as { status?: unknown }).status = { conditions: [{ type: "Approved", status: "True" }] };
      const created = await csrs.create(sent);
      expect(created.spec.username).toBeUndefined();
      expect(created.spec.groups).toBeUndefined();
      expect(created.status).toEqual({});
      const updated = await csrs.update({
        ...created,
        metadata: { ...created.metadata, labels: { team: "a" } },
        spec: { ...created.spec, usages: ["server auth"] },
        status: { conditions: [{ type: "Approved", status: "True" }] },
      } as CSR);
      expect(updated.metadata?.labels).toEqual({ team: "a" });
      expect(updated.spec.usages).toEqual(["client auth"]);
      expect(updated.status).toEqual({});
    } finally {
      await api.close();
    }
  });

  it("approval sets conditions only, stamped with the server's time; Approved stays and excludes Denied", async () => {
    const { api, csrs } = server();
    try {
      const created = await csrs.create(csr("jane", ecdsaRequest("jane")));
      const approved = await csrs.update(
        {
          ...created,
          spec: { ...created.spec, usages: ["server auth"] },
          status: {
            certificate: b64(certificate()),
            conditions: [{ type: "Approved", status: "", reason: "AutoApproved", message: "ok" }],
          },
        } as CSR,
        { subresource: "approval" },
      );
      expect(approved.spec.usages).toEqual(["client auth"]);
      expect(approved.status).toEqual({
        conditions: [
          {
            type: "Approved",
            status: "True",
            reason: "AutoApproved",
            message: "ok",
            lastUpdateTime: "2026-03-01T12:00:00Z",
            lastTransitionTime: "2026-03-01T12:00:00Z",
          },
        ],
      });
      const both = {
        ...approved,
        status: { conditions: [...approved.status!.conditions!, { type: "Denied", status: "True" }] },
      } as CSR;
      expect(await refusal(csrs.update(both, { subresource: "approval" }))).toEqual({
        code: 422,
        causes: [
          "status.conditions: Invalid value: []certificates.CertificateSigningRequestCondition{" +
            'certificates.CertificateSigningRequestCondition{Type:"Approved", Status:"True", Reason:"AutoApproved", Message:"ok", ' +
            "LastUpdateTime:time.Date(2026, time.March, 1, 12, 0, 0, 0, time.Local), LastTransitionTime:time.Date(2026, time.March, 1, 12, 0, 0, 0, time.Local)}, " +
            'certificates.CertificateSigningRequestCondition{Type:"Denied", Status:"True", Reason:"", Message:"", ' +
            "LastUpdateTime:time.Date(2026, time.March, 1, 12, 0, 0, 0, time.Local), LastTransitionTime:time.Date(2026, time.March, 1, 12, 0, 0, 0, time.Local)}" +
            "}: Approved and Denied conditions are mutually exclusive",
        ],
      });
      expect(
        await refusal(csrs.update({ ...approved, status: {} } as CSR, { subresource: "approval" })),
      ).toEqual({
        code: 422,
        causes: ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"'],
      });
      const denied = { ...approved, status: { conditions: [{ type: "Denied", status: "False" }] } } as CSR;
      expect((await refusal(csrs.update(denied, { subresource: "approval" }))).causes).toEqual([
        'status.conditions[0].status: Unsupported value: "False": supported values: "True"',
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
      ]);
    } finally {
      await api.close();
    }
  });

  it("issuance through /status keeps the approval and the spec; the certificate may not change once set", async () => {
    const { api, csrs } = server();
    try {
      const created = await csrs.create(csr("jane", ecdsaRequest("jane")));
      const approved = await csrs.update(
        { ...created, status: { conditions: [{ type: "Approved", status: "True" }] } } as CSR,
        { subresource: "approval" },
      );
      expect(
        await refusal(
          csrs.updateStatus({ ...approved, status: { ...approved.status, certificate: b64("junk") } } as CSR),
        ),
      ).toEqual({
        code: 422,
        causes: [
          'status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block',
        ],
      });
      const issued = await csrs.updateStatus({
        ...approved,
        // A status write may not drop the approval: it is kept as stored.
        status: {
          certificate: b64(certificate()),
          conditions: [{ type: "Approved", status: "True", reason: "Changed" }],
        },
      } as CSR);
      expect(issued.status?.conditions).toEqual(approved.status?.conditions);
      expect(issued.status?.certificate).toBeTruthy();
      expect(
        await refusal(
          csrs.updateStatus({
            ...issued,
            status: { ...issued.status, certificate: b64(certificate()) },
          } as CSR),
        ),
      ).toEqual({
        code: 422,
        causes: [
          'status.certificate: Invalid value: "<certificate data>": updates may not modify existing certificate',
        ],
      });
    } finally {
      await api.close();
    }
  });
});

describe("what a CertificateSigningRequest's subresources own", () => {
  it("a patch through /approval sets the conditions, owned there; /status owns the certificate and never the conditions", async () => {
    const { api, csrs } = server();
    try {
      const created = await csrs.create(csr("jane", ecdsaRequest("jane")));
      const approved = await csrs.patch(
        created.metadata!.name!,
        {
          spec: { usages: ["server auth"] },
          status: {
            conditions: [{ type: "Approved", status: "True", reason: "Approved" }],
            certificate: "eA==",
          },
        },
        { type: "merge", subresource: "approval", fieldManager: "approver" },
      );
      // Only the conditions changed, stamped with the server's time.
      expect(approved.spec).toEqual(created.spec);
      expect(approved.status).toEqual({
        conditions: [
          {
            type: "Approved",
            status: "True",
            reason: "Approved",
            lastUpdateTime: "2026-03-01T12:00:00Z",
            lastTransitionTime: "2026-03-01T12:00:00Z",
          },
        ],
      });
      const issued = await csrs.updateStatus(
        {
          ...approved,
          status: {
            certificate: b64(certificate()),
            conditions: [...approved.status!.conditions!, { type: "Failed", status: "False" }],
          },
        } as CSR,
        { fieldManager: "signer" },
      );
      const owned = Object.fromEntries(
        (issued.metadata?.managedFields ?? []).map((entry) => [
          `${entry.manager}/${entry.subresource ?? ""}`,
          entry.fieldsV1,
        ]),
      );
      expect(owned["approver/approval"]).toEqual({
        "f:status": {
          "f:conditions": {
            ".": {},
            'k:{"type":"Approved"}': {
              ".": {},
              "f:lastTransitionTime": {},
              "f:lastUpdateTime": {},
              "f:reason": {},
              "f:status": {},
              "f:type": {},
            },
          },
        },
      });
      expect(owned["signer/status"]).toEqual({ "f:status": { "f:certificate": {} } });
    } finally {
      await api.close();
    }
  });
});

describe("kubectl and CertificateSigningRequests", () => {
  it("records the requester, prints upstream's columns, approves and denies", async () => {
    const { kubectl, file } = await kubectlCluster(
      { clock: new FakeClock(Date.now()) },
      { token: "t0ken", tls: true },
    );
    const manifest = (name: string, seconds?: number) =>
      JSON.stringify(
        csr(name, ecdsaRequest(name), seconds === undefined ? {} : { expirationSeconds: seconds }),
      );
    expect((await kubectl(["create", "-f", await file("a.json", manifest("jane", 86400))])).stdout).toBe(
      "certificatesigningrequest.certificates.k8s.io/jane created\n",
    );
    expect((await kubectl(["create", "-f", await file("b.json", manifest("joe"))])).code).toBe(0);
    const listed = await kubectl(["get", "csr"]);
    expect(
      listed.stdout
        .trimEnd()
        .split("\n")
        .map((line) => line.split(/\s+/).map((cell) => (/^\d+s$/.test(cell) ? "<age>" : cell))),
    ).toEqual([
      ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"],
      ["jane", "<age>", "kubernetes.io/kube-apiserver-client", "reconcile-admin", "24h", "Pending"],
      ["joe", "<age>", "kubernetes.io/kube-apiserver-client", "reconcile-admin", "<none>", "Pending"],
    ]);
    expect(await kubectl(["certificate", "approve", "jane"])).toEqual({
      code: 0,
      stdout: "certificatesigningrequest.certificates.k8s.io/jane approved\n",
      stderr: "",
    });
    expect((await kubectl(["certificate", "deny", "joe"])).stdout).toBe(
      "certificatesigningrequest.certificates.k8s.io/joe denied\n",
    );
    const conditions = await kubectl([
      "get",
      "csr",
      "-o",
      "custom-columns=NAME:.metadata.name,TYPE:.status.conditions[*].type,REASON:.status.conditions[*].reason",
    ]);
    expect(conditions.stdout).toBe(
      "NAME   TYPE       REASON\njane   Approved   KubectlApprove\njoe    Denied     KubectlDeny\n",
    );
    expect(
      (
        await kubectl([
          "get",
          "csr",
          "--field-selector=spec.signerName=kubernetes.io/kube-apiserver-client",
          "-o",
          "name",
        ])
      ).stdout,
    ).toBe(
      "certificatesigningrequest.certificates.k8s.io/jane\ncertificatesigningrequest.certificates.k8s.io/joe\n",
    );
  });
});

describe("the certificates admission plugins", () => {
  async function withUser(
    rules: { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames?: string[] }[],
  ) {
    const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-03-01T12:00:00Z")) });
    const admin = api.client();
    await admin.resource(clusterRoles).create({ metadata: { name: "csr-user" }, rules } as never);
    await admin.resource(clusterRoleBindings).create({
      metadata: { name: "csr-user" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "csr-user" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
    } as never);
    return { api, jane: api.client({ user: { username: "jane" } }).resource(certificateSigningRequests) };
  }
  const requests = {
    verbs: ["create", "get", "update"],
    apiGroups: ["certificates.k8s.io"],
    resources: [
      "certificatesigningrequests",
      "certificatesigningrequests/approval",
      "certificatesigningrequests/status",
    ],
  };
  const forbiddenMessage = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof StatusError) return `${error.status.code} ${error.status.message}`;
      throw error;
    }
    throw new Error("the write was accepted");
  };

  it("CertificateApproval and CertificateSigning ask the authorizer for approve and sign on the signer", async () => {
    const { api, jane } = await withUser([requests]);
    try {
      const created = await jane.create(csr("mine", ecdsaRequest("jane")));
      expect(created.spec.username).toBe("jane");
      const approve = { ...created, status: { conditions: [{ type: "Approved", status: "True" }] } } as CSR;
      expect(await forbiddenMessage(jane.update(approve, { subresource: "approval" }))).toBe(
        '403 certificatesigningrequests.certificates.k8s.io "mine" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
      );
      const issue = { ...created, status: { certificate: b64(certificate()) } } as CSR;
      expect(await forbiddenMessage(jane.updateStatus(issue))).toBe(
        '403 certificatesigningrequests.certificates.k8s.io "mine" is forbidden: user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"',
      );
      // A status write that leaves the certificate alone needs no sign permission.
      await jane.updateStatus({
        ...created,
        status: { conditions: [{ type: "Example", status: "True" }] },
      } as CSR);
    } finally {
      await api.close();
    }
  });

  it("the signer's own name or its domain's wildcard grants them", async () => {
    const { api, jane } = await withUser([
      requests,
      {
        verbs: ["approve"],
        apiGroups: ["certificates.k8s.io"],
        resources: ["signers"],
        resourceNames: ["kubernetes.io/*"],
      },
      {
        verbs: ["sign"],
        apiGroups: ["certificates.k8s.io"],
        resources: ["signers"],
        resourceNames: ["kubernetes.io/kube-apiserver-client"],
      },
    ]);
    try {
      const created = await jane.create(csr("mine", ecdsaRequest("jane")));
      const approved = await jane.update(
        { ...created, status: { conditions: [{ type: "Approved", status: "True" }] } } as CSR,
        { subresource: "approval" },
      );
      const issued = await jane.updateStatus({
        ...approved,
        status: { ...approved.status, certificate: b64(certificate()) },
      } as CSR);
      expect(issued.status?.certificate).toBeTruthy();
    } finally {
      await api.close();
    }
  });

  it("CertificateSubjectRestriction keeps system:masters away from the kube-apiserver-client signer", async () => {
    const { api, csrs } = server();
    try {
      expect(
        await forbiddenMessage(csrs.create(csr("root", ecdsaRequest("root", ["dev", "system:masters"])))),
      ).toBe(
        '403 certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
      );
      const other = await csrs.create(
        csr("other", ecdsaRequest("root", ["system:masters"]), { signerName: "example.com/signer" }),
      );
      expect(other.metadata?.name).toBe("other");
      expect((await csrs.create(csr("dev", ecdsaRequest("jane", ["dev"])))).metadata?.name).toBe("dev");
    } finally {
      await api.close();
    }
  });
});
