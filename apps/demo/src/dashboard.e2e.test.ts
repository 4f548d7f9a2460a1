// The web view in a real browser (Debian's chromium, headless, driven by
// puppeteer-core) against the demo's cluster, changed with the real kubectl.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { replicaSets } from "@reconcile/api";
import { loadKubeConfig } from "@reconcile/client";
import { CausalityRecorder, Dashboard } from "@reconcile/dashboard";
import { simulate, writeTraceFile } from "@reconcile/sim";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, clusterCA, newApiServer, startCluster } from "./cluster.js";
import { eventually } from "./e2e-helpers.js";

/** The system's browser: `CHROMIUM` or Debian's (`scripts/ensure-chromium.mjs` installs it). */
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";

let cluster: Cluster;
let browser: Browser;
let page: Page;
let dashboardUrl: string;
let kubectl: (...args: string[]) => Promise<string>;
let close: () => Promise<void>;
let causality: CausalityRecorder;
let home: string;
/** The pods the Deployment was created with, before the scale-up. */
let firstPods: string[] = [];

beforeAll(async () => {
  if (!existsSync(chromium))
    throw new Error(`no browser at ${chromium}: run node scripts/ensure-chromium.mjs`);
  const api = newApiServer();
  // Pods mount kube-root-ca.crt through their ServiceAccount token volume: the cluster needs a CA.
  causality = new CausalityRecorder();
  cluster = startCluster(api, { nodes: 2, rootCA: await clusterCA(), causality });
  const listening = await api.listen({ port: 0, kubeletConnection: cluster.kubeletConnection() });
  await cluster.synced;
  home = await mkdtemp(join(tmpdir(), "reconcile-dashboard-e2e-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, listening.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  kubectl = (...args) =>
    new Promise((resolve, reject) => {
      execFile(
        "kubectl",
        ["--request-timeout=20s", ...args],
        { env, timeout: 30_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`kubectl ${args.join(" ")}: ${stderr}`)) : resolve(stdout),
      );
    });
  const dashboard = await new Dashboard({
    kubeConfig: await loadKubeConfig({ path: kubeconfig }),
    machinery: cluster.machinery(),
    metrics: [() => cluster.controllerManagers[0]!.manager.registry.metrics()],
    causality,
    title: "reconcile test",
  }).listen();
  dashboardUrl = dashboard.url;
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  close = async () => {
    await browser?.close();
    await dashboard.close();
    await cluster.stop();
    await listening.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  };
}, 60_000);

afterAll(async () => {
  await close?.();
});

describe("the dashboard in a browser", () => {
  it("shows the nodes and the pods of a Deployment, and follows kubectl scale within a second", async () => {
    await kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2");
    await page.goto(`${dashboardUrl}/#nodes`);
    await page.waitForSelector('article[data-node="node-1"]');
    expect(await page.title()).toBe("reconcile test");
    expect(await page.$$eval("article.node h3", (h) => h.map((e) => e.textContent))).toEqual([
      "node-1",
      "node-2",
    ]);
    await page.waitForFunction(`document.querySelectorAll("button.pod.ok").length === 2`, {
      timeout: 20_000,
    });
    firstPods = (await kubectl("get", "pods", "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ");
    expect(await page.$eval('[data-summary="nodes"]', (e) => e.textContent)).toBe("2 nodes");

    await kubectl("scale", "deployment", "web", "--replicas=5");
    // Once the API server holds the new pods, the page shows them within a second (its watch, relayed).
    await eventually(
      async () => (await kubectl("get", "pods", "-o", "name")).trim().split("\n").length === 5,
    );
    await page.waitForFunction(`document.querySelectorAll("button.pod").length === 5`, { timeout: 1_000 });
    await page.waitForFunction(`document.querySelectorAll("button.pod.ok").length === 5`, {
      timeout: 20_000,
    });
    const counts = await page.$$eval(".node .count", (spans) =>
      spans.map((s) => Number(s.getAttribute("data-count"))),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(5);
  });

  it("shows each workload with what it owns, and a Service with its endpoints", async () => {
    await kubectl("create", "service", "clusterip", "web", "--tcp=80:80");
    await page.goto(`${dashboardUrl}/#workloads`);
    await page.waitForSelector('[data-workload="Deployment/default/web"]');
    const replicaSet = await page.$eval(
      '[data-workload="Deployment/default/web"] .workload .row strong',
      (e) => e.textContent,
    );
    expect(replicaSet).toMatch(/^default\/web-[a-z0-9]+$/);
    expect(await page.$eval('[data-workload="Deployment/default/web"] .count', (e) => e.textContent)).toBe(
      "5/5 ready",
    );
    await page.goto(`${dashboardUrl}/#services`);
    await page.waitForFunction(
      `document.querySelectorAll('tr[data-service="default/web"] button.endpoint.ok').length === 5`,
      { timeout: 20_000 },
    );
  });

  it("explains a pod: its owners and their reconciles, the scheduler's verdict per node, its worker and Events", async () => {
    await page.goto(`${dashboardUrl}/#nodes`);
    await page.waitForSelector("button.pod.ok");
    // One of the two pods the Deployment was created with (the scale-up's have a longer story).
    const podKey = `default/${firstPods[0]}`;
    await page.click(`button.pod[data-pod="${podKey}"]`);
    await page.waitForSelector(`aside[data-detail="${podKey}"]`);
    // The chain: Deployment → ReplicaSet → Pod, each owner with its controller's reconcile.
    await page.waitForFunction(`document.querySelectorAll(".chain .because strong").length === 2`, {
      timeout: 5_000,
    });
    expect(
      await page.$$eval(".chain > li", (items) => items.map((li) => li.getAttribute("data-chain"))),
    ).toEqual(["Deployment", "ReplicaSet", "Pod"]);
    expect(await page.$$eval(".chain .because strong", (s) => s.map((e) => e.textContent))).toEqual([
      "deployment",
      "replicaset",
    ]);
    // Who wrote each: kubectl created and scaled the Deployment; the controllers wrote the rest.
    const written = await page.$$eval(".chain > li", (items) =>
      items.map((li) => [...li.querySelectorAll("code")].map((c) => c.textContent).sort()),
    );
    expect(written).toEqual([
      ["kube-controller-manager (status)", "kubectl (scale)", "kubectl-create"],
      ["kube-controller-manager", "kube-controller-manager (status)"],
      ["kube-controller-manager", "kubelet (status)"],
    ]);
    // Both nodes passed the filters and were scored; the one picked is the pod's node.
    await page.waitForSelector("[data-decision=Scheduled]");
    const scored = await page.$$eval("tr[data-score-node]", (rows) =>
      rows.map((r) => r.getAttribute("data-score-node")),
    );
    expect(scored.sort()).toEqual(["node-1", "node-2"]);
    const picked = await page.$eval("tr.chosen", (r) => r.getAttribute("data-score-node"));
    const node = (
      await kubectl("get", "pod", podKey.split("/")[1]!, "-o", "jsonpath={.spec.nodeName}")
    ).trim();
    expect(picked).toBe(node);
    expect(await page.$eval(".worker strong", (e) => e.textContent)).toBe("sync");
    await page.waitForFunction(
      `[...document.querySelectorAll(".events td")].some((td) => td.textContent === "Scheduled")`,
      { timeout: 5_000 },
    );
    // Its creation, write by write: the ReplicaSet controller's create, the reconcile that made it,
    // the Deployment controller's write of the ReplicaSet, its reconcile, and kubectl's write.
    await page.click("button.trace-it");
    await page.waitForSelector("p.selected-entry");
    expect(await page.$eval("p.selected-entry", (p) => p.textContent)).toMatch(
      new RegExp(`replicaset-controller create pods ${podKey} → 201 rv \\d+$`),
    );
    const causes = await page.$$eval(".causes button", (b) =>
      b.map((e) => e.textContent!.replace(/^\+[\d.]+s /, "")),
    );
    expect(causes).toEqual([
      expect.stringMatching(
        /^kube-controller-manager-1 reconciles replicaset default\/web-[a-z0-9]+ \(object added\) → success$/,
      ),
      expect.stringMatching(
        /^deployment-controller create replicasets\.apps default\/web-[a-z0-9]+ → 201 rv \d+$/,
      ),
      "kube-controller-manager-1 reconciles deployment default/web (object added) → success",
    ]);
    expect(await page.$eval("p.end", (p) => p.textContent)).toMatch(
      /^rv \d+ of default\/web was written by no recorded component: a user's or another client's write/,
    );
    await page.goto(`${dashboardUrl}/#nodes`);
    await page.waitForSelector("button.pod.ok");
    await page.click(`button.pod[data-pod="${podKey}"]`);
    await page.waitForSelector(`aside[data-detail="${podKey}"]`);
    // Escape closes it.
    await page.keyboard.press("Escape");
    await page.waitForFunction(`document.querySelector("aside.detail") === null`, { timeout: 2_000 });
  });

  it("shows the machinery: leaders, each controller's queue and reconciles, the scheduler and the kubelets", async () => {
    await page.goto(`${dashboardUrl}/#nodes`);
    await page.waitForSelector("article.node");
    await page.keyboard.press("4");
    await page.waitForSelector('main[data-view="machinery"]');
    await page.waitForSelector('tr[data-row="kube-controller-manager-1/replicaset"]');
    const row = await page.$$eval('tr[data-row="kube-controller-manager-1/replicaset"] td', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(row.slice(0, 3)).toEqual(["replicaset", "kube-controller-manager-1", "0"]);
    expect(Number(row[6])).toBeGreaterThan(0);
    // Its last reconciles open with Enter on the focused row.
    await page.focus('tr[data-row="kube-controller-manager-1/replicaset"] button');
    await page.keyboard.press("Enter");
    await page.waitForSelector("tr.details table.inner");
    expect(await page.$$eval("tr.details tbody tr", (rows) => rows.length)).toBeGreaterThan(0);
    expect(await page.$$eval(".leader", (l) => l.map((e) => e.getAttribute("data-lease")).sort())).toEqual([
      "kube-controller-manager",
      "kube-scheduler",
    ]);
    expect(
      await page.$$eval("table.kubelets tbody > tr > td:first-child", (tds) =>
        tds.map((td) => td.textContent),
      ),
    ).toEqual(["node-1", "node-2"]);
    expect(await page.$$eval(".scheduler tbody tr", (rows) => rows.length)).toBeGreaterThanOrEqual(5);
    // Each shared informer with its cache and its lag (not yet cached / not yet handled).
    const podsInformer = await page.$$eval('tr[data-informer="pods"] td', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(podsInformer[3]).toBe("yes");
    expect(podsInformer[5]).toMatch(/^\d+ \/ \d+$/);
    // The kubelets' own pod startup histogram: every pod started so far is counted in it.
    await page.waitForFunction(
      `Number(document.querySelector("[data-histogram]")?.getAttribute("data-total")) >= 5`,
      { timeout: 5_000 },
    );
    expect(await page.$$eval(".histogram .bar", (bars) => bars.length)).toBeGreaterThan(0);
  });

  it("opens a simulation's trace file and steps through it, forward and back, with each reconcile's cause", async () => {
    const result = await simulate({
      seed: 7,
      faults: false,
      builtins: ["replicaset"],
      setup: async (sim) => {
        await sim.client.resource(replicaSets, "default").create({
          metadata: { name: "web", namespace: "default" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: { containers: [{ name: "web", image: "nginx" }] },
            },
          },
        });
      },
    });
    const path = join(home, "run.json");
    writeTraceFile(path, result);
    await page.goto(`${dashboardUrl}/#trace`);
    await page.waitForSelector(".position");
    const input = await page.$('input[type="file"]');
    await input!.uploadFile(path);
    await page.waitForFunction(
      `document.querySelector(".position")?.textContent.startsWith("run.json: entry ${result.trace.length} of ${result.trace.length}")`,
      { timeout: 5_000 },
    );
    // Only the ReplicaSet's reconciles queued by a delivery: End, then back and forth among them.
    const shown = result.trace.flatMap((e, i) =>
      e.type === "reconcile" && e.controller === "replicaset" && e.trigger !== undefined ? [i] : [],
    );
    expect(shown.length).toBeGreaterThan(1);
    // (The filter may still hold the pod the last test followed: replace it.)
    await page.click("input[aria-label='filter entries']", { clickCount: 3 });
    await page.type("input[aria-label='filter entries']", "reconciles replicaset default/web (");
    await page.evaluate("document.activeElement.blur()");
    await page.keyboard.press("End");
    const last = shown.at(-1)!;
    await page.waitForSelector(`p.selected-entry[data-selected="${last}"]`);
    await page.keyboard.press("ArrowLeft");
    await page.waitForSelector(`p.selected-entry[data-selected="${shown.at(-2)}"]`);
    await page.keyboard.press("ArrowRight");
    await page.waitForSelector(`p.selected-entry[data-selected="${last}"]`);
    // Its cause is the write its trigger names, and that write's the reconcile that made it.
    const trigger = (result.trace[last] as { trigger: string }).trigger;
    const rv = trigger.split(" rv ")[1];
    const causes = await page.$$eval(".causes button", (b) => b.map((e) => e.textContent ?? ""));
    expect(causes[0]).toMatch(new RegExp(` rv ${rv}$`));
  }, 60_000);

  it("answers what it does not serve with a clear 4xx", async () => {
    const post = await fetch(`${dashboardUrl}/k8s/api/v1/namespaces/default/pods`, {
      method: "POST",
      body: "{}",
    });
    expect([post.status, await post.text()]).toEqual([405, "the dashboard only reads: GET\n"]);
    const outside = await fetch(`${dashboardUrl}/k8s/logs/`);
    expect([outside.status, await outside.text()]).toEqual([404, "the dashboard does not forward /logs/\n"]);
    const badWatch = await fetch(`${dashboardUrl}/watch?path=/api/v1/pods%3Fwatch%3D1`);
    expect(badWatch.status).toBe(400);
    expect(await badWatch.text()).toMatch(
      /^\/watch path "\/api\/v1\/pods\?watch=1" is not a collection of the API/,
    );
    // The server still answers afterwards.
    expect((await fetch(`${dashboardUrl}/config`)).status).toBe(200);
  });
});
