// The certificate controllers on the embedded API server and a FakeClock:
// kubectl's approval turns into a certificate that kubectl can then log in
// with, a kubelet's request is approved after a SubjectAccessReview, and old
// requests are cleaned up.
import { execFile } from "node:child_process";
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { certificateSigningRequests, clusterRoleBindings, type KubeObject, rfc3339 } from "@reconcile/api";
import { createCertificateRequest } from "@reconcile/api/x509";
import { ApiServer, generateServingCertificates, listen } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { CSRApprovingController } from "./approver.js";
import { CertificateAuthority } from "./authority.js";
import { CSRCleanerController, cleanupReason } from "./cleaner.js";
import type { CSR } from "./helpers.js";
import { CSRSigningController } from "./signer.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const start = Date.parse("2026-03-01T12:00:00Z");
const hour = 60 * 60 * 1000;
const ecKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const b64 = (text: string) => Buffer.from(text, "latin1").toString("base64");

/** A cluster with a CA (valid from an hour before `start` for a year) and the given controllers running. */
async function cluster(run: { signer?: boolean; approver?: boolean }) {
  const clock = new FakeClock(start);
  const certificates = await generateServingCertificates({ notBefore: new Date(start - hour) });
  const api = new ApiServer({ clock });
  const admin = api.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client: admin, clock });
  const runs: Promise<void>[] = [];
  if (run.signer ?? true)
    runs.push(
      CSRSigningController.fromInformerFactory(factory, { client: admin, clock, ca: certificates.ca }).run({
        signal: abort.signal,
      }),
    );
  if (run.approver)
    runs.push(
      CSRApprovingController.fromInformerFactory(factory, { client: admin, clock }).run({
        signal: abort.signal,
      }),
    );
  factory.start(abort.signal);
  cleanups.push(async () => {
    abort.abort();
    await Promise.all(runs);
    await factory.shutdown();
    await api.close();
  });
  return { api, admin, clock, certificates };
}

function request(name: string, pem: string, spec: Partial<CSR["spec"]> = {}): CSR {
  return {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: b64(pem),
      signerName: "kubernetes.io/kube-apiserver-client",
      usages: ["client auth"],
      ...spec,
    },
  } as CSR;
}

async function approve(client: Client, name: string, at: number): Promise<void> {
  const csrs = client.resource(certificateSigningRequests);
  const current = (await csrs.get(name)) as CSR;
  await csrs.update(
    {
      ...current,
      status: {
        conditions: [
          {
            type: "Approved",
            status: "True",
            reason: "KubectlApprove",
            message: "",
            lastUpdateTime: rfc3339(at),
          },
        ],
      },
    },
    { subresource: "approval" },
  );
}

