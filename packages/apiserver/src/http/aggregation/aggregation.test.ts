import type * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { type APIService, apiServices, endpoints, services } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, type KubectlCluster, kubectlCluster } from "../../testing/kubectl.js";
import type { ApiServerMetrics } from "../request-metrics.js";
import { generateServingCertificates } from "../tls.js";

// kube-aggregator in the API server: an APIService naming a Service is served
// by the server behind it, through a real HTTPS server on loopback.

afterEach(closeKubectlClusters);

const group = "wardle.example.com";
const resourceList = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: `${group}/v1alpha1`,
  resources: [
    {
      name: "flunders",
      singularName: "flunder",
      namespaced: true,
      kind: "Flunder",
      verbs: ["create", "delete", "get", "list", "watch"],
      shortNames: ["fl"],
    },
    {
      name: "flunders/status",
      singularName: "",
      namespaced: true,
      kind: "Flunder",
      verbs: ["get", "update"],
    },
  ],
};

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** The aggregated server: a wardle-like API on loopback, its certificate for `api.wardle.svc`. */
async function wardleServer() {
  const certificates = await generateServingCertificates({ dnsNames: ["api.wardle.svc"], ipAddresses: [] });
  const seen: Seen[] = [];
  let failDiscovery = false;
  const server = https.createServer(
    { cert: certificates.serving.cert, key: certificates.serving.key },
    (request, response) => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
      const path = (request.url ?? "").split("?")[0];
      const json = (code: number, body: unknown) => {
        response.writeHead(code, { "Content-Type": "application/json" });
        response.end(JSON.stringify(body));
      };
      if (path === `/apis/${group}/v1alpha1`)
        return failDiscovery ? json(500, { kind: "Status" }) : json(200, resourceList);
      if (path === `/apis/${group}/v1alpha1/namespaces/default/flunders`)
        return json(200, {
          kind: "FlunderList",
          apiVersion: `${group}/v1alpha1`,
          metadata: { resourceVersion: "7" },
          items: [
            {
              kind: "Flunder",
              apiVersion: `${group}/v1alpha1`,
              metadata: { name: "one", namespace: "default" },
            },
          ],
        });
      json(404, { kind: "Status", apiVersion: "v1", status: "Failure", code: 404, reason: "NotFound" });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: certificates.ca.cert,
    seen,
    failDiscovery(fail: boolean) {
      failDiscovery = fail;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const apiService = (ca: string | undefined): APIService => ({
  apiVersion: "apiregistration.k8s.io/v1",
  kind: "APIService",
  metadata: { name: `v1alpha1.${group}` },
  spec: {
    group,
    version: "v1alpha1",
    groupPriorityMinimum: 1000,
    versionPriority: 15,
    service: { namespace: "wardle", name: "api" },
    ...(ca === undefined
      ? { insecureSkipTLSVerify: true }
      : { caBundle: Buffer.from(ca).toString("base64") }),
  },
});

async function createService(cluster: KubectlCluster): Promise<void> {
  await cluster.kubectl(["create", "namespace", "wardle"]);
  await cluster.client.resource(services, "wardle").create({
    metadata: { name: "api" },
    spec: { ports: [{ name: "https", port: 443, targetPort: 8443 }] },
  });
}

async function createEndpoints(cluster: KubectlCluster, port: number): Promise<void> {
  await cluster.client.resource(endpoints, "wardle").create({
    metadata: { name: "api" },
    subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port }] }],
  } as never);
}

/** The APIService's Available condition once the aggregator has checked it with `expected` as the reason. */
async function availableCondition(cluster: KubectlCluster, reason: string) {
  for (let attempt = 0; attempt < 500; attempt++) {
    await cluster.api.flush();
    const stored = await cluster.client.resource(apiServices).get(`v1alpha1.${group}`);
    const condition = stored.status?.conditions?.find((c) => c.type === "Available");
    if (condition?.reason === reason) return condition;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`the APIService never became ${reason}`);
}

/** `GET /apis` as kubectl asks for it first: aggregated discovery (apidiscovery.k8s.io/v2). */
function aggregatedDiscovery(cluster: KubectlCluster): Promise<unknown> {
  return new Promise((resolve, reject) => {
    https
      .get(
        `${cluster.url}/apis`,
        {
          ca: cluster.server.certificateAuthority,
          headers: {
            Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            Authorization: "Bearer secret",
          },
        },
        (answer) => {
          let body = "";
          answer.setEncoding("utf8").on("data", (chunk: string) => {
            body += chunk;
          });
          answer.on("end", () => resolve(JSON.parse(body)));
        },
      )
      .on("error", reject);
  });
}

