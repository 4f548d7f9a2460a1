import * as http from "node:http";
import { clusterRoleBindings, flowSchemas, priorityLevelConfigurations } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import type { ApiServerMetrics } from "../request-metrics.js";
import type { ListeningApiServer } from "../server.js";
import { rfc3339Nano, tabwrite } from "./debug.js";

describe("the dumps' text", () => {
  it("aligns tab-terminated cells as Go's tabwriter does (its own test, minimum width 8, padding 1)", () => {
    const written = tabwrite(["本\tb\tc", "aa\t本本本\tcccc\tddddd", "aaa\tbbbb"]);
    expect(written.replaceAll(" ", ".")).toBe(
      "本.......b.......c\naa......本本本.....cccc....ddddd\naaa.....bbbb\n",
    );
    // Upstream's rows: columns joined by ",\t"; the last is not padded.
    expect(tabwrite(["PriorityLevelName,\tActiveQueues,\tIsIdle", "catch-all,\t0,\ttrue"])).toBe(
      "PriorityLevelName, ActiveQueues, IsIdle\ncatch-all,         0,            true\n",
    );
  });

  it("writes times as Go's RFC3339Nano in UTC, without trailing zeros", () => {
    expect(rfc3339Nano(Date.UTC(2026, 11, 1, 4, 5, 6))).toBe("2026-12-01T04:05:06Z");
    expect(rfc3339Nano(Date.UTC(2026, 11, 1, 4, 5, 6, 120))).toBe("2026-12-01T04:05:06.12Z");
    expect(rfc3339Nano(Date.UTC(2026, 11, 1, 4, 5, 6, 7))).toBe("2026-12-01T04:05:06.007Z");
  });
});

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

/**
 * A server whose limited levels have one seat each, `jane`'s and `joe`'s requests sent to `tiny`
 * (one seat, 4 queues of 2, hands of 2), on a clock that stands still.
 */
