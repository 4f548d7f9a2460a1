import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { configMaps, replicaSets } from "@reconcile/api";
import { newControllerManagedBy } from "@reconcile/runtime";
import { describe, expect, it } from "vitest";
import { webReplicaSet } from "../scenarios/builtin.js";
import { managerComponent, type SimulationOptions, simulate } from "./index.js";

const replicaSet: SimulationOptions = {
  seed: 0,
  builtins: ["replicaset"],
  setup: async (cluster) => {
    await cluster.client.resource(replicaSets, "default").create(webReplicaSet(3));
  },
  scenario: async (cluster) => {
    await cluster.sleep(2_000);
    const rs = await cluster.client.resource(replicaSets, "default").get("web");
    await cluster.client
      .resource(replicaSets, "default")
      .update({ ...rs, spec: { ...rs.spec!, replicas: 6 } });
    await cluster.sleep(4_000);
    await cluster.client.resource(replicaSets, "default").delete("web");
  },
};

const operator: SimulationOptions = {
  seed: 0,
  controllers: [
    managerComponent("labeller", (manager) => {
      newControllerManagedBy(manager)
        .for(configMaps)
        .complete(async (request, { client, get, signal }) => {
          const cm = get(configMaps, request);
          if (cm === undefined || cm.metadata?.labels?.seen === "true") return;
          await client
            .resource(configMaps, request.namespace)
            .patch(request.name, { metadata: { labels: { seen: "true" } } }, { type: "merge", signal });
        });
    }),
  ],
  scenario: async (cluster) => {
    for (let i = 0; i < 5; i++) {
      await cluster.client
        .resource(configMaps, "default")
        .create({ metadata: { generateName: "c-", namespace: "default" } });
      await cluster.sleep(700);
    }
  },
};

describe("a run", () => {
  for (const [name, options] of [
    ["the built-in ReplicaSet controller and the garbage collector", replicaSet],
    ["an operator on @reconcile/runtime", operator],
    [
      "the scheduler and three kubelets",
      { ...replicaSet, nodes: 3, scenario: undefined, faultWindowMs: 20_000 } satisfies SimulationOptions,
    ],
  ] as const) {
    it(`repeats byte for byte from its seed: ${name}`, async () => {
      for (const seed of [1, 2, 3]) {
        const first = await simulate({ ...options, seed });
        const second = await simulate({ ...options, seed });
        expect(first.faults.length).toBeGreaterThan(0);
        expect(second.traceHash).toBe(first.traceHash);
        expect(JSON.stringify(second.trace)).toBe(JSON.stringify(first.trace));
        expect(second.faults).toEqual(first.faults);
      }
      const hashes = new Set<string>();
      for (const seed of [1, 2, 3, 4, 5]) hashes.add((await simulate({ ...options, seed })).traceHash);
      expect(hashes.size).toBe(5);
    });
  }

  it("replays from its fault plan alone", async () => {
    const first = await simulate({ ...operator, seed: 7 });
    const replayed = await simulate({ ...operator, seed: 7, faults: { plan: first.faults } });
    expect(replayed.traceHash).toBe(first.traceHash);
  });

  it("without faults meets none, and every entry is traced", async () => {
    const result = await simulate({ ...replicaSet, seed: 1, faults: false });
    expect(result.faults).toEqual([]);
    expect(result.ok).toBe(true);
    const creates = result.trace.filter(
      (e) => e.type === "call" && e.verb === "create" && e.resource === "pods" && e.code === 200,
    );
    expect(creates).toHaveLength(6);
    expect(
      result.trace.filter((e) => e.type === "lifecycle").map((e) => e.type === "lifecycle" && e.what),
    ).toEqual(["start", "stop"]);
  });
});

// Every source of randomness and real time in the packages, each either injected or listed
// here with why it cannot change a simulated run. A new one fails this test until it is
// injected (a `random`/`clock` option) or listed.
const allowed: Record<string, string> = {
  "clock/src/clock.ts": "realClock itself",
  "clock/src/random.ts": "realRandom and uuidFrom's default, used only when no source is injected",
  "workqueue/src/clock.ts": "the workqueue's real clock, used only when no clock is injected",
  "apiserver/src/http/tls.ts": "certificates for HTTPS listeners; simulations run in process",
  "apiserver/src/http/auth/tokens.ts": "token ids for HTTPS listeners; simulations run in process",
  "apiserver/src/http/request-metrics.ts": "request durations for metrics only",
  "apiserver/src/http/audit/event.ts":
    "audit IDs of HTTP requests (a header and the audit log); simulations run in process",
  "apiserver/src/admission/webhook/dispatcher.ts": "webhook call durations for metrics only",
  "apiserver/src/admission/chain.ts": "admission plugin and phase durations for metrics only, while observed",
  "certificates/src/authority.ts":
    "certificate serial numbers, random as crypto/rand's; nothing else in a certificate or a run depends on them",
  "client/src/kubeconfig/kube-config.ts": "re-reading kubeconfig files",
  "runtime/src/envtest/test-environment.ts": "envtest's token and start-up deadline",
  "scheduler/src/scheduler.ts":
    "cycle slices by wall time unless cyclesPerTurn is set, as simulations set it",
  "sim/src/explore.ts": "the explorer's wall-time limit",
  "storage-etcd/src/etcd-storage.ts": "etcd deadlines; simulations use the memory storage",
  "storage-etcd/src/etcd-process.ts": "starting an etcd process",
};

const packagesDir = fileURLToPath(new URL("../../", import.meta.url));
const nondeterministic =
  /Math\.random\(\)|randomUUID\(\)|randomBytes\(|Date\.now\(\)|new Date\(\)|performance\.now\(\)/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "testing" || entry.name === "node_modules" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("the randomness audit", () => {
  it("finds no source of randomness or real time that is neither injected nor listed", () => {
    const found = new Set<string>();
    for (const pkg of readdirSync(packagesDir)) {
      let files: string[];
      try {
        files = sources(join(packagesDir, pkg, "src"));
      } catch {
        continue;
      }
      for (const file of files) {
        const lines = readFileSync(file, "utf8").split("\n");
        // Comments and `?? Math.random` defaults (used only when nothing is injected) are fine.
        const hit = lines.some((line) => {
          const code = line.replace(/\/\/.*$/, "").replace(/\/\*.*?\*\/|^\s*\*.*$/g, "");
          return nondeterministic.test(code.replace(/\?\? Math\.random|= Math\.random/g, ""));
        });
        if (hit) found.add(relative(packagesDir, file));
      }
    }
    const unlisted = [...found].filter((file) => allowed[file] === undefined).sort();
    expect(unlisted).toEqual([]);
    // A listed file that no longer needs it is taken off the list.
    expect(Object.keys(allowed).filter((file) => !found.has(file))).toEqual([]);
  });
});