/** `kubectl get --raw` of the flunders, which the aggregated server answers. */
function getFlunders(cluster: KubectlCluster, query = "") {
  return cluster.kubectl(["get", "--raw", `/apis/${group}/v1alpha1/namespaces/default/flunders${query}`]);
}

/** The wardle server registered behind a Service and its Endpoints, and found Available. */
async function registered(cluster: KubectlCluster, wardle: { port: number; ca: string }) {
  await createService(cluster);
  await createEndpoints(cluster, wardle.port);
  await cluster.client.resource(apiServices).create(apiService(wardle.ca));
  return availableCondition(cluster, "Passed");
}

describe("API aggregation", () => {
  it("passes requests on to an available aggregated server with the user in front-proxy headers", async () => {
    const wardle = await wardleServer();
    const cluster = await kubectlCluster({}, { tls: true, token: "secret" });
    cluster.defer(wardle.close);
    const condition = await registered(cluster, wardle);
    expect(condition).toEqual({
      type: "Available",
      status: "True",
      lastTransitionTime: expect.any(String),
      reason: "Passed",
      message: "all checks passed",
    });
    // The check itself asked as the aggregator.
    expect(wardle.seen[0]).toMatchObject({
      method: "GET",
      url: `/apis/${group}/v1alpha1`,
      headers: { "x-remote-user": "system:kube-aggregator", "x-remote-group": "system:masters" },
    });

    const raw = await getFlunders(cluster, "?limit=5");
    expect(raw.code).toBe(0);
    expect(JSON.parse(raw.stdout).items[0].metadata.name).toBe("one");
    const passed = wardle.seen.at(-1)!;
    expect(passed.url).toBe(`/apis/${group}/v1alpha1/namespaces/default/flunders?limit=5&timeout=20s`);
    expect(passed.headers["x-remote-user"]).toBe("reconcile-admin");
    expect(passed.headers["x-remote-group"]).toBe("system:masters, system:authenticated");
    expect(passed.headers.authorization).toBeUndefined();
    expect(passed.headers["x-forwarded-for"]).toBe("127.0.0.1");

    const get = await cluster.kubectl(["get", "apiservice", `v1alpha1.${group}`]);
    expect(get.stdout).toMatch(
      new RegExp(`^NAME\\s+SERVICE\\s+AVAILABLE\\s+AGE\\nv1alpha1\\.${group}\\s+wardle/api\\s+True\\s+`),
    );
  });

  it("lists the aggregated group and its resources in legacy and aggregated discovery", async () => {
    const wardle = await wardleServer();
    const cluster = await kubectlCluster({}, { tls: true, token: "secret" });
    cluster.defer(wardle.close);
    await registered(cluster, wardle);

    const groups = JSON.parse((await cluster.kubectl(["get", "--raw", "/apis"])).stdout);
    const wardleGroup = {
      name: group,
      versions: [{ groupVersion: `${group}/v1alpha1`, version: "v1alpha1" }],
      preferredVersion: { groupVersion: `${group}/v1alpha1`, version: "v1alpha1" },
    };
    expect(groups.groups).toContainEqual(wardleGroup);
    const one = JSON.parse((await cluster.kubectl(["get", "--raw", `/apis/${group}`])).stdout);
    expect(one).toEqual({ kind: "APIGroup", apiVersion: "v1", ...wardleGroup });

    const resources = await cluster.kubectl(["api-resources", `--api-group=${group}`]);
    expect(resources.code).toBe(0);
    expect(resources.stdout.split("\n")[1]).toMatch(
      new RegExp(`^flunders\\s+fl\\s+${group.replaceAll(".", "\\.")}/v1alpha1\\s+true\\s+Flunder$`),
    );
  });

  it("keeps the Available condition as the remote availability controller does, and answers 503 while it is not", async () => {
    const wardle = await wardleServer();
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const cluster = await kubectlCluster({ clock }, { tls: true, token: "secret" });
    cluster.defer(wardle.close);
    await cluster.client.resource(apiServices).create(apiService(undefined));

    expect(await availableCondition(cluster, "ServiceNotFound")).toEqual({
      type: "Available",
      status: "False",
      lastTransitionTime: "2026-01-01T00:00:00Z",
      reason: "ServiceNotFound",
      message: 'service/api in "wardle" is not present',
    });
    const refused = await getFlunders(cluster);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the server is currently unable to handle the request");

    await createService(cluster);
    expect((await availableCondition(cluster, "EndpointsNotFound")).message).toBe(
      'cannot find endpoints for service/api in "wardle"',
    );
    await cluster.client.resource(endpoints, "wardle").create({
      metadata: { name: "api" },
      subsets: [{ notReadyAddresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: wardle.port }] }],
    } as never);
    expect((await availableCondition(cluster, "MissingEndpoints")).message).toBe(
      'endpoints for service/api in "wardle" have no addresses with port name "https"',
    );

    await clock.advance(5_000);
    wardle.failDiscovery(true);
    const endpointsNow = await cluster.client.resource(endpoints, "wardle").get("api");
    await cluster.client.resource(endpoints, "wardle").update({
      ...endpointsNow,
      subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: wardle.port }] }],
    } as never);
    const url = `https://127.0.0.1:${wardle.port}/apis/${group}/v1alpha1`;
    expect(await availableCondition(cluster, "FailedDiscoveryCheck")).toEqual({
      type: "Available",
      status: "False",
      // Still False: the transition time stays.
      lastTransitionTime: "2026-01-01T00:00:00Z",
      reason: "FailedDiscoveryCheck",
      message: `failing or missing response from ${url}: bad status from ${url}: 500`,
    });

    // The periodic check finds the server answering again.
    wardle.failDiscovery(false);
    await clock.advance(30_000);
    expect(await availableCondition(cluster, "Passed")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-01-01T00:00:35Z",
    });
    const raw = await getFlunders(cluster);
    expect(raw.code).toBe(0);
  });

  it("marks the group-version stale in aggregated discovery once its server stops answering, and counts the fall", async () => {
    const wardle = await wardleServer();
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const reported: string[] = [];
    const metrics: ApiServerMetrics = {
      request: () => {},
      storageObjects: () => {},
      expose: async () => ({ contentType: "text/plain", body: "" }),
      apiServiceUnavailable: (name, unavailable) => {
        if (name.includes("wardle")) reported.push(`${name} unavailable=${unavailable}`);
      },
      apiServiceUnavailableCount: (name, reason, count) => void reported.push(`${name} ${reason} ${count}`),
    };
    const cluster = await kubectlCluster({ clock }, { tls: true, token: "secret", metrics });
    await registered(cluster, wardle);
    const wardleVersions = async () => {
      const list = (await aggregatedDiscovery(cluster)) as {
        items: { metadata: { name?: string }; versions: unknown[] }[];
      };
      return list.items.find((item) => item.metadata.name === group)?.versions;
    };
    expect(await wardleVersions()).toEqual([
      {
        version: "v1alpha1",
        resources: [
          {
            resource: "flunders",
            responseKind: { group, version: "v1alpha1", kind: "Flunder" },
            scope: "Namespaced",
            singularResource: "flunder",
            verbs: ["create", "delete", "get", "list", "watch"],
            shortNames: ["fl"],
            subresources: [
              {
                subresource: "status",
                responseKind: { group, version: "v1alpha1", kind: "Flunder" },
                verbs: ["get", "update"],
              },
            ],
          },
        ],
        freshness: "Current",
      },
    ]);
    await wardle.close();
    await clock.advance(30_000);
    const condition = await availableCondition(cluster, "FailedDiscoveryCheck");
    expect(condition.message).toMatch(
      new RegExp(
        `^failing or missing response from https://127\\.0\\.0\\.1:${wardle.port}/apis/${group}/v1alpha1: Get "https://127\\.0\\.0\\.1:${wardle.port}/apis/${group}/v1alpha1": connect ECONNREFUSED`,
      ),
    );
    const [stale] = (await wardleVersions()) as { freshness: string; resources: unknown[] }[];
    expect(stale?.freshness).toBe("Stale");
    expect(stale?.resources).toHaveLength(1);
    // kube-aggregator's availability metrics, as a scrape reports them.
    expect((await cluster.kubectl(["get", "--raw", "/metrics"])).code).toBe(0);
    expect(reported).toEqual([
      `v1alpha1.${group} unavailable=true`,
      `v1alpha1.${group} FailedDiscoveryCheck 1`,
    ]);
  });
});
