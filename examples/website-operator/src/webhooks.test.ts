import { readFileSync } from "node:fs";
import { Manager } from "@reconcile/runtime";
import { startTestEnvironment, type TestEnvironment } from "@reconcile/runtime/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setupWebsiteWebhooks, websiteWebhookConfigurations } from "./webhooks.js";
import { type Website, type WebsiteV1alpha1, websiteCRD, websites, websitesV1alpha1 } from "./website.js";

describe("the Website webhooks (envtest, answered in process)", () => {
  let env: TestEnvironment;

  beforeEach(async () => {
    env = await startTestEnvironment({
      crds: [websiteCRD],
      http: false,
      webhookConfigurations: websiteWebhookConfigurations,
    });
    const manager = new Manager({ client: env.client });
    setupWebsiteWebhooks(manager);
    await env.serveWebhooks(manager.getWebhookServer());
  });
  afterEach(() => env.stop());

  const sites = () => env.client.resource(websites, "default");
  const site = (spec: Website["spec"]): Website => ({ metadata: { name: "blog" }, spec }) as Website;

  it("labels a new Website with its tier and keeps a label it gives", async () => {
    expect((await sites().create(site({ page: "<h1>hi</h1>" }))).metadata?.labels).toEqual({
      "example.reconcile.dev/tier": "standard",
    });
    const gold = {
      ...site({ page: "<h1>hi</h1>" }),
      metadata: { name: "shop", labels: { "example.reconcile.dev/tier": "gold" } },
    };
    expect((await sites().create(gold)).metadata?.labels).toEqual({ "example.reconcile.dev/tier": "gold" });
  });

  it("refuses an empty page and too many replicas, with every problem named; warns about 0 replicas", async () => {
    await expect(sites().create(site({ page: " ", replicas: 11 }))).rejects.toMatchObject({
      code: 422,
      message:
        'admission webhook "vwebsite.example.reconcile.dev" denied the request: Website.example.reconcile.dev "blog" is invalid: [spec.page: Required value: the page is empty, spec.replicas: Invalid value: 11: must be no more than 10]',
    });
    const warnings: string[] = [];
    await sites().create(site({ page: "<h1>hi</h1>", replicas: 0 }), { warnings } as never);
    expect(warnings).toEqual(["Website blog has 0 replicas: it serves nothing"]);
  });

  it("converts v1alpha1 (html) and v1 (page) both ways through the conversion webhook", async () => {
    const old = env.client.resource(websitesV1alpha1, "default");
    await old.create({
      metadata: { name: "legacy" },
      spec: { html: "<h1>old</h1>", replicas: 1 },
    } as WebsiteV1alpha1);
    expect((await sites().get("legacy")).spec).toEqual({
      page: "<h1>old</h1>",
      replicas: 1,
      image: "nginx:1.27",
    });
    await sites().create(site({ page: "<h1>new</h1>" }));
    const listed = (await old.list()).items.map((w) => [w.metadata?.name, w.apiVersion, w.spec.html]);
    expect(listed).toEqual([
      ["blog", "example.reconcile.dev/v1alpha1", "<h1>new</h1>"],
      ["legacy", "example.reconcile.dev/v1alpha1", "<h1>old</h1>"],
    ]);
  });

  it("config/webhooks.json holds the configurations the code defines", () => {
    const file = JSON.parse(readFileSync(new URL("../config/webhooks.json", import.meta.url), "utf8"));
    expect(file).toEqual({ apiVersion: "v1", kind: "List", items: websiteWebhookConfigurations });
  });
});
