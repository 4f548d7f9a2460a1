import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../kubeconfig/load.js";
import { HttpClient } from "./http-client.js";

// Test-only certificates (EC P-256, valid for 100 years): a CA, a server certificate for 127.0.0.1,
// and a client certificate for CN=alice, O=devs, all signed by the CA.
const pem = {
  ca: "-----BEGIN CERTIFICATE-----\nMIIBjjCCATWgAwIBAgIUCNtxRpTrNmlA+xWqi7wpdr2lZG4wCgYIKoZIzj0EAwIw\nHDEaMBgGA1UEAwwRcmVjb25jaWxlLXRlc3QtY2EwIBcNMjYxMTIyMTg0MzUyWhgP\nMjEyNjEwMjkxODQzNTJaMBwxGjAYBgNVBAMMEXJlY29uY2lsZS10ZXN0LWNhMFkw\nEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWhvRaEu/wRgAuIAferkGQvGc/kcaxAFZ\nxIqd1EGLRshorNzinbOw+5++zfB4f6slP0P6gT0ZHp9hwNBUj+QXwqNTMFEwHQYD\nVR0OBBYEFIZ2dJowLxVwDCvsz9Fz0fL8G7wkMB8GA1UdIwQYMBaAFIZ2dJowLxVw\nDCvsz9Fz0fL8G7wkMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIg\nVpsXeDHh5Va++KaKtWUp6hlZL0rVJH0mVWTdU/qWCQwCIBln1CK85EXOpqIJvS2j\nUz6IzKxjWwaSfkCS5LgBeCuZ\n-----END CERTIFICATE-----\n",
  serverCert:
    "-----BEGIN CERTIFICATE-----\nMIIBhzCCAS2gAwIBAgIUbRk4TMfe88a6e8ga/KtK+u2eh1YwCgYIKoZIzj0EAwIw\nHDEaMBgGA1UEAwwRcmVjb25jaWxlLXRlc3QtY2EwIBcNMjYxMTIyMTg0MzUyWhgP\nMjEyNjEwMjkxODQzNTJaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49\nAgEGCCqGSM49AwEHA0IABFRhEMzPnt7TUvF+/AhEdHLGcHcwK2GzMJJEFWwNDv5+\ntwss1Gx7gylXAhBh0HffwAeXZwtJvYI8YE+FiXdiFcCjUzBRMA8GA1UdEQQIMAaH\nBH8AAAEwHQYDVR0OBBYEFB4VRUBmMBSGt9Env/bzCWJVv59JMB8GA1UdIwQYMBaA\nFIZ2dJowLxVwDCvsz9Fz0fL8G7wkMAoGCCqGSM49BAMCA0gAMEUCICoipfGE9BJZ\nJVW1HQbEnsC0zdPhxp23XjQx9eggNOAaAiEA4RZY2MM1hZDA3WnKssuqXstV3AnC\nipIVcvXaetT0bVw=\n-----END CERTIFICATE-----\n",
  serverKey:
    "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg4s3qikOEcas5zXsF\nCcwtBlGdhueJD0iswLCqmbR/b/ahRANCAARUYRDMz57e01LxfvwIRHRyxnB3MCth\nszCSRBVsDQ7+frcLLNRse4MpVwIQYdB338AHl2cLSb2CPGBPhYl3YhXA\n-----END PRIVATE KEY-----\n",
  clientCert:
    "-----BEGIN CERTIFICATE-----\nMIIBODCB3gIUbRk4TMfe88a6e8ga/KtK+u2eh1cwCgYIKoZIzj0EAwIwHDEaMBgG\nA1UEAwwRcmVjb25jaWxlLXRlc3QtY2EwIBcNMjYxMTIyMTg0MzUyWhgPMjEyNjEw\nMjkxODQzNTJaMB8xDjAMBgNVBAMMBWFsaWNlMQ0wCwYDVQQKDARkZXZzMFkwEwYH\nKoZIzj0CAQYIKoZIzj0DAQcDQgAEUgdo2n6weAxtw8A4upjl4J3mZ+7mMcztvmJM\no09fX5rJJ2B7Pb1NSGP932FhODy/vW3vJsBcuQSqVQiQjD3LZDAKBggqhkjOPQQD\nAgNJADBGAiEAqXaBMTojv+KTaQOBEKYAH/mnLb/bhhrtrZ0AH4eHb/wCIQDTqENP\nIVqw7EhGVal21m2Pqv/P5Phg0cBrR+YjaCZCGg==\n-----END CERTIFICATE-----\n",
  clientKey:
    "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgcMEUJhA5VFGWs6Dm\nE5y+Z+AyGCRH6/Q0nrY1Jfd1ZxehRANCAARSB2jafrB4DG3DwDi6mOXgneZn7uYx\nzO2+YkyjT19fmsknYHs9vU1IY/3fYWE4PL+9be8mwFy5BKpVCJCMPctk\n-----END PRIVATE KEY-----\n",
};

const servers: https.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("HttpClient over TLS", () => {
  it("trusts the kubeconfig's CA and presents its client certificate", async () => {
    const server = https.createServer(
      { cert: pem.serverCert, key: pem.serverKey, ca: pem.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as import("node:tls").TLSSocket).getPeerCertificate();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            metadata: { name: "p", annotations: { user: peer.subject.CN, org: peer.subject.O } },
          }),
        );
      },
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kubeConfig = await loadKubeConfig({
      yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}", certificate-authority-data: ${b64(pem.ca)}}}]
users: [{name: u, user: {client-certificate-data: ${b64(pem.clientCert)}, client-key-data: ${b64(pem.clientKey)}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    });
    const client = new HttpClient({ kubeConfig });
    const pod = await client.resource(pods, "default").get("p");
    expect(pod.metadata?.annotations).toEqual({ user: "alice", org: "devs" });
    client.close();
  });

  it("refuses a server whose certificate the kubeconfig's CA did not sign", async () => {
    const server = https.createServer({ cert: pem.serverCert, key: pem.serverKey }, (_req, res) =>
      res.end("{}"),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kubeConfig = await loadKubeConfig({
      yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    });
    const client = new HttpClient({ kubeConfig, maxRetries: 0 });
    await expect(client.resource(pods, "default").get("p")).rejects.toThrow(
      /unable to reach the API server at https:\/\/127\.0\.0\.1:\d+: .*certificate/,
    );
    client.close();
  });

  it("says a write may have been applied only once the TLS handshake completed", async () => {
    let posts = 0;
    const server = https.createServer({ cert: pem.serverCert, key: pem.serverKey }, (req, res) => {
      req.resume();
      req.on("end", () => {
        posts++;
        // The write is applied; the connection goes away before any answer.
        res.socket?.destroy();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clientFor = async (trustCa: boolean) =>
      new HttpClient({
        kubeConfig: await loadKubeConfig({
          yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}"${trustCa ? `, certificate-authority-data: ${b64(pem.ca)}` : ""}}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
        }),
      });
    const untrusting = await clientFor(false);
    await expect(untrusting.resource(pods, "default").create({ metadata: { name: "p" } })).rejects.toThrow(
      /unable to reach the API server at https:\/\/127\.0\.0\.1:\d+: .*certificate/,
    );
    expect(posts).toBe(0);
    untrusting.close();
    const trusting = await clientFor(true);
    await expect(trusting.resource(pods, "default").create({ metadata: { name: "p" } })).rejects.toThrow(
      "the server may have processed it, so it was not sent again",
    );
    expect(posts).toBe(1);
    trusting.close();
  });
});
