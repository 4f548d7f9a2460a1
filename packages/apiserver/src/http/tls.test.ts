import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pods } from "@reconcile/api";
import { HttpClient, loadKubeConfig } from "@reconcile/client";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { kubeconfigFor } from "./kubeconfig.js";
import { listen } from "./server.js";
import { generateServingCertificates, randomSerial } from "./tls.js";

describe("generateServingCertificates", () => {
  it("issues a CA and a serving certificate for the loopback names that the CA verifies", async () => {
    const notBefore = new Date("2026-01-01T00:00:00Z");
    const { ca, serving } = await generateServingCertificates({ notBefore, caCommonName: "test-ca" });
    const caCert = new X509Certificate(ca.cert);
    const leaf = new X509Certificate(serving.cert);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toBe("CN=test-ca");
    expect(leaf.ca).toBe(false);
    expect(leaf.issuer).toBe("CN=test-ca");
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    expect(leaf.checkHost("localhost")).toBe("localhost");
    expect(leaf.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(leaf.checkHost("example.com")).toBeUndefined();
    expect(new Date(leaf.validFrom).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(new Date(leaf.validTo).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(serving.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it("draws serial numbers OpenSSL reads, whatever the random octets (never two leading zero octets, never negative)", () => {
    const certificateWithSerial = (serial: string) => {
      const keys = forge.pki.rsa.generateKeyPair(512);
      const cert = forge.pki.createCertificate();
      cert.publicKey = keys.publicKey;
      cert.serialNumber = serial;
      cert.validity.notBefore = new Date("2026-01-01T00:00:00Z");
      cert.validity.notAfter = new Date("2027-01-01T00:00:00Z");
      cert.setSubject([{ name: "commonName", value: "x" }]);
      cert.setIssuer([{ name: "commonName", value: "x" }]);
      cert.sign(keys.privateKey);
      return forge.pki.certificateToPem(cert);
    };
    // What the octets 00 00 11 … used to become: forge keeps one needless zero, and OpenSSL refuses it.
    expect(() => new X509Certificate(certificateWithSerial(`0000${"11".repeat(14)}`))).toThrow(
      "illegal padding",
    );
    expect(randomSerial(Buffer.alloc(16))).toBe(`40${"00".repeat(15)}`);
    expect(randomSerial(Buffer.alloc(16, 0xff))).toBe(`7f${"ff".repeat(15)}`);
    const serial = randomSerial(Buffer.from(`0000${"11".repeat(14)}`, "hex"));
    expect(new X509Certificate(certificateWithSerial(serial)).serialNumber).toBe(serial.toUpperCase());
  });

  it("serves HTTPS that a client trusting only the CA accepts, and one trusting another CA refuses", async () => {
    const { ca, serving } = await generateServingCertificates();
    const other = await generateServingCertificates();
    const server = https.createServer({ cert: serving.cert, key: serving.key }, (_request, response) => {
      response.end("ok");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const get = (trusted: string) =>
      new Promise<string>((resolve, reject) => {
        https
          .get(`https://127.0.0.1:${port}/`, { ca: trusted }, (response) => {
            let body = "";
            response.on("data", (chunk) => {
              body += chunk;
            });
            response.on("end", () => resolve(body));
          })
          .on("error", reject);
      });
    try {
      await expect(get(ca.cert)).resolves.toBe("ok");
      await expect(get(other.ca.cert)).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("gives a kubeconfig with certificate-authority-data and the token that HttpClient verifies the server with", async () => {
    const { ca, serving } = await generateServingCertificates();
    let authorization: string | undefined;
    const server = https.createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
      authorization = request.headers.authorization;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default" } }),
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      const yaml = kubeconfigFor({
        server: `https://127.0.0.1:${port}`,
        token: "s3cret",
        certificateAuthority: ca.cert,
      });
      expect(yaml).toContain(`certificate-authority-data: ${Buffer.from(ca.cert).toString("base64")}`);
      expect(yaml).not.toContain("insecure-skip-tls-verify");
      const client = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml }) });
      const pod = await client.resource(pods, "default").get("p");
      expect(pod.metadata?.name).toBe("p");
      expect(authorization).toBe("Bearer s3cret");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("listen({ tls: true })", () => {
  it("serves HTTPS with a generated CA that the kubeconfig carries, and kubectl authenticates with the token", async () => {
    const api = new ApiServer();
    const server = await listen(api, { tls: true, token: "t0ken" });
    const home = await mkdtemp(join(tmpdir(), "reconcile-tls-"));
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(server.certificateAuthority).toMatch(/^-----BEGIN CERTIFICATE-----/);
      const kubeconfig = join(home, "kubeconfig");
      await writeFile(kubeconfig, server.kubeconfig());
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
      const kubectl = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          // stdin closed at once: a 401 makes kubectl prompt for a username otherwise.
          execFile(
            "kubectl",
            ["--request-timeout=20s", ...args],
            { env, timeout: 30_000 },
            (error, stdout, stderr) => {
              resolve({
                code: error ? (typeof error.code === "number" ? error.code : 1) : 0,
                stdout,
                stderr,
              });
            },
          ).stdin?.end();
        });
      const listed = await kubectl(["get", "namespace", "default", "-o", "name"]);
      expect(listed).toEqual({ code: 0, stdout: "namespace/default\n", stderr: "" });
      const client = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml: server.kubeconfig() }) });
      expect((await client.resource(pods, "default").list()).items).toEqual([]);
      // Without the token, the request is anonymous, and RBAC gives system:anonymous no pods.
      const anonymous = kubeconfigFor({
        server: server.url,
        certificateAuthority: server.certificateAuthority,
      });
      const stranger = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml: anonymous }) });
      await expect(stranger.resource(pods, "default").list()).rejects.toMatchObject({
        status: { code: 403, reason: "Forbidden" },
      });
    } finally {
      await server.close();
      await api.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
