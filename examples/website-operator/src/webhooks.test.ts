import { readFileSync } from "node:fs";
import { Manager } from "@reconcile/runtime";
import {
  startTestEnvironment,
  type TestEnvironment,
  type WebhookConfiguration,
} from "@reconcile/runtime/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setupWebsiteWebhooks, websiteWebhookConfigurations } from "./webhooks.js";
import { type Website, websiteCRD, websites } from "./website.js";

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
    expect((await sites().create(site({ html: "<h1>hi</h1>" }))).metadata?.labels).toEqual({
      "example.reconcile.dev/tier": "standard",
    });
    const gold = {
      ...site({ html: "<h1>hi</h1>" }),
      metadata: { name: "shop", labels: { "example.reconcile.dev/tier": "gold" } },
    };
    expect((await sites().create(gold)).metadata?.labels).toEqual({ "example.reconcile.dev/tier": "gold" });
  });

  it("refuses an empty page and too many replicas, with every problem named; warns about 0 replicas", async () => {
    await expect(sites().create(site({ html: " ", replicas: 11 }))).rejects.toMatchObject({
      code: 422,
      message:
        'admission webhook "vwebsite.example.reconcile.dev" denied the request: Website.example.reconcile.dev "blog" is invalid: [spec.html: Required value: the page is empty, spec.replicas: Invalid value: 11: must be no more than 10]',
    });
    const warnings: string[] = [];
    await sites().create(site({ html: "<h1>hi</h1>", replicas: 0 }), { warnings } as never);
    expect(warnings).toEqual(["Website blog has 0 replicas: it serves nothing"]);
  });

  it("config/webhooks.json holds the configurations the code defines", () => {
    const file = JSON.parse(readFileSync(new URL("../config/webhooks.json", import.meta.url), "utf8"));
    expect(file).toEqual({ apiVersion: "v1", kind: "List", items: websiteWebhookConfigurations });
  });
});
