import { ApiServer } from "@reconcile/apiserver";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CachedStorage } from "./cacher.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";
import { silenceableProxy } from "./proxy.test-util.js";

let etcd: EtcdCluster;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await etcd?.stop();
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe("the API server's health over etcd", () => {
  it("fails /healthz, /livez and /readyz on etcd's check while etcd does not answer, and times requests out with 504", async () => {
    const proxy = await silenceableProxy(new URL(etcd.endpoints[0]!));
    cleanups.push(() => proxy.close());
    const storage = new CachedStorage({
      storage: new EtcdStorage({
        endpoints: [proxy.url],
        prefix: "/health-test",
        compactionIntervalMs: 0,
        requestTimeoutMs: 400,
        healthCheckTimeoutMs: 200,
      }),
    });
    const server = new ApiServer({ storage, garbageCollection: false });
    const http = await server.listen();
    cleanups.push(() => server.close());

    expect(await get(`${http.url}/readyz`)).toEqual({ status: 200, body: "ok" });
    expect(await get(`${http.url}/readyz?verbose`)).toEqual({
      status: 200,
      body: "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\nreadyz check passed\n",
    });
    expect((await get(`${http.url}/api/v1/namespaces/default/configmaps`)).status).toBe(200);

    proxy.silence();
    expect(await get(`${http.url}/readyz`)).toEqual({
      status: 500,
      body: "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n",
    });
    expect(await get(`${http.url}/livez`)).toEqual({
      status: 500,
      body: "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nlivez check failed\n",
    });
    expect((await get(`${http.url}/healthz`)).status).toBe(500);
    const one = await get(`${http.url}/readyz/etcd`);
    expect(one.status).toBe(500);
    expect(one.body).toMatch(
      /^internal server error: Timeout: request did not complete within requested timeout/,
    );
    expect(await get(`${http.url}/readyz/ping`)).toEqual({ status: 200, body: "ok" });

    const read = await fetch(`${http.url}/api/v1/namespaces/default/configmaps/missing`);
    expect(read.status).toBe(504);
    expect(await read.json()).toMatchObject({
      kind: "Status",
      reason: "Timeout",
      code: 504,
    });
  });

  it("has no etcd check on a server in memory", async () => {
    const server = new ApiServer();
    const http = await server.listen();
    cleanups.push(() => server.close());
    expect(await get(`${http.url}/healthz?verbose`)).toEqual({
      status: 200,
      body: "[+]ping ok\n[+]log ok\nhealthz check passed\n",
    });
    expect(await get(`${http.url}/healthz/etcd`)).toEqual({ status: 404, body: "404 page not found\n" });
  });
});