async function start(metrics?: ApiServerMetrics): Promise<{ api: ApiServer; server: ListeningApiServer }> {
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 12, 0, 0, 250));
  const api = new ApiServer({
    clock,
    flowControlBootstrap: true,
    flowControl: { serverConcurrencyLimit: 1 },
  });
  running.push(api);
  const server = await api.listen({
    token: "admin-token",
    users: [
      { token: "jane-token", user: { username: "jane", groups: ["devs"] } },
      { token: "joe-token", user: { username: "joe", groups: ["devs"] } },
    ],
    metrics,
  });
  const client = api.client();
  await client.resource(clusterRoleBindings).create({
    metadata: { name: "devs" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
  });
  await client.resource(priorityLevelConfigurations).create({
    metadata: { name: "tiny" },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 1,
        // It may not borrow: one seat, whatever the other levels lend.
        borrowingLimitPercent: 0,
        limitResponse: { type: "Queue", queuing: { queues: 4, handSize: 2, queueLengthLimit: 2 } },
      },
    },
  });
  await client.resource(flowSchemas).create({
    metadata: { name: "people" },
    spec: {
      priorityLevelConfiguration: { name: "tiny" },
      matchingPrecedence: 100,
      distinguisherMethod: { type: "ByUser" },
      rules: [
        {
          subjects: [
            { kind: "User", user: { name: "jane" } },
            { kind: "User", user: { name: "joe" } },
          ],
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

/** A create whose body is sent only when `finish` is called: once seated, it holds its seat until then. */
function slowCreate(
  url: string,
  token: string,
  name: string,
): { finish: () => void; answer: Promise<number> } {
  const request = http.request(`${url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  const answer = new Promise<number>((resolve, reject) => {
    request.on("response", (response) => {
      response.resume().on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
  });
  // A test that fails before awaiting it leaves it to be reset when the server closes.
  answer.catch(() => {});
  request.write(`{"metadata":{"name":"${name}"},`);
  request.flushHeaders();
  return { finish: () => request.end('"data":{"a":"b"}}'), answer };
}

async function dump(url: string, path: string): Promise<{ type: string | null; body: string }> {
  const response = await fetch(`${url}/debug/api_priority_and_fairness/${path}`, {
    headers: { authorization: "Bearer admin-token" },
  });
  expect(response.status).toBe(200);
  return { type: response.headers.get("content-type"), body: await response.text() };
}

describe("/debug/api_priority_and_fairness/", () => {
  it("dumps the levels, queues and requests as kube-apiserver does while one request holds a seat and one waits", async () => {
    const { api, server } = await start();
    const tiny = () => api.flowControl!.queueSets().get("tiny");
    const holding = slowCreate(server.url, "jane-token", "first");
    while (tiny()?.executing !== 1) await new Promise((resolve) => setImmediate(resolve));
    const waiting = slowCreate(server.url, "joe-token", "second");
    while (tiny()?.waiting !== 1) await new Promise((resolve) => setImmediate(resolve));

    const levels = await dump(server.url, "dump_priority_levels");
    expect(levels.type).toBe("text/plain; charset=utf-8");
    const rows = levels.body.split("\n");
    expect(rows[0]).toBe(
      "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests",
    );
    // Every level, exempt ones too, by name; the dump itself executes in `exempt`.
    expect(rows.slice(1, -1).map((line) => line.split(/,\s+/))).toEqual([
      ["catch-all", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["exempt", "0", "false", "false", "0", "1", "1", "0", "0", "0"],
      ["global-default", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["leader-election", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["node-high", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["system", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["tiny", "1", "false", "false", "1", "1", "1", "0", "0", "0"],
      ["workload-high", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
      ["workload-low", "0", "true", "false", "0", "0", "0", "0", "0", "0"],
    ]);
    expect(rows.at(-1)).toBe("");

    const queues = (await dump(server.url, "dump_queues")).body.split("\n");
    expect(queues[0]).toBe(
      "PriorityLevelName, Index,  PendingRequests, ExecutingRequests, SeatsInUse, NextDispatchR, InitialSeatsSum, MaxSeatsSum, TotalWorkSum",
    );
    // Jane's request executes in queue 1, which it moved on in virtual time by its estimated work
    // (one seat for 3 ms); joe's waits in queue 0, the one of his hand with the least work waiting.
    expect(queues.filter((line) => line.startsWith("tiny,"))).toEqual([
      "tiny,              0,      1,               0,                 0,          0.00000000ss,  1,               1,           0.00300000ss",
      "tiny,              1,      0,               1,                 1,          0.00300000ss,  0,               0,           0.00000000ss",
      "tiny,              2,      0,               0,                 0,          0.00000000ss,  0,               0,           0.00000000ss",
      "tiny,              3,      0,               0,                 0,          0.00000000ss,  0,               0,           0.00000000ss",
    ]);
    // A row per queue of each level that queues (the bootstrap levels' numbers); a level that
    // rejects (catch-all), or is exempt, has none.
    const perLevel = new Map<string, number>();
    for (const line of queues.slice(1, -1)) {
      const level = line.slice(0, line.indexOf(","));
      perLevel.set(level, (perLevel.get(level) ?? 0) + 1);
    }
    expect(Object.fromEntries(perLevel)).toEqual({
      "global-default": 128,
      "leader-election": 16,
      "node-high": 64,
      system: 64,
      tiny: 4,
      "workload-high": 128,
      "workload-low": 128,
    });

    const requests = (await dump(server.url, "dump_requests?includeRequestDetails=1")).body;
    // The dump's own request executes in `exempt`, which has no queues; joe waits first in queue 0, jane executes in 1.
    expect(requests).toBe(
      [
        "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,              InitialSeats, FinalSeats, AdditionalLatency, StartTime,               UserName,        Verb,   APIPath,                                        Namespace, Name,   APIVersion, Resource,   SubResource",
        "exempt,            exempt,         -1,         -1,                  ,                2026-12-01T12:00:00.25Z, 1,            0,          0s,                2026-12-01T12:00:00.25Z, reconcile-admin, get,    /debug/api_priority_and_fairness/dump_requests, ,          ,       ,           ,           ",
        "tiny,              people,         0,          0,                   joe,             2026-12-01T12:00:00.25Z, 1,            0,          0s,                0001-01-01T00:00:00Z,    joe,             create, /api/v1/namespaces/default/configmaps,          default,   ,       v1,         configmaps, ",
        "tiny,              people,         1,          -1,                  jane,            2026-12-01T12:00:00.25Z, 1,            0,          0s,                2026-12-01T12:00:00.25Z, jane,            create, /api/v1/namespaces/default/configmaps,          default,   ,       v1,         configmaps, ",
        "",
      ].join("\n"),
    );
    // Without details, the first ten columns alone.
    const plain = (await dump(server.url, "dump_requests")).body.split("\n");
    expect(plain[0]).toBe(
      "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,              InitialSeats, FinalSeats, AdditionalLatency, StartTime",
    );
    expect(plain[3]).toBe(
      "tiny,              people,         1,          -1,                  jane,            2026-12-01T12:00:00.25Z, 1,            0,          0s,                2026-12-01T12:00:00.25Z",
    );

    holding.finish();
    expect(await holding.answer).toBe(201);
    waiting.finish();
    expect(await waiting.answer).toBe(201);
    const after = (await dump(server.url, "dump_priority_levels")).body.split("\n");
    expect(after.find((line) => line.startsWith("tiny,"))!.split(/,\s+/)).toEqual([
      "tiny",
      "0",
      "true",
      "false",
      "0",
      "0",
      "2",
      "0",
      "0",
      "0",
    ]);
  });

  it("shows a deleted level as quiescing while it holds a request, and drops it once drained", async () => {
    const { api, server } = await start();
    const holding = slowCreate(server.url, "jane-token", "first");
    while (api.flowControl!.queueSets().get("tiny")?.executing !== 1)
      await new Promise((resolve) => setImmediate(resolve));
    await api.client().resource(flowSchemas).delete("people");
    await api.client().resource(priorityLevelConfigurations).delete("tiny");
    await api.flush();
    const tinyRow = async () =>
      (await dump(server.url, "dump_priority_levels")).body
        .split("\n")
        .find((line) => line.startsWith("tiny,"));
    expect((await tinyRow())?.split(/,\s+/)).toEqual([
      "tiny",
      "0",
      "false",
      "true",
      "0",
      "1",
      "1",
      "0",
      "0",
      "0",
    ]);
    // Until it drains it keeps its share of the server's seats, and its limits are still dealt.
    expect(api.flowControl!.levelLimits().get("tiny")).toMatchObject({ exempt: false, nominal: 1 });
    holding.finish();
    expect(await holding.answer).toBe(201);
    expect(await tinyRow()).toBeUndefined();
    expect(api.flowControl!.levelLimits().has("tiny")).toBe(false);
  });

  it("reports the queue a waiting request joined and how long each request held its seat", async () => {
    const reported: string[] = [];
    const metrics: ApiServerMetrics = {
      request: () => {},
      storageObjects: () => {},
      expose: async () => ({ contentType: "text/plain", body: "" }),
      flowControlQueueLength: (level, schema, length) => reported.push(`queued ${level} ${schema} ${length}`),
      flowControlExecution: (level, schema, watch, seconds) =>
        reported.push(`executed ${level} ${schema} ${watch ? "watch" : "regular"} ${seconds}s`),
    };
    const { api, server } = await start(metrics);
    const tiny = () => api.flowControl!.queueSets().get("tiny");
    const holding = slowCreate(server.url, "jane-token", "first");
    while (tiny()?.executing !== 1) await new Promise((resolve) => setImmediate(resolve));
    const waiting = slowCreate(server.url, "joe-token", "second");
    while (tiny()?.waiting !== 1) await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toEqual(["queued tiny people 1"]);
    holding.finish();
    expect(await holding.answer).toBe(201);
    waiting.finish();
    expect(await waiting.answer).toBe(201);
    // The clock stands still, so each held its seat for 0 s.
    await expect.poll(() => reported.length).toBe(3);
    expect(reported).toEqual([
      "queued tiny people 1",
      "executed tiny people regular 0s",
      "executed tiny people regular 0s",
    ]);
    // A watch gives its seat back once started.
    const watching = new AbortController();
    const watch = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`, {
      headers: { authorization: "Bearer jane-token" },
      signal: watching.signal,
    });
    expect(watch.status).toBe(200);
    expect(reported.at(-1)).toBe("executed tiny people watch 0s");
    watching.abort();
  });

  it("is a 404 for other paths under it, and refused to a user without the non-resource URL", async () => {
    const { server } = await start();
    const other = await fetch(`${server.url}/debug/api_priority_and_fairness/dump_everything`, {
      headers: { authorization: "Bearer admin-token" },
    });
    expect(other.status).toBe(404);
    const anonymous = await fetch(`${server.url}/debug/api_priority_and_fairness/dump_priority_levels`);
    expect(anonymous.status).toBe(403);
    expect(((await anonymous.json()) as { message: string }).message).toBe(
      'forbidden: User "system:anonymous" cannot get path "/debug/api_priority_and_fairness/dump_priority_levels"',
    );
  });
});
