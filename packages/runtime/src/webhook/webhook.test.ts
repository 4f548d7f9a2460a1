import { type ConfigMap, configMaps, newInvalid } from "@reconcile/api";
import { jsonPatch } from "@reconcile/apiserver";
import { afterEach, describe, expect, it } from "vitest";
import { startTestEnvironment, type TestEnvironment, type WebhookConfiguration } from "../envtest/index.js";
import { Manager } from "../manager.js";
import { newWebhookManagedBy, webhookPath } from "./builder.js";
import { createPatch } from "./json-patch.js";
import { WebhookServer } from "./server.js";

describe("createPatch (the defaulting webhook's answer)", () => {
  const cases: [string, unknown, unknown][] = [
    ["nothing changed", { a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
    ["a key added, one removed, one changed", { a: 1, b: 2, c: { d: 1 } }, { a: 1, c: { d: 2 }, e: "x" }],
    [
      "keys that need escaping",
      { metadata: { labels: {} } },
      { metadata: { labels: { "app.kubernetes.io/name": "x", "a~b": "y" } } },
    ],
    ["a list of another length is replaced", { items: [1, 2] }, { items: [1, 2, 3] }],
    [
      "a list of the same length is patched item by item",
      { items: [{ a: 1 }, { a: 2 }] },
      { items: [{ a: 1 }, { a: 3 }] },
    ],
    ["a value of another type", { a: { b: 1 } }, { a: [1] }],
  ];
  for (const [name, original, modified] of cases) {
    it(`${name}: applying the patch gives the modified object`, () => {
      expect(jsonPatch(original, createPatch(original, modified))).toEqual(modified);
    });
  }
  it("names what changed and nothing else", () => {
    expect(createPatch({ a: 1, b: { c: 1, d: 2 } }, { a: 1, b: { c: 1, d: 3 } })).toEqual([
      { op: "replace", path: "/b/d", value: 3 },
    ]);
    expect(createPatch({ m: {} }, { m: { "a/b": "x" } })).toEqual([
      { op: "add", path: "/m/a~1b", value: "x" },
    ]);
  });
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const rule = {
  operations: ["CREATE", "UPDATE"],
  apiGroups: [""],
  apiVersions: ["v1"],
  resources: ["configmaps"],
};
// As kubebuilder writes them: Services in the operator's namespace, the builder's paths.
const configurations: WebhookConfiguration[] = [
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "mutating-webhook-configuration" },
    webhooks: [
      {
        name: "mconfigmap.kb.io",
        clientConfig: {
          service: { name: "webhook-service", namespace: "system", path: webhookPath("mutate", configMaps) },
        },
        rules: [rule],
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        objectSelector: { matchLabels: { webhook: "on" } },
      },
    ],
  },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "validating-webhook-configuration" },
    webhooks: [
      {
        name: "vconfigmap.kb.io",
        clientConfig: {
          service: {
            name: "webhook-service",
            namespace: "system",
            path: webhookPath("validate", configMaps),
          },
        },
        rules: [rule],
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        objectSelector: { matchLabels: { webhook: "on" } },
      },
    ],
  },
];

async function setUp(server?: WebhookServer): Promise<{ env: TestEnvironment; manager: Manager }> {
  const env = await startTestEnvironment({ webhookConfigurations: configurations, http: false });
  cleanups.push(() => env.stop());
  const manager = new Manager({ client: env.client, webhookServer: server });
  const paths = newWebhookManagedBy(manager)
    .for(configMaps)
    .withDefaulter((cm: ConfigMap) => {
      cm.data = { tier: "standard", ...cm.data };
    })
    .withValidator({
      validateCreate(cm: ConfigMap) {
        if (cm.data?.forbidden !== undefined) throw new Error("the key forbidden is not allowed");
        return cm.data?.tier === "standard" ? ["tier defaulted to standard"] : [];
      },
      validateUpdate(cm: ConfigMap, old: ConfigMap) {
        if (cm.data?.tier !== old.data?.tier)
          throw newInvalid({ group: "", kind: "ConfigMap" }, cm.metadata?.name ?? "", [
            {
              type: "FieldValueForbidden",
              field: "data.tier",
              message: "data.tier: Forbidden: may not change",
            },
          ]);
      },
    })
    .complete();
  expect(paths).toEqual({ mutatePath: "/mutate--v1-configmap", validatePath: "/validate--v1-configmap" });
  return { env, manager };
}

async function exercise(env: TestEnvironment) {
  const client = env.client.resource(configMaps, "default");
  const warnings: string[] = [];
  const created = await client.create(
    { metadata: { name: "a", labels: { webhook: "on" } }, data: { x: "1" } },
    { warnings } as never,
  );
  expect(created.data).toEqual({ tier: "standard", x: "1" });
  expect(warnings).toEqual(["tier defaulted to standard"]);
  await expect(
    client.create({ metadata: { name: "b", labels: { webhook: "on" } }, data: { forbidden: "1" } }),
  ).rejects.toMatchObject({
    code: 403,
    reason: "Forbidden",
    message: 'admission webhook "vconfigmap.kb.io" denied the request: the key forbidden is not allowed',
  });
  await expect(client.update({ ...created, data: { tier: "gold" } })).rejects.toMatchObject({
    code: 422,
    reason: "Invalid",
    message: expect.stringContaining(
      'admission webhook "vconfigmap.kb.io" denied the request: ConfigMap "a" is invalid',
    ),
  });
  // Not selected: neither webhook is asked.
  const plain = await client.create({ metadata: { name: "c" }, data: { forbidden: "1" } });
  expect(plain.data).toEqual({ forbidden: "1" });
}

describe("webhooks in @reconcile/runtime, tested with envtest", () => {
  it("in process: the builder's defaulter and validator behind the installed configurations, no TLS", async () => {
    const { env, manager } = await setUp();
    await env.serveWebhooks(manager.getWebhookServer());
    await exercise(env);
  });

  it("over HTTPS: the manager's webhook server on loopback with envtest's certificate, ready once it listens", async () => {
    const certificate = await startTestEnvironment({ http: false }).then(async (e) => {
      const c = await e.webhookCertificate();
      await e.stop();
      return c;
    });
    const server = new WebhookServer({ port: 0, host: "127.0.0.1", certificate });
    const { env, manager } = await setUp(server);
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await env.serveWebhooks(server, { over: "https" });
    expect(server.started).toBe(true);
    await exercise(env);
  });
});
