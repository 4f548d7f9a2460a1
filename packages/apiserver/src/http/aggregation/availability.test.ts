import * as https from "node:https";
import type { AddressInfo } from "node:net";
import type { APIService } from "@reconcile/api";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateServingCertificates } from "../tls.js";
import { discoveryAttempts, firstPassing, serviceVerdict, withAvailable } from "./availability.js";
import { probeBackend } from "./backend.js";
import { remoteDiscovery } from "./discovery.js";
import { ResolveError, resolveServiceEndpoint } from "./resolve.js";

// kube-aggregator's remote availability controller (`TestSync` of its
// available_controller_test.go, v1.32) and the endpoint resolution of
// `--enable-aggregator-routing`.

const testServicePort = 1234;
const testServicePortName = "testPort";

const remoteAPIService: APIService = {
  metadata: { name: "remote.group" },
  spec: {
    group: "group",
    version: "remote",
    groupPriorityMinimum: 1,
    versionPriority: 1,
    service: { namespace: "foo", name: "bar", port: testServicePort },
  },
};

function newService(namespace: string, name: string, port: number, portName: string): Service {
  return {
    metadata: { namespace, name },
    spec: { type: "ClusterIP", ports: [{ port, name: portName }] },
  };
}

function newEndpoints(namespace: string, name: string): Endpoints {
  return { metadata: { namespace, name } };
}

function newEndpointsWithAddress(namespace: string, name: string, port: number, portName: string): Endpoints {
  return {
    metadata: { namespace, name },
    subsets: [{ addresses: [{ ip: "val" }], ports: [{ name: portName, port }] }],
  };
}

describe("the availability of a remote APIService before its server is asked (TestSync)", () => {
  const cases: [string, Service | undefined, Endpoints | undefined, object | undefined][] = [
    [
      "no service",
      undefined,
      undefined,
      { status: "False", reason: "ServiceNotFound", message: 'service/bar in "foo" is not present' },
    ],
    [
      "service on bad port",
      { metadata: { namespace: "foo", name: "bar" }, spec: { type: "ClusterIP", ports: [{ port: 6443 }] } },
      newEndpointsWithAddress("foo", "bar", testServicePort, testServicePortName),
      {
        status: "False",
        reason: "ServicePortError",
        message: `service/bar in "foo" is not listening on port ${testServicePort}`,
      },
    ],
    [
      "no endpoints",
      newService("foo", "bar", testServicePort, testServicePortName),
      undefined,
      {
        status: "False",
        reason: "EndpointsNotFound",
        message: 'cannot find endpoints for service/bar in "foo"',
      },
    ],
    [
      "missing endpoints",
      newService("foo", "bar", testServicePort, testServicePortName),
      newEndpoints("foo", "bar"),
      {
        status: "False",
        reason: "MissingEndpoints",
        message: 'endpoints for service/bar in "foo" have no addresses with port name "testPort"',
      },
    ],
    [
      "wrong endpoint port name",
      newService("foo", "bar", testServicePort, testServicePortName),
      newEndpointsWithAddress("foo", "bar", testServicePort, "wrongName"),
      {
        status: "False",
        reason: "MissingEndpoints",
        message: 'endpoints for service/bar in "foo" have no addresses with port name "testPort"',
      },
    ],
    [
      "remote",
      newService("foo", "bar", testServicePort, testServicePortName),
      newEndpointsWithAddress("foo", "bar", testServicePort, testServicePortName),
      undefined,
    ],
    [
      "an ExternalName service is asked at once",
      {
        metadata: { namespace: "foo", name: "bar" },
        spec: { type: "ExternalName", externalName: "example.com" },
      },
      undefined,
      undefined,
    ],
  ];
  it.each(cases)("%s", (_name, service, endpoints, verdict) => {
    expect(serviceVerdict(remoteAPIService, service, endpoints)).toEqual(verdict);
  });
});