/** The request `name` once `done` holds of it (the controllers work on event-loop turns, not on the clock). */
async function until(client: Client, name: string, done: (csr: CSR) => boolean): Promise<CSR> {
  for (let turn = 0; turn < 5_000; turn++) {
    const csr = (await client.resource(certificateSigningRequests).get(name)) as CSR;
    if (done(csr)) return csr;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${name} never reached the state waited for`);
}

const issued = (csr: CSR) => (csr.status?.certificate ?? "") !== "";
const certificateOf = (csr: CSR) => new X509Certificate(Buffer.from(csr.status!.certificate!, "base64"));

describe("CSRSigningController", () => {
  it("issues an approved kube-apiserver-client request: the subject asked, the CA as issuer, the life asked", async () => {
    const { admin, clock, certificates } = await cluster({});
    const csrs = admin.resource(certificateSigningRequests);
    const pem = createCertificateRequest(
      { subject: { commonName: "jane", organization: ["devs"] } },
      ecKey(),
    );
    await csrs.create(
      request("jane", pem, { usages: ["digital signature", "client auth"], expirationSeconds: 86400 }),
    );
    await approve(admin, "jane", clock.now());
    const signed = await until(admin, "jane", issued);
    const cert = certificateOf(signed);
    expect(cert.subject).toBe("O=devs\nCN=jane");
    expect(cert.checkIssued(new X509Certificate(certificates.ca.cert))).toBe(true);
    expect(cert.verify(new X509Certificate(certificates.ca.cert).publicKey)).toBe(true);
    // Backdated five minutes, and a life of 24 h shortened by the backdate (24 h is not short).
    expect(new Date(cert.validFrom).getTime()).toBe(start - 5 * 60_000);
    expect(new Date(cert.validTo).getTime()).toBe(start + 24 * hour - 5 * 60_000);
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(signed.status?.conditions?.map((c) => c.type)).toEqual(["Approved"]);
  });

  it("caps a certificate at the CA's own end", async () => {
    const { admin, clock, certificates } = await cluster({});
    await admin
      .resource(certificateSigningRequests)
      .create(request("long", createCertificateRequest({ subject: { commonName: "long" } }, ecKey())));
    await approve(admin, "long", clock.now());
    const cert = certificateOf(await until(admin, "long", issued));
    expect(cert.validTo).toBe(new X509Certificate(certificates.ca.cert).validTo);
  });

  it("marks a request its signer refuses as Failed with the reason, and issues nothing", async () => {
    const { admin, clock } = await cluster({});
    const pem = createCertificateRequest({ subject: { commonName: "web" } }, ecKey());
    await admin
      .resource(certificateSigningRequests)
      .create(request("web", pem, { usages: ["server auth", "client auth"] }));
    await approve(admin, "web", clock.now());
    const failed = await until(admin, "web", (csr) => (csr.status?.conditions ?? []).length === 2);
    expect(failed.status?.conditions?.[1]).toEqual({
      type: "Failed",
      status: "True",
      reason: "SignerValidationFailure",
      message: "invalid usage for client certificate: server auth",
      lastUpdateTime: rfc3339(start),
      lastTransitionTime: rfc3339(start),
    });
    expect(failed.status?.certificate).toBeUndefined();
  });

  it("issues a kubelet serving certificate with its names, and leaves pending, denied and other signers' requests alone", async () => {
    const { admin, clock } = await cluster({});
    const csrs = admin.resource(certificateSigningRequests);
    const node = { commonName: "system:node:n1", organization: ["system:nodes"] };
    await csrs.create(
      request(
        "serving",
        createCertificateRequest({ subject: node, dnsNames: ["n1"], ipAddresses: ["10.0.0.1"] }, ecKey()),
        {
          signerName: "kubernetes.io/kubelet-serving",
          usages: ["digital signature", "server auth"],
        },
      ),
    );
    const plain = createCertificateRequest({ subject: { commonName: "x" } }, ecKey());
    await csrs.create(request("pending", plain));
    await csrs.create(request("other", plain, { signerName: "example.com/signer" }));
    await approve(admin, "other", clock.now());
    await approve(admin, "serving", clock.now());
    const cert = certificateOf(await until(admin, "serving", issued));
    expect(cert.subjectAltName).toBe("DNS:n1, IP Address:10.0.0.1");
    for (const name of ["pending", "other"]) expect(issued((await csrs.get(name)) as CSR)).toBe(false);
  });
});

describe("CSRApprovingController", () => {
  it("approves a kubelet's own client request once RBAC allows selfnodeclient, and the signer issues it", async () => {
    const { api, admin, clock } = await cluster({ approver: true });
    const bind = (name: string, role: string, subject: { kind: string; name: string }) =>
      admin.resource(clusterRoleBindings).create({
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", ...subject }],
      } as never);
    await bind("node-bootstrapper", "system:node-bootstrapper", { kind: "Group", name: "system:nodes" });
    const kubelet = api.client({
      user: { username: "system:node:n1", groups: ["system:nodes", "system:authenticated"] },
    });
    const pem = createCertificateRequest(
      { subject: { commonName: "system:node:n1", organization: ["system:nodes"] } },
      ecKey(),
    );
    await kubelet.resource(certificateSigningRequests).create(
      request("node-csr", pem, {
        signerName: "kubernetes.io/kube-apiserver-client-kubelet",
        usages: ["digital signature", "client auth"],
      }),
    );
    // Recognized, but no one may approve it yet: it stays pending and is retried with backoff.
    for (let i = 0; i < 3; i++) await clock.advance(1_000);
    expect(
      ((await admin.resource(certificateSigningRequests).get("node-csr")) as CSR).status?.conditions,
    ).toBeUndefined();

    await bind(
      "auto-approve-renewals",
      "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
      {
        kind: "Group",
        name: "system:nodes",
      },
    );
    let approved: CSR | undefined;
    for (let i = 0; i < 20 && approved === undefined; i++) {
      await clock.advance(2_000);
      const csr = (await admin.resource(certificateSigningRequests).get("node-csr")) as CSR;
      if (issued(csr)) approved = csr;
    }
    expect(
      approved?.status?.conditions?.map(({ type, reason, message }) => ({ type, reason, message })),
    ).toEqual([
      {
        type: "Approved",
        reason: "AutoApproved",
        message: "Auto approving self kubelet client certificate after SubjectAccessReview.",
      },
    ]);
    expect(certificateOf(approved!).subject).toBe("O=system:nodes\nCN=system:node:n1");
  });

  it("leaves requests that are not a kubelet's client request alone", async () => {
    const { admin, clock } = await cluster({ approver: true, signer: false });
    const pem = createCertificateRequest(
      { subject: { commonName: "system:node:n1", organization: ["system:nodes"] } },
      ecKey(),
    );
    // The kubelet client signer, but serving usages: not recognized, so not even reviewed.
    await admin.resource(certificateSigningRequests).create(
      request("odd", pem, {
        signerName: "kubernetes.io/kube-apiserver-client-kubelet",
        usages: ["server auth", "digital signature"],
      }),
    );
    for (let i = 0; i < 3; i++) await clock.advance(1_000);
    expect(
      ((await admin.resource(certificateSigningRequests).get("odd")) as CSR).status?.conditions,
    ).toBeUndefined();
  });
});

describe("CSRCleanerController (cleaner_test)", () => {
  const ca = (async () => {
    const { ca } = await generateServingCertificates({
      notBefore: new Date(start - 48 * hour),
      validityDays: 30,
    });
    return new CertificateAuthority(ca.cert, ca.key);
  })();
  const now = start;
  const ago = (ms: number) => rfc3339(now - ms);
  async function certificate(notAfterFromNow: number): Promise<string> {
    const der = (await ca).sign(
      Buffer.from(
        createCertificateRequest({ subject: { commonName: "c" } }, ecKey())
          .split("\n")
          .slice(1, -2)
          .join(""),
        "base64",
      ),
      {
        ttlMs: 2 * hour,
        usages: ["client auth"],
        backdateMs: 0,
        shortMs: 0,
        now: new Date(now + notAfterFromNow - 2 * hour),
      },
    );
    return b64(`-----BEGIN CERTIFICATE-----\n${der.toString("base64")}\n-----END CERTIFICATE-----\n`);
  }
  const csr = (created: number, status: CSR["status"]): CSR =>
    ({ metadata: { name: "c", creationTimestamp: ago(created) }, spec: {}, status }) as unknown as CSR;
  const condition = (type: string, at: number) => ({ type, status: "True", lastUpdateTime: ago(at) });

  it.each([
    ["no delete approved not passed deadline", 5, "Approved", 5, hour, false],
    ["no delete approved passed deadline not issued", 120, "Approved", 120, undefined, false],
    ["delete approved passed deadline", 120, "Approved", 120, hour, true],
    ["no delete denied not passed deadline", 5, "Denied", 5, undefined, false],
    ["delete denied passed deadline", 120, "Denied", 120, undefined, true],
    ["no delete failed not passed deadline", 5, "Failed", 5, undefined, false],
    ["delete failed passed deadline", 120, "Failed", 120, undefined, true],
    ["no delete pending not passed deadline", 5 * 60, undefined, 0, undefined, false],
    ["delete pending passed deadline", 25 * 60, undefined, 0, undefined, true],
    ["no delete approved not passed deadline unexpired", 5, "Approved", 5, hour, false],
    ["delete approved not passed deadline expired", 5, "Approved", 5, -hour, true],
  ] as const)("%s", async (_, createdMinutes, type, conditionMinutes, certificateLife, deleted) => {
    const status: CSR["status"] = {
      ...(type === undefined ? {} : { conditions: [condition(type, conditionMinutes * 60_000)] }),
      ...(certificateLife === undefined ? {} : { certificate: await certificate(certificateLife) }),
    };
    expect(cleanupReason(csr(createdMinutes * 60_000, status), now) !== undefined).toBe(deleted);
  });

  it("deletes through the API on its hourly pass", async () => {
    const clock = new FakeClock(start);
    const api = new ApiServer({ clock });
    const admin = api.client();
    const abort = new AbortController();
    const factory = new SharedInformerFactory({ client: admin, clock });
    const cleaner = CSRCleanerController.fromInformerFactory(factory, { client: admin, clock });
    factory.start(abort.signal);
    const running = cleaner.run({ signal: abort.signal });
    cleanups.push(async () => {
      abort.abort();
      await running;
      await factory.shutdown();
      await api.close();
    });
    const pem = createCertificateRequest({ subject: { commonName: "old" } }, ecKey());
    await admin.resource(certificateSigningRequests).create(request("old", pem));
    const names = async () =>
      (await admin.resource(certificateSigningRequests).list()).items.map(
        (item: KubeObject) => item.metadata?.name,
      );
    expect(await names()).toEqual(["old"]);
    // Pending requests go after a day; the pass runs every hour.
    for (let h = 0; h < 24; h++) await clock.advance(hour);
    expect(await names()).toEqual(["old"]);
    for (let i = 0; i < 2; i++) await clock.advance(hour);
    expect(await names()).toEqual([]);
  });
});

describe("kubectl certificate approve, end to end", () => {
  it("gives a certificate kubectl then authenticates with", async () => {
    const { api, admin, certificates } = await cluster({});
    const server = await listen(api, {
      token: "t0ken",
      tls: { ...certificates.serving, ca: certificates.ca.cert, caKey: certificates.ca.key },
    });
    const home = await mkdtemp(join(tmpdir(), "reconcile-csr-"));
    cleanups.push(async () => {
      await server.close();
      await rm(home, { recursive: true, force: true });
    });
    const kubectl = (kubeconfig: string, args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          "kubectl",
          ["--request-timeout=20s", ...args],
          { env: { PATH: process.env.PATH ?? "", HOME: home, KUBECONFIG: kubeconfig } },
          (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
        );
      });
    const adminConfig = join(home, "admin");
    await writeFile(adminConfig, server.kubeconfig());
    const key = ecKey();
    const csrFile = join(home, "jane.json");
    await writeFile(
      csrFile,
      JSON.stringify(
        request(
          "jane",
          createCertificateRequest({ subject: { commonName: "jane", organization: ["devs"] } }, key),
        ),
      ),
    );
    expect((await kubectl(adminConfig, ["create", "-f", csrFile])).stdout).toBe(
      "certificatesigningrequest.certificates.k8s.io/jane created\n",
    );
    expect((await kubectl(adminConfig, ["certificate", "approve", "jane"])).stdout).toBe(
      "certificatesigningrequest.certificates.k8s.io/jane approved\n",
    );
    await until(admin, "jane", issued);
    const listed = await kubectl(adminConfig, ["get", "csr", "jane", "--no-headers"]);
    expect(listed.stdout.trim().split(/\s+/).at(-1)).toBe("Approved,Issued");
    const certificate = await kubectl(adminConfig, [
      "get",
      "csr",
      "jane",
      "-o",
      "jsonpath={.status.certificate}",
    ]);
    const janeConfig = join(home, "jane");
    await writeFile(
      janeConfig,
      server.kubeconfig({
        clientCertificate: {
          cert: Buffer.from(certificate.stdout, "base64").toString("latin1"),
          key: key.export({ type: "pkcs8", format: "pem" }) as string,
        },
      }),
    );
    const whoami = await kubectl(janeConfig, [
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username} {.status.userInfo.groups}",
    ]);
    expect(whoami).toEqual({ code: 0, stdout: 'jane ["devs","system:authenticated"]', stderr: "" });
  });
});
