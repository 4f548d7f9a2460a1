import { type ConfigMap, configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";
import type { ListeningApiServer } from "./http/server.js";
import { builtinDefinitions } from "./kinds/builtin.js";
import { maxNestingDepth, nestsDeeperThan } from "./limits.js";
import type { MemoryStorage } from "./storage/memory-storage.js";

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

// ConfigMaps here keep the fields their schema does not declare, so that a deep value can be stored,
// and a large one outside `data` (whose values validation holds to 1 MiB).
const definitions = builtinDefinitions.map((definition) =>
  definition.descriptor.kind === "ConfigMap" ? { ...definition, openAPI: undefined } : definition,
);

function newServer(): ApiServer {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")), definitions });
  running.push(api);
  return api;
}

async function start(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = newServer();
  return { api, http: await api.listen() };
}

interface Answer {
  code: number;
  body: { reason?: string; message?: string; items?: unknown[]; metadata?: { resourceVersion?: string } };
}

async function call(
  http: ListeningApiServer,
  method: string,
  path: string,
  body?: string | Uint8Array,
  contentType = "application/json",
): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = body;
    init.headers = { "content-type": contentType };
  }
  const response = await fetch(http.url + path, init);
  const text = await response.text();
  return { code: response.status, body: text ? JSON.parse(text) : {} };
}

/** JSON text of arrays nested `depth` deep around a string. */
function nestedArrays(depth: number): string {
  return `${"[".repeat(depth)}"x"${"]".repeat(depth)}`;
}

function nestedValue(depth: number): unknown {
  let value: unknown = "x";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const cmPath = "/api/v1/namespaces/default/configmaps";

describe("nestsDeeperThan", () => {
  it("counts objects and arrays, not scalars, and measures any depth without recursion", () => {
    expect(nestsDeeperThan("x", 0)).toBe(false);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
    expect(nestsDeeperThan(nestedValue(100_000), 99_999)).toBe(true);
    expect(nestsDeeperThan(nestedValue(100_000), 100_000)).toBe(false);
  });

  it("takes a value that contains itself for too deep", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(nestsDeeperThan(cyclic)).toBe(true);
  });
});