describe("the discovery check", () => {
  let server: https.Server;
  let port = 0;
  beforeAll(async () => {
    const { serving } = await generateServingCertificates();
    server = https.createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
      const status = Number((request.url ?? "").split("/")[1]);
      if (status === 302) response.setHeader("Location", "/test");
      response.writeHead(status, { "Content-Type": "application/json" });
      response.end(status === 200 ? '{"resources":[]}' : "");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("passes on a 2xx answer and keeps its body", async () => {
    expect(await probeBackend({ host: "127.0.0.1", port }, "/200", 5_000)).toEqual({
      body: '{"resources":[]}',
    });
  });

  it.each([403, 302, 304])("fails on %i, a redirect not followed", async (status) => {
    const url = `https://127.0.0.1:${port}/${status}`;
    expect(await probeBackend({ host: "127.0.0.1", port }, `/${status}`, 5_000)).toEqual({
      failure: `bad status from ${url}: ${status}`,
    });
  });

  it("fails with the connection's error when nothing listens", async () => {
    const closed = https.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await probeBackend({ host: "127.0.0.1", port: freePort }, "/apis/g/v", 5_000)).toEqual({
      failure: `Get "https://127.0.0.1:${freePort}/apis/g/v": connect ECONNREFUSED 127.0.0.1:${freePort}`,
    });
  });
});

describe("the five discovery checks made at once", () => {
  /** Tries whose results the test settles, in the order it chooses. */
  function tries() {
    const settle: ((ok: boolean) => void)[] = [];
    const attempt = () => {
      const i = settle.length;
      return new Promise<{ i: number; ok: boolean }>((resolve) => {
        settle.push((ok) => resolve({ i, ok }));
      });
    };
    return { attempt, settle };
  }

  it("makes five, and passes as soon as one passes", async () => {
    const { attempt, settle } = tries();
    const result = firstPassing(discoveryAttempts, attempt, (r) => r.ok);
    expect(settle).toHaveLength(5);
    // Three fail first; the fourth to settle passes, and the one still out does not count.
    for (const i of [3, 1, 0]) settle[i]!(false);
    settle[4]!(true);
    expect(await result).toEqual({ i: 4, ok: true });
    settle[2]!(false);
  });

  it("fails with the failure that came last when none passes", async () => {
    const { attempt, settle } = tries();
    const result = firstPassing(discoveryAttempts, attempt, (r) => r.ok);
    for (const i of [2, 0, 4, 3, 1]) settle[i]!(false);
    expect(await result).toEqual({ i: 1, ok: false });
  });

  it("rejects when a try throws before anything settled", async () => {
    await expect(
      firstPassing(
        2,
        () => Promise.reject(new Error("resolver broke")),
        () => true,
      ),
    ).rejects.toThrow("resolver broke");
  });
});

describe("the Available condition (SetAPIServiceCondition)", () => {
  const passed = { status: "True", reason: "Passed", message: "all checks passed" } as const;
  const failed = { status: "False", reason: "MissingEndpoints", message: "none" } as const;

  it("is added with the time now when absent, beside other conditions", () => {
    expect(withAvailable([{ type: "Other", status: "True" }], passed, "T1")).toEqual([
      { type: "Other", status: "True" },
      { type: "Available", ...passed, lastTransitionTime: "T1" },
    ]);
  });

  it("keeps its transition time while its status holds, and moves it when the status changes", () => {
    const before = [{ type: "Available", ...failed, lastTransitionTime: "T1" }];
    const stillFalse = { status: "False", reason: "FailedDiscoveryCheck", message: "down" } as const;
    expect(withAvailable(before, stillFalse, "T2")).toEqual([
      { type: "Available", ...stillFalse, lastTransitionTime: "T1" },
    ]);
    expect(withAvailable(before, passed, "T3")).toEqual([
      { type: "Available", ...passed, lastTransitionTime: "T3" },
    ]);
  });
});

describe("resolving an aggregated server's Service (ResolveEndpoint)", () => {
  const service = newService("foo", "bar", 443, "https");
  const resolve = (s: Service | undefined, e: Endpoints | undefined, port = 443) => {
    try {
      return resolveServiceEndpoint(s, e, "bar", port, () => 0);
    } catch (error) {
      if (error instanceof ResolveError) return error.message;
      throw error;
    }
  };

  it("picks a ready address of a subset carrying the port's name, with that subset's port", () => {
    const endpoints: Endpoints = {
      metadata: { namespace: "foo", name: "bar" },
      subsets: [
        { addresses: [{ ip: "10.0.0.1" }], ports: [{ name: "metrics", port: 9090 }] },
        { addresses: [{ ip: "10.0.0.2" }], ports: [{ name: "https", port: 8443 }] },
      ],
    };
    expect(resolve(service, endpoints)).toEqual({ host: "10.0.0.2", port: 8443 });
  });

  it("says why a Service resolves to nothing", () => {
    expect(resolve(undefined, undefined)).toBe('service "bar" not found');
    expect(resolve(service, undefined, 444)).toBe('no service port 444 found for service "bar"');
    expect(resolve(service, { metadata: {}, subsets: [] })).toBe('no endpoints available for service "bar"');
    expect(
      resolve(service, {
        metadata: {},
        subsets: [{ notReadyAddresses: [{ ip: "10.0.0.3" }], ports: [{ name: "https", port: 1 }] }],
      }),
    ).toBe('no endpoints available for service "bar"');
  });

  it("sends an ExternalName Service to its name", () => {
    const external: Service = {
      metadata: { name: "bar" },
      spec: { type: "ExternalName", externalName: "host.example" },
    };
    expect(resolve(external, undefined, 8443)).toEqual({ host: "host.example", port: 8443 });
  });
});

describe("an aggregated server's discovery", () => {
  it("is stale when its answer is no resource list", () => {
    expect(remoteDiscovery("<html>", "g", "v1")).toEqual({ resources: [], freshness: "Stale" });
    expect(remoteDiscovery('{"kind":"Status"}', "g", "v1")).toEqual({ resources: [], freshness: "Stale" });
  });

  it("names a resource's kind in another group-version as it says", () => {
    const body = JSON.stringify({
      resources: [
        { name: "things", singularName: "thing", namespaced: false, kind: "Thing", verbs: ["get"] },
        {
          name: "things/scale",
          namespaced: false,
          group: "autoscaling",
          version: "v1",
          kind: "Scale",
          verbs: ["get"],
        },
      ],
    });
    expect(remoteDiscovery(body, "g", "v1")).toEqual({
      freshness: "Current",
      resources: [
        {
          resource: "things",
          responseKind: { group: "g", version: "v1", kind: "Thing" },
          scope: "Cluster",
          singularResource: "thing",
          verbs: ["get"],
          subresources: [
            {
              subresource: "scale",
              responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
              verbs: ["get"],
            },
          ],
        },
      ],
    });
  });
});
