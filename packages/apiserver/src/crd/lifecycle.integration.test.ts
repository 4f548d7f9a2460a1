import type { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { call, closeCrdServers, crdCondition, type Json, startCrdServer as start } from "./crd.test-util.js";

afterEach(closeCrdServers);

const crontabCRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "crontabs.stable.example.com" },
  spec: {
    group: "stable.example.com",
    scope: "Namespaced",
    names: { plural: "crontabs", kind: "CronTab", shortNames: ["ct"] },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  cronSpec: { type: "string", pattern: "^(\\S+ ){4}\\S+$" },
                  image: { type: "string" },
                  replicas: { type: "integer", minimum: 0, default: 1 },
                },
                required: ["cronSpec"],
                "x-kubernetes-validations": [{ rule: "self.replicas <= 10", message: "at most 10 replicas" }],
              },
              status: {
                type: "object",
                properties: { replicas: { type: "integer" }, selector: { type: "string" } },
              },
            },
          },
        },
        subresources: {
          status: {},
          scale: {
            specReplicasPath: ".spec.replicas",
            statusReplicasPath: ".status.replicas",
            labelSelectorPath: ".status.selector",
          },
        },
        additionalPrinterColumns: [
          { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
          { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        ],
      },
    ],
  },
};

const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";

describe("CustomResourceDefinitions on a running server", () => {
  it("create → established and served → objects validated, defaulted, printed, scaled → delete → objects gone, kind not served", async () => {
    const { api, http } = await start();
    const created = await call(
      http,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      crontabCRD,
    );
    expect(created.code).toBe(201);
    expect(created.body.spec.names).toEqual({
      plural: "crontabs",
      singular: "crontab",
      kind: "CronTab",
      listKind: "CronTabList",
      shortNames: ["ct"],
    });
    const established = await crdCondition(api, "crontabs.stable.example.com", "Established");
    expect(established.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["NamesAccepted", "True", "NoConflicts"],
      ["Established", "True", "InitialNamesAccepted"],
    ]);
    expect(established.status?.storedVersions).toEqual(["v1"]);

    const resources = (await call(http, "GET", "/apis/stable.example.com/v1")).body.resources;
    expect(resources.map((r: Json) => r.name)).toEqual(["crontabs", "crontabs/status", "crontabs/scale"]);
    expect(resources.find((r: Json) => r.name === "crontabs")).toMatchObject({
      kind: "CronTab",
      namespaced: true,
      shortNames: ["ct"],
    });

    const object = await call(http, "POST", crontabs, {
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "nightly" },
      spec: { cronSpec: "0 0 * * *", image: "backup", unknown: true },
      status: { replicas: 9 },
    });
    expect(object.code).toBe(201);
    expect(object.body.spec).toEqual({ cronSpec: "0 0 * * *", image: "backup", replicas: 1 });
    expect(object.body.status).toBeUndefined();
    expect(object.body.metadata.generation).toBe(1);

    const invalid = await call(http, "POST", crontabs, {
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "bad" },
      spec: { cronSpec: "nope", replicas: "three" },
    });
    expect(invalid.code).toBe(422);
    expect(invalid.body.message).toBe(
      'CronTab.stable.example.com "bad" is invalid: [spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match \'^(\\S+ ){4}\\S+$\', spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
    const tooMany = await call(http, "POST", crontabs, {
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "big" },
      spec: { cronSpec: "0 0 * * *", replicas: 11 },
    });
    expect(tooMany.body.message).toBe(
      'CronTab.stable.example.com "big" is invalid: spec: Invalid value: "object": at most 10 replicas',
    );

    const table = await call(
      http,
      "GET",
      crontabs,
      undefined,
      "application/json;as=Table;v=v1;g=meta.k8s.io",
    );
    expect(table.body.columnDefinitions.map((c: Json) => c.name)).toEqual(["Name", "Spec", "Replicas"]);
    expect(table.body.rows.map((r: Json) => r.cells)).toEqual([["nightly", "0 0 * * *", 1]]);

    const scaled = await call(http, "PATCH", `${crontabs}/nightly/scale`, { spec: { replicas: 3 } });
    expect(scaled.code).toBe(200);
    expect(scaled.body).toMatchObject({ kind: "Scale", spec: { replicas: 3 } });
    const afterScale = await call(http, "GET", `${crontabs}/nightly`);
    expect(afterScale.body.spec.replicas).toBe(3);
    expect(afterScale.body.metadata.generation).toBe(2);

    const status = await call(http, "PATCH", `${crontabs}/nightly/status`, {
      status: { replicas: 3, selector: "app=x" },
      spec: { image: "ignored" },
    });
    expect(status.code).toBe(200);
    expect(status.body.status).toEqual({ replicas: 3, selector: "app=x" });
    expect(status.body.spec.image).toBe("backup");

    expect((await api.storage.list("/stable.example.com/crontabs/")).items).toHaveLength(1);
    const deleted = await call(
      http,
      "DELETE",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
    );
    // The CRD REST's delete: marked and held by the cleanup finalizer, Terminating until its objects are gone.
    expect(deleted.code).toBe(200);
    expect(deleted.body.metadata.finalizers).toEqual(["customresourcecleanup.apiextensions.k8s.io"]);
    expect(deleted.body.status.conditions.find((c: Json) => c.type === "Terminating")).toMatchObject({
      status: "True",
      reason: "InstanceDeletionPending",
      message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    });
    await waitUntil(async () => (await call(http, "GET", crontabs)).code === 404);
    await waitUntil(
      async () =>
        (
          await call(
            http,
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
          )
        ).code === 404,
    );
    expect((await call(http, "GET", "/apis/stable.example.com/v1")).code).toBe(404);
    expect(await api.storage.list("/stable.example.com/crontabs/")).toMatchObject({ items: [] });
  });

  it("a custom object's own finalizer holds its CRD Terminating until it is removed", async () => {
    const { api, http } = await start();
    const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";
    await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crontabCRD);
    await crdCondition(api, "crontabs.stable.example.com", "Established");
    const held = {
      metadata: { name: "held", finalizers: ["example.com/hold"] },
      spec: { cronSpec: "* * * * *" },
    };
    expect((await call(http, "POST", crontabs, held)).code).toBe(201);
    expect((await call(http, "DELETE", crdPath)).code).toBe(200);
    const terminating = await crdCondition(api, "crontabs.stable.example.com", "Terminating");
    await waitUntil(
      async () => (await call(http, "GET", `${crontabs}/held`)).body.metadata?.deletionTimestamp,
    );
    const inProgress = (await call(http, "GET", crdPath)).body;
    expect(inProgress.status.conditions.find((c: Json) => c.type === "Terminating")).toMatchObject({
      status: "True",
      reason: "InstanceDeletionInProgress",
      message: "CustomResource deletion is in progress",
    });
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    const refused = await call(http, "POST", crontabs, {
      metadata: { name: "late" },
      spec: { cronSpec: "x" },
    });
    expect(refused.code).toBe(405);
    expect(refused.body.message).toBe("create not allowed while custom resource definition is terminating");
    // Updates of existing objects are still served, so the finalizer can be removed.
    const released = await call(http, "PATCH", `${crontabs}/held`, { metadata: { finalizers: null } });
    expect(released.code).toBe(200);
    await (api.clock as FakeClock).advance(5000);
    await waitUntil(async () => (await call(http, "GET", crdPath)).code === 404);
    expect((await call(http, "GET", "/apis/stable.example.com/v1")).code).toBe(404);
  });

  it("reports a kind already taken in the group as KindConflict and serves nothing for it", async () => {
    const { api, http } = await start();
    expect(
      (await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crontabCRD)).code,
    ).toBe(201);
    await crdCondition(api, "crontabs.stable.example.com", "Established");
    const clash = structuredClone(crontabCRD);
    clash.metadata.name = "crontabs2.stable.example.com";
    clash.spec.names = { plural: "crontabs2", kind: "CronTab", shortNames: [] } as Json;
    expect(
      (await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", clash)).code,
    ).toBe(201);
    const rejected = await crdCondition(api, "crontabs2.stable.example.com", "NamesAccepted", "False");
    expect(rejected.status?.conditions?.[0]).toMatchObject({
      reason: "ListKindConflict",
      message: '"CronTabList" is already in use',
    });
    expect((await call(http, "GET", "/apis/stable.example.com/v1/namespaces/default/crontabs2")).code).toBe(
      404,
    );
  });

  it("refuses an invalid CRD with upstream's 422", async () => {
    const { http } = await start();
    const bad = structuredClone(crontabCRD) as Json;
    bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.type = undefined;
    const answer = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad);
    expect(answer.code).toBe(422);
    expect(answer.body.message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "crontabs.stable.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    );
  });
});

/** Waits for background work driven by watch events (no clock involved) by yielding to the event loop. */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("condition never held");
}