describe("deep nesting", () => {
  it("answers 400 naming the limit for a JSON body 3,000 deep; the resource stays readable and deletable", async () => {
    const { http } = await start();
    expect((await call(http, "POST", cmPath, JSON.stringify({ metadata: { name: "ok" } }))).code).toBe(201);
    const body = `{"metadata":{"name":"deep"},"nested":${nestedArrays(3000)}}`;
    const created = await call(http, "POST", cmPath, body);
    expect(created.code).toBe(400);
    expect(created.body.reason).toBe("BadRequest");
    expect(created.body.message).toBe(`the request body is nested more than ${maxNestingDepth} levels deep`);
    expect((await call(http, "GET", `${cmPath}/deep`)).code).toBe(404);
    expect((await call(http, "GET", `${cmPath}/ok`)).code).toBe(200);
    expect((await call(http, "GET", cmPath)).body.items).toHaveLength(1);
    expect((await call(http, "GET", "/api/v1/configmaps")).body.items).toHaveLength(1);
    expect((await call(http, "DELETE", `${cmPath}/ok`)).code).toBe(200);
  });

  it("answers 400 for over-deep update, patch and apply bodies of every patch type", async () => {
    const { http } = await start();
    expect((await call(http, "POST", cmPath, JSON.stringify({ metadata: { name: "cm" } }))).code).toBe(201);
    const deep = nestedArrays(3000);
    const update = await call(http, "PUT", `${cmPath}/cm`, `{"metadata":{"name":"cm"},"nested":${deep}}`);
    expect([update.code, update.body.message]).toEqual([
      400,
      `the request body is nested more than ${maxNestingDepth} levels deep`,
    ]);
    for (const [type, body] of [
      ["application/merge-patch+json", `{"nested":${deep}}`],
      ["application/strategic-merge-patch+json", `{"nested":${deep}}`],
      ["application/json-patch+json", `[{"op":"add","path":"/nested","value":${deep}}]`],
      ["application/apply-patch+yaml", `{"apiVersion":"v1","kind":"ConfigMap","nested":${deep}}`],
    ] as const) {
      const answer = await call(http, "PATCH", `${cmPath}/cm?fieldManager=test`, body, type);
      expect([type, answer.code, answer.body.message]).toEqual([
        type,
        400,
        `the request body is nested more than ${maxNestingDepth} levels deep`,
      ]);
    }
    const stored = await call(http, "GET", `${cmPath}/cm`);
    expect([stored.code, stored.body.metadata?.resourceVersion]).toEqual([200, expect.any(String)]);
    expect((await call(http, "DELETE", `${cmPath}/cm`)).code).toBe(200);
  });

  it("accepts a body exactly at the limit and serves it back", async () => {
    const { http } = await start();
    // The object is level 1 and its member level 2, so the array holds maxNestingDepth - 1 levels.
    const body = `{"metadata":{"name":"edge"},"nested":${nestedArrays(maxNestingDepth - 1)}}`;
    expect((await call(http, "POST", cmPath, body)).code).toBe(201);
    const got = await call(http, "GET", `${cmPath}/edge`);
    expect(got.code).toBe(200);
    expect(nestsDeeperThan(got.body, maxNestingDepth)).toBe(false);
    expect(nestsDeeperThan(got.body, maxNestingDepth - 1)).toBe(true);
    const over = `{"metadata":{"name":"over"},"nested":${nestedArrays(maxNestingDepth)}}`;
    expect((await call(http, "POST", cmPath, over)).code).toBe(400);
  });

  it("serves an object nested to the limit on every path: list, watch, patches, copies, delete", async () => {
    const { api, http } = await start();
    // Objects inside arrays, so that strategic merge walks every level of the deepest member.
    let nested: unknown = { leaf: "x" };
    for (let i = 2; i < maxNestingDepth - 1; i++) nested = i % 2 ? [nested] : { a: nested };
    const object = { metadata: { name: "edge", labels: { a: "1" } }, nested };
    expect(nestsDeeperThan(object, maxNestingDepth)).toBe(false);
    expect((await call(http, "POST", cmPath, JSON.stringify(object))).code).toBe(201);
    const client = api.client().resource(configMaps, "default");
    const watch = await client.watch({ resourceVersion: "0" });
    for await (const event of watch) {
      expect(event.type).toBe("ADDED");
      expect((structuredClone(event.object) as ConfigMap).metadata?.name).toBe("edge");
      break;
    }
    expect((await call(http, "GET", cmPath)).body.items).toHaveLength(1);
    expect((await call(http, "GET", "/api/v1/configmaps")).body.items).toHaveLength(1);
    for (const [type, body] of [
      ["application/merge-patch+json", '{"metadata":{"labels":{"a":"2"}},"nested":null}'],
      [
        "application/strategic-merge-patch+json",
        JSON.stringify({ metadata: { labels: { a: "3" } }, nested }),
      ],
      ["application/json-patch+json", '[{"op":"replace","path":"/metadata/labels/a","value":"4"}]'],
    ] as const) {
      const answer = await call(http, "PATCH", `${cmPath}/edge`, body, type);
      expect([type, answer.code]).toEqual([type, 200]);
    }
    const copied = await client.patch("edge", [{ op: "copy", from: "/nested", path: "/copy" }], {
      type: "json",
    });
    expect(nestsDeeperThan(structuredClone(copied), maxNestingDepth)).toBe(false);
    expect((await call(http, "DELETE", `${cmPath}/edge`)).code).toBe(200);
  });

  it("answers 400 on every write of the in-process client, and nothing is stored", async () => {
    const api = newServer();
    const client = api.client().resource(configMaps, "default");
    const deep = nestedValue(3000);
    const rejected = (run: () => Promise<unknown>) =>
      run().then(
        () => "accepted",
        (error: { status?: { code: number; message: string } }) => [
          error.status?.code,
          error.status?.message,
        ],
      );
    const message = (what: string) => `${what} is nested more than ${maxNestingDepth} levels deep`;
    const tooDeep = (what: string) => [400, expect.stringContaining(message(what))];
    expect(
      await rejected(() => client.create({ metadata: { name: "deep" }, nested: deep } as ConfigMap)),
    ).toEqual(tooDeep("the object"));
    await client.create({ metadata: { name: "cm" } });
    const before = await client.get("cm");
    expect(await rejected(() => client.update({ ...before, nested: deep } as ConfigMap))).toEqual(
      tooDeep("the object"),
    );
    for (const type of ["merge", "strategic-merge", "apply"] as const) {
      expect(
        await rejected(() => client.patch("cm", { nested: deep }, { type, fieldManager: "test" })),
      ).toEqual(tooDeep("the patch"));
    }
    expect(
      await rejected(() =>
        client.patch("cm", [{ op: "add", path: "/nested", value: deep }], { type: "json" }),
      ),
    ).toEqual(tooDeep("the patch"));
    expect(await client.get("cm")).toEqual(before);
    expect((await client.list()).items.map((item) => item.metadata?.name)).toEqual(["cm"]);
    await client.delete("cm");
  });

  it("answers 400 for a pod whose container nests too deep through an unknown field, over HTTP", async () => {
    const { http } = await start();
    const body = `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","extra":${nestedArrays(2000)}}]}}`;
    const answer = await call(http, "POST", "/api/v1/namespaces/default/pods", body);
    expect(answer.code).toBe(400);
    expect((await call(http, "GET", "/api/v1/namespaces/default/pods")).body.items).toEqual([]);
  });
});

