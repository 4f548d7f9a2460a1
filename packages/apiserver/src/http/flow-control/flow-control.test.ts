import * as http from "node:http";
import { clusterRoleBindings, configMaps, flowSchemas, priorityLevelConfigurations } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { requestAttributes } from "../auth/request-auth.js";
import type { ApiServerMetrics } from "../request-metrics.js";
import type { ListeningApiServer } from "../server.js";

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

/**
 * A server whose limited levels have one seat each, with the bootstrap configuration, and
 * `jane` (a cluster admin by binding, not by group) sent to the level `tiny`, which rejects.
 */
async function start(
  metrics?: ApiServerMetrics,
  clock?: FakeClock,
): Promise<{ api: ApiServer; server: ListeningApiServer }> {
  const api = new ApiServer({
    flowControlBootstrap: true,
    flowControl: { serverConcurrencyLimit: 1 },
    clock,
  });
  running.push(api);
  const server = await api.listen({
    token: "admin-token",
    users: [{ token: "jane-token", user: { username: "jane", groups: ["devs"] } }],
    metrics,
  });
  const client = api.client();
  await client.resource(clusterRoleBindings).create({
    metadata: { name: "jane" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
  });
  await client.resource(priorityLevelConfigurations).create({
    metadata: { name: "tiny" },
    // It may not borrow: one seat, whatever the other levels lend.
    spec: {
      type: "Limited",
      limited: { nominalConcurrencyShares: 1, borrowingLimitPercent: 0, limitResponse: { type: "Reject" } },
    },
  });
  await client.resource(flowSchemas).create({
    metadata: { name: "jane" },
    spec: {
      priorityLevelConfiguration: { name: "tiny" },
      matchingPrecedence: 100,
      distinguisherMethod: { type: "ByUser" },
      rules: [
        {
          subjects: [{ kind: "User", user: { name: "jane" } }],
          resourceRules: [
            { verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true },
          ],
        },
      ],
    },
  });
  await api.flush();
  return { api, server };
}

interface Answer {
  code: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request whose body is sent only when `finish` is called: it holds its seat until then. */
function slowCreate(url: string, token: string): { finish: () => void; answer: Promise<Answer> } {
  const request = http.request(`${url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ code: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on("error", reject);
  });
  request.write('{"metadata":{"name":"slow"},');
  request.flushHeaders();
  return { finish: () => request.end('"data":{"a":"b"}}'), answer };
}

async function get(url: string, token: string): Promise<Answer> {
  const response = await fetch(`${url}/api/v1/namespaces/default/configmaps`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return {
    code: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

describe("API Priority and Fairness", () => {
  it("answers with the UIDs of the request's FlowSchema and priority level", async () => {
    const { api, server } = await start();
    const stored = async (name: string) => ({
      schema: (await api.client().resource(flowSchemas).get(name)).metadata?.uid,
      level: (
        await api
          .client()
          .resource(priorityLevelConfigurations)
          .get((await api.client().resource(flowSchemas).get(name)).spec!.priorityLevelConfiguration.name)
      ).metadata?.uid,
    });
    const admin = await get(server.url, "admin-token");
    expect(admin.code).toBe(200);
    const exempt = await stored("exempt");
    expect([
      admin.headers["x-kubernetes-pf-flowschema-uid"],
      admin.headers["x-kubernetes-pf-prioritylevel-uid"],
    ]).toEqual([exempt.schema, exempt.level]);
    const jane = await get(server.url, "jane-token");
    const janes = await stored("jane");
    expect([
      jane.headers["x-kubernetes-pf-flowschema-uid"],
      jane.headers["x-kubernetes-pf-prioritylevel-uid"],
    ]).toEqual([janes.schema, janes.level]);
    expect(janes.schema).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses a request past its level's seats with kube-apiserver's 429, and serves it once a seat is free", async () => {
    const reported: string[] = [];
    const metrics: ApiServerMetrics = {
      request: () => {},
      storageObjects: () => {},
      expose: async () => ({ contentType: "text/plain", body: "" }),
      flowControlDispatched: (level, schema) => reported.push(`dispatched ${level} ${schema}`),
      flowControlRejected: (level, schema, reason) => reported.push(`rejected ${level} ${schema} ${reason}`),
      flowControlLimits: (level, limits) =>
        reported.push(`limits ${level} ${limits.nominal} ${limits.lower} ${limits.upper} ${limits.current}`),
      flowControlFairFrac: (fairFrac) => reported.push(`fair ${fairFrac.toFixed(4)}`),
      flowControlRequests: (level, schema, executing, waiting) =>
        requests.push(`${level} ${schema} executing ${executing} waiting ${waiting}`),
      flowControlWait: (level, schema, executed) => waits.push(`${level} ${schema} executed ${executed}`),
    };
    const requests: string[] = [];
    const waits: string[] = [];
    const { api, server } = await start(metrics);
    const holding = slowCreate(server.url, "jane-token");
    // The first request holds the level's one seat while its body has not arrived.
    const tiny = () => api.flowControl!.queueSets().get("tiny");
    while (tiny()?.executing !== 1) await new Promise((resolve) => setImmediate(resolve));
    const refused = await get(server.url, "jane-token");
    expect(refused.code).toBe(429);
    expect(refused.body).toBe("Too many requests, please try again later.\n");
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(refused.headers["x-kubernetes-pf-flowschema-uid"]).toMatch(/^[0-9a-f-]{36}$/);
    // An admin is exempt, whatever jane holds.
    expect((await get(server.url, "admin-token")).code).toBe(200);
    holding.finish();
    expect((await holding.answer).code).toBe(201);
    const served = await get(server.url, "jane-token");
    expect(served.code).toBe(200);
    expect(tiny()!.counts).toEqual({ dispatched: 2, rejected: 1, timedOut: 0, cancelled: 0 });
    expect(reported).toEqual([
      "dispatched tiny jane",
      "rejected tiny jane concurrency-limit",
      "dispatched exempt exempt",
      "dispatched tiny jane",
    ]);
    await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer admin-token" } });
    // Each request's wait, and, at the scrape, what executes (the scrape itself) and waits.
    expect(waits).toEqual([
      "tiny jane executed true",
      "tiny jane executed false",
      "exempt exempt executed true",
      "tiny jane executed true",
      "exempt exempt executed true",
    ]);
    expect(requests.sort()).toEqual([
      "exempt exempt executing 1 waiting 0",
      "tiny jane executing 0 waiting 0",
    ]);
    // One seat for the server: each level's nominal limit rounds up to 1, and the levels that keep
    // theirs (lending nothing) take what the idle lenders give, upstream's allocation; `tiny` may not
    // borrow (nominal, lower, upper, current).
    expect(reported.filter((line) => line.startsWith("limits ") || line.startsWith("fair ")).sort()).toEqual([
      "fair 1.7487",
      "limits catch-all 1 1 2 2",
      "limits exempt 0 0 1 0",
      "limits global-default 1 0 2 0",
      "limits leader-election 1 1 2 2",
      "limits node-high 1 1 2 2",
      "limits system 1 1 2 2",
      "limits tiny 1 1 1 1",
      "limits workload-high 1 0 2 0",
      "limits workload-low 1 0 2 0",
    ]);
    expect(
      JSON.parse(served.body).items.map((c: { metadata: { name: string } }) => c.metadata.name),
    ).toContain("slow");
  });

  it("classifies a watch, but lets it give its seat back once started", async () => {
    const { api, server } = await start();
    const watching = new AbortController();
    const watch = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`, {
      headers: { authorization: "Bearer jane-token" },
      signal: watching.signal,
    });
    expect(watch.status).toBe(200);
    expect(watch.headers.get("x-kubernetes-pf-flowschema-uid")).toBe(
      (await api.client().resource(flowSchemas).get("jane")).metadata?.uid,
    );
    expect(api.flowControl!.queueSets().get("tiny")!.executing).toBe(0);
    // The level's one seat is free for jane's next request while her watch goes on.
    expect((await get(server.url, "jane-token")).code).toBe(200);
    watching.abort();
    await watch.body?.cancel().catch(() => {});
  });

  it("is off for a listener that asks, and for a server built without it", async () => {
    const { api } = await start();
    const unlimited = await api.listen({ token: "admin-token", flowControl: false });
    const answer = await get(unlimited.url, "admin-token");
    expect(answer.code).toBe(200);
    expect(answer.headers["x-kubernetes-pf-flowschema-uid"]).toBeUndefined();
    const off = new ApiServer({ flowControl: false });
    running.push(off);
    expect(off.flowControl).toBeNull();
    const listening = await off.listen();
    await off
      .client()
      .resource(configMaps, "default")
      .create({ metadata: { name: "x" } });
    const plain = await fetch(`${listening.url}/api/v1/namespaces/default/configmaps/x`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("x-kubernetes-pf-prioritylevel-uid")).toBeNull();
  });

  it("takes a list's seats from the objects it will read, and counts watches for what a write costs", async () => {
    const clock = new FakeClock();
    const { api } = await start(undefined, clock);
    const client = api.client();
    for (let i = 0; i < 450; i++)
      await client.resource(configMaps, "default").create({ metadata: { name: `cm-${i}` } });
    const flow = api.flowControl!;
    const jane = { username: "jane", groups: ["devs", "system:authenticated"] };
    const request = (method: string, uri: string) => {
      const url = new URL(uri, "http://server");
      return {
        attributes: () => requestAttributes(jane, method, url.pathname, url.searchParams)[0]!,
        query: () => url.searchParams,
        cancel: () => new AbortController().signal,
      };
    };
    const tiny = () => flow.queueSets().get("tiny")!;
    // A consistent list reads every object from storage and returns them: 2 × 450 objects, 9 seats.
    // The level has one seat: a request wider than that runs alone.
    const list = (await flow.admit(jane, request("GET", "/api/v1/namespaces/default/configmaps"))).release;
    expect([tiny().executing, tiny().seatsInUse]).toEqual([1, 9]);
    list();
    // From the watch cache with a limit: the objects in the cache, 5 seats.
    const cached = await flow.admit(jane, request("GET", "/api/v1/configmaps?resourceVersion=0&limit=10"));
    expect(tiny().seatsInUse).toBe(5);
    cached.release();
    // A create heard by ten watches of config maps takes a final seat for 5 ms after it is answered.
    const forgets = Array.from({ length: 10 }, () =>
      flow.watches.register(request("GET", "/api/v1/namespaces/default/configmaps?watch=1").attributes()),
    );
    const write = await flow.admit(jane, request("POST", "/api/v1/namespaces/default/configmaps"));
    expect(tiny().seatsInUse).toBe(1);
    for (const forget of forgets) forget?.();
    write.release();
    expect([tiny().executing, tiny().seatsInUse]).toEqual([0, 1]);
    await clock.advance(4);
    expect(tiny().seatsInUse).toBe(1);
    await clock.advance(1);
    expect(tiny().seatsInUse).toBe(0);
  });

  it("keeps a deleted level's share of the seats until its requests are done", async () => {
    const api = new ApiServer({ flowControlBootstrap: true });
    running.push(api);
    const client = api.client();
    // The bootstrap levels' shares add up to 245; this one doubles them.
    await client.resource(priorityLevelConfigurations).create({
      metadata: { name: "big" },
      spec: {
        type: "Limited",
        limited: { nominalConcurrencyShares: 245, limitResponse: { type: "Reject" } },
      },
    });
    await client.resource(flowSchemas).create({
      metadata: { name: "jane" },
      spec: {
        priorityLevelConfiguration: { name: "big" },
        matchingPrecedence: 100,
        rules: [
          {
            subjects: [{ kind: "User", user: { name: "jane" } }],
            resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }],
          },
        ],
      },
    });
    await api.flush();
    const flow = api.flowControl!;
    await flow.ready();
    const nominal = (level: string) => flow.levelLimits().get(level)?.nominal;
    expect([nominal("workload-low"), nominal("big")]).toEqual([Math.ceil((600 * 100) / 490), 300]);
    const jane = { username: "jane", groups: ["system:authenticated"] };
    const held = await flow.admit(jane, {
      attributes: () =>
        requestAttributes(jane, "GET", "/api/v1/namespaces/default/configmaps/x", new URLSearchParams())[0]!,
      cancel: () => new AbortController().signal,
    });
    expect(held.classification.priorityLevel.metadata?.name).toBe("big");
    await client.resource(flowSchemas).delete("jane");
    await client.resource(priorityLevelConfigurations).delete("big");
    await api.flush();
    expect([nominal("workload-low"), nominal("big")]).toEqual([Math.ceil((600 * 100) / 490), 300]);
    held.release();
    expect([nominal("workload-low"), nominal("big")]).toEqual([Math.ceil((600 * 100) / 245), undefined]);
  });
});