describe("JSON patch amplification", () => {
  it("answers 422 for 26 copies of the document into itself (1.3 KB of patch), and stores nothing", async () => {
    const { http } = await start();
    expect(
      (await call(http, "POST", cmPath, JSON.stringify({ metadata: { name: "cm" }, data: { a: "b" } }))).code,
    ).toBe(201);
    const before = await call(http, "GET", `${cmPath}/cm`);
    const doubling = Array.from({ length: 26 }, (_, i) => ({ op: "copy", from: "", path: `/copy${i}` }));
    const body = JSON.stringify(doubling);
    expect(body.length).toBeLessThan(1400);
    const answer = await call(http, "PATCH", `${cmPath}/cm`, body, "application/json-patch+json");
    expect(answer.code).toBe(422);
    expect(answer.body.reason).toBe("Invalid");
    expect(answer.body.message).toMatch(/exceeding the limit 3145728$/);
    expect(await call(http, "GET", `${cmPath}/cm`)).toEqual(before);
  });

  it("answers 413 for a JSON patch of 10,001 operations, as kube-apiserver", async () => {
    const { http } = await start();
    expect((await call(http, "POST", cmPath, JSON.stringify({ metadata: { name: "cm" } }))).code).toBe(201);
    const ops = Array.from({ length: 10_001 }, () => ({ op: "test", path: "/kind", value: "ConfigMap" }));
    const answer = await call(
      http,
      "PATCH",
      `${cmPath}/cm`,
      JSON.stringify(ops),
      "application/json-patch+json",
    );
    expect([answer.code, answer.body.reason, answer.body.message]).toEqual([
      413,
      "RequestEntityTooLarge",
      "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    ]);
  });
});

describe("object size and history budget", () => {
  const limit = 1.5 * 1024 * 1024;
  const rejected = (run: () => Promise<unknown>) =>
    run().then(
      () => "accepted",
      (error: { status?: { code: number; reason: string; message: string } }) => error.status,
    );

  it("answers 413 naming the 1.5 MiB limit on every write path, in process and over HTTP; nothing is stored", async () => {
    const { api, http } = await start();
    const client = api.client().resource(configMaps, "default");
    const tooLarge = {
      code: 413,
      reason: "RequestEntityTooLarge",
      message: `Request entity too large: limit is ${limit}`,
    };
    const big = "x".repeat(limit);
    expect(
      await rejected(() => client.create({ metadata: { name: "big" }, payload: big } as ConfigMap)),
    ).toMatchObject(tooLarge);
    await client.create({ metadata: { name: "cm" }, data: { a: "b" } });
    const before = await client.get("cm");
    expect(await rejected(() => client.update({ ...before, payload: big } as ConfigMap))).toMatchObject(
      tooLarge,
    );
    expect(await rejected(() => client.patch("cm", { payload: big }, { type: "merge" }))).toMatchObject(
      tooLarge,
    );
    const posted = await call(
      http,
      "POST",
      cmPath,
      JSON.stringify({ metadata: { name: "big" }, payload: big }),
    );
    expect([posted.code, posted.body.message]).toEqual([413, tooLarge.message]);
    // Under the limit in characters, over it in bytes: the storage measures what it stores.
    const wide = "é".repeat(900_000);
    expect(
      await rejected(() => client.create({ metadata: { name: "wide" }, payload: wide } as ConfigMap)),
    ).toMatchObject({
      code: 413,
      reason: "RequestEntityTooLarge",
      message: expect.stringMatching(
        /^Request entity too large: the object is 18\d{5} bytes of JSON; limit is 1572864$/,
      ),
    });
    expect(await client.get("cm")).toEqual(before);
    expect((await client.list()).items.map((item) => item.metadata?.name)).toEqual(["cm"]);
  });

  it("keeps the history within its budget under updates of a 1.4 MB ConfigMap; a watch from before answers 410", async () => {
    const api = new ApiServer({ historyBytes: 16 * 1024 * 1024, garbageCollection: false, definitions });
    running.push(api);
    const storage = api.storage as MemoryStorage;
    const client = api.client().resource(configMaps, "default");
    const payload = (version: number) => String(version).padEnd(1_400_000, "x");
    const first = await client.create({ metadata: { name: "big" }, payload: payload(0) } as ConfigMap);
    let stored: ConfigMap = first;
    let largest = 0;
    for (let version = 1; version <= 30; version++) {
      stored = await client.update({ ...stored, payload: payload(version) } as ConfigMap);
      largest = Math.max(largest, storage.historyBytes);
    }
    expect(largest).toBeLessThanOrEqual(16 * 1024 * 1024);
    // 11 objects of ~1.4 MB fit in 16 MiB: 10 changes and the state the oldest replaced.
    expect(storage.historyLength).toBe(10);
    const watched = await client.watch({ resourceVersion: first.metadata!.resourceVersion! });
    const events: { type: string; code: number | undefined; reason: string | undefined }[] = [];
    for await (const event of watched) {
      const status = event.object as { code?: number; reason?: string };
      events.push({ type: event.type, code: status.code, reason: status.reason });
    }
    expect(events).toEqual([{ type: "ERROR", code: 410, reason: "Expired" }]);
  });
});
