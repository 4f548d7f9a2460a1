import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterRoleBindings, clusterRoles, configMaps, pods, replicaSets } from "@reconcile/api";
import { newControllerManagedBy } from "@reconcile/runtime";
import { describe, expect, it } from "vitest";
import { webReplicaSet } from "../scenarios/builtin.js";
import {
  explore,
  formatReproducer,
  managerComponent,
  readTraceFile,
  runSimCommand,
  type SimCluster,
  simulate,
} from "./index.js";

describe("simulate", () => {
  it("rejects a component that cannot be built: a mistake in the test, not a finding", async () => {
    await expect(
      simulate({
        seed: 1,
        controllers: [
          {
            name: "broken",
            construct: () => {
              throw new Error("no client");
            },
          },
        ],
      }),
    ).rejects.toThrow('simulate: component "broken" failed to construct: no client');
  });

  it("calls a controller whose own writes requeue it at once a livelock", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      settleBudgetMs: 120_000,
      setup: async (cluster) => {
        await cluster.client
          .resource(configMaps, "default")
          .create({ metadata: { name: "flap", namespace: "default" } });
      },
      controllers: [
        managerComponent("flapper", (manager) => {
          newControllerManagedBy(manager)
            .for(configMaps)
            .complete(async (request, { client, get, signal }) => {
              const cm = get(configMaps, request);
              if (cm === undefined) return;
              const next = cm.data?.n === "1" ? "0" : "1";
              await client
                .resource(configMaps, request.namespace)
                .patch(request.name, { data: { n: next } }, { type: "merge", signal });
              return { requeueAfterMs: 5_000 };
            });
        }),
      ],
    });
    expect(result.violation?.invariant).toBe("livelock");
    expect(result.violation?.at).toBe(0);
  });

  it("calls a reconcile that keeps failing not steady", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      settleBudgetMs: 300_000,
      setup: async (cluster) => {
        await cluster.client
          .resource(configMaps, "default")
          .create({ metadata: { name: "bad", namespace: "default" } });
      },
      controllers: [
        managerComponent("failing", (manager) => {
          newControllerManagedBy(manager)
            .for(configMaps)
            .complete(async () => {
              throw new Error("cannot reconcile");
            });
        }),
      ],
    });
    expect(result.violation?.invariant).toBe("steady-state");
    expect(result.violation?.message).toBe(
      "still failing 300000 ms after the faults stopped: failing configmap default/bad: cannot reconcile",
    );
    expect(result.trace.some((e) => e.type === "reconcile" && e.error === "cannot reconcile")).toBe(true);
  });

  it("reports a scenario that waits for ever", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      scenario: () => new Promise(() => {}),
    });
    expect(result.violation).toEqual({
      invariant: "scenario",
      message: "the scenario waits on something that never happens (no timer is left)",
      // Time runs on to the end of the fault window and the quiet time after it, then nothing is left.
      at: 90_000,
    });
  });

  it("reports the first broken invariant with the moment it broke", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      scenario: async (cluster) => {
        await cluster.sleep(2_500);
        await cluster.client
          .resource(configMaps, "default")
          .create({ metadata: { name: "late", namespace: "default" } });
      },
      invariants: {
        "no ConfigMap named late": async (cluster) =>
          (await cluster.list(configMaps, "default")).some((c) => c.metadata?.name === "late")
            ? "late exists"
            : undefined,
      },
    });
    expect(result.violation).toEqual({
      invariant: "no ConfigMap named late",
      message: "late exists",
      at: 2_500,
    });
  });
});

describe("identities", () => {
  // An operator that copies each ConfigMap, run as its own ServiceAccount.
  const copier = {
    ...managerComponent("copier", (manager) => {
      newControllerManagedBy(manager)
        .for(configMaps)
        .complete(async (request, { client, get, signal }) => {
          const source = get(configMaps, request);
          if (source === undefined || request.name.startsWith("copy-")) return;
          await client
            .resource(configMaps, request.namespace)
            .create({ metadata: { name: `copy-${request.name}` }, data: { ...source.data } }, { signal })
            .catch((error: { status?: { code?: number } }) => {
              if (error.status?.code !== 409) throw error;
            });
        });
    }),
    user: {
      username: "system:serviceaccount:default:copier",
      groups: ["system:serviceaccounts", "system:serviceaccounts:default"],
    },
  };
  const scenario = async (cluster: SimCluster) => {
    await cluster.client
      .resource(configMaps, "default")
      .create({ metadata: { name: "a" }, data: { k: "v" } });
  };
  const grant = (verbs: string[]) => async (cluster: SimCluster) => {
    await cluster.client.resource(clusterRoles).create({
      metadata: { name: "copier" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs }],
    });
    await cluster.client.resource(clusterRoleBindings).create({
      metadata: { name: "copier" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "copier" },
      subjects: [{ kind: "ServiceAccount", name: "copier", namespace: "default" }],
    });
  };

  it("a component denied a call its identity lacks breaks `authorized`, naming what it was denied", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      controllers: [copier],
      setup: grant(["list", "watch"]),
      scenario,
    });
    expect(result.violation).toEqual({
      invariant: "authorized",
      message: "system:serviceaccount:default:copier was denied create configmaps in default",
      at: 0,
    });
  });

  it("holds once its RBAC grants what it does, under every fault", async () => {
    const report = await explore({
      seeds: 10,
      controllers: [copier],
      setup: grant(["get", "list", "watch", "create"]),
      scenario,
      eventually: {
        "the copy exists": async (cluster) =>
          (await cluster.list(configMaps, "default")).some((c) => c.metadata?.name === "copy-a")
            ? undefined
            : "no copy-a",
      },
    });
    if (report.failure !== undefined) throw new Error(formatReproducer(report.failure, report.runs));
    expect(report.runs).toBe(10);
  });

  it("runs the built-in components as their own identities: kubelets, scheduler, each controller", async () => {
    const result = await simulate({
      seed: 2,
      faults: false,
      builtins: ["replicaset"],
      nodes: 2,
      scenario: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(webReplicaSet(2));
      },
      eventually: {
        "two pods run": async (cluster) =>
          (await cluster.list(pods, "default")).filter((p) => p.status?.phase === "Running").length === 2
            ? undefined
            : "not yet",
      },
    });
    expect(result.ok).toBe(true);
    const callers = new Set(
      result.trace.filter((e) => e.type === "call").map((e) => (e as { component: string }).component),
    );
    expect([...callers].sort()).toEqual([
      "kube-controller-manager",
      "kube-scheduler",
      "node-1",
      "node-2",
      "user",
    ]);
    // The controller manager made the ServiceAccount its replicaset controller runs as.
    const made = result.trace.filter(
      (e) => e.type === "call" && e.verb === "create" && e.resource === "serviceaccounts" && e.code === 200,
    );
    expect(made.map((e) => (e as { target: string }).target)).toEqual(["kube-system/replicaset-controller"]);
  });
});

describe("leader election", () => {
  it("calls a write by a component that does not hold its Lease a violation", async () => {
    const result = await simulate({
      seed: 1,
      faults: false,
      controllers: [
        {
          name: "usurper",
          leaderElection: { namespace: "kube-system", name: "usurper-lock" },
          construct: ({ client }) => ({
            run: async () => {
              await client.resource(configMaps, "default").create({ metadata: { name: "mine" } });
            },
          }),
        },
      ],
    });
    expect(result.violation).toEqual({
      invariant: "leader:usurper",
      message: "usurper wrote configmaps while the Lease kube-system/usurper-lock was held by nobody",
      at: 0,
    });
  });

  it("hands the Lease over when the leading controller manager crashes", async () => {
    const result = await simulate({
      seed: 3,
      builtins: ["replicaset"],
      builtinReplicas: 2,
      faults: false,
      setup: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(webReplicaSet(2));
      },
      scenario: async (cluster) => {
        await cluster.sleep(20_000);
        cluster.crash("kube-controller-manager-1", 60_000);
        await cluster.sleep(30_000);
        const rs = await cluster.client.resource(replicaSets, "default").get("web");
        await cluster.client
          .resource(replicaSets, "default")
          .update({ ...rs, spec: { ...rs.spec!, replicas: 4 } });
      },
      eventually: {
        "4 pods": async (cluster) => {
          const n = (await cluster.list(pods, "default")).length;
          return n === 4 ? undefined : `${n} pods`;
        },
      },
    });
    expect(result.ok).toBe(true);
    const renewals = result.trace.flatMap((e) =>
      e.type === "call" &&
      e.resource === "leases.coordination.k8s.io" &&
      e.verb === "update" &&
      e.code === 200
        ? [{ t: e.t, by: e.component }]
        : [],
    );
    // The first manager renews every 2 s until it dies at 20 s; the second takes over once the
    // Lease has gone 15 s unrenewed, and the scale-up at 50 s is its work.
    expect(renewals.filter((r) => r.by === "kube-controller-manager-1").every((r) => r.t <= 20_000)).toBe(
      true,
    );
    const takeover = renewals.find((r) => r.by === "kube-controller-manager-2");
    expect(takeover!.t).toBeGreaterThan(20_000 + 10_000);
    expect(takeover!.t).toBeLessThan(20_000 + 15_000 + 2_500);
    const creates = result.trace.flatMap((e) =>
      e.type === "call" && e.verb === "create" && e.resource === "pods" ? [e.component] : [],
    );
    expect(creates).toEqual([
      "kube-controller-manager-1",
      "kube-controller-manager-1",
      "kube-controller-manager-2",
      "kube-controller-manager-2",
    ]);
  });
});

describe("clock skew", () => {
  it("a standby whose clock reads 30 s ahead waits for the Lease as one on time does", async () => {
    const skew = {
      kind: "clockSkew",
      component: "kube-controller-manager-2",
      point: "clock",
      index: 0,
      amount: 30_000,
    } as const;
    const result = await simulate({
      seed: 3,
      builtins: ["replicaset"],
      builtinReplicas: 2,
      faults: { plan: [skew] },
      setup: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(webReplicaSet(2));
      },
      scenario: async (cluster) => {
        await cluster.sleep(20_000);
        cluster.crash("kube-controller-manager-1", 60_000);
      },
    });
    expect(result.ok).toBe(true);
    expect(result.faults).toEqual([skew]);
    const holders = result.trace.flatMap((e) =>
      e.type === "call" &&
      e.resource === "leases.coordination.k8s.io" &&
      e.verb === "update" &&
      e.code === 200
        ? [{ t: e.t, by: e.component }]
        : [],
    );
    // The skewed standby never renews while the leader does; it takes over once it has watched the
    // Lease go unrenewed for a lease duration by its own observation, 15 s after the last renewal.
    const takeover = holders.find((r) => r.by === "kube-controller-manager-2");
    expect(holders.filter((r) => r.t < takeover!.t).every((r) => r.by === "kube-controller-manager-1")).toBe(
      true,
    );
    expect(takeover!.t).toBeGreaterThan(20_000 + 10_000);
    expect(takeover!.t).toBeLessThan(20_000 + 15_000 + 2_500);
  });
});

describe("trace files", () => {
  it("a failure writes its trace where RECONCILE_SIM_TRACE_DIR says, and reconcile-sim story reads it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-trace-"));
    process.env.RECONCILE_SIM_TRACE_DIR = dir;
    try {
      const report = await explore({
        seeds: 3,
        faults: false,
        scenario: async (cluster) => {
          await cluster.sleep(1_500);
          await cluster.client.resource(configMaps, "default").create({ metadata: { name: "late" } });
        },
        invariants: {
          "no late ConfigMap": async (cluster) =>
            (await cluster.list(configMaps, "default")).length > 0 ? "late exists" : undefined,
        },
      });
      const path = report.failure?.traceFile;
      expect(path).toBe(join(dir, "seed-1-no-late-ConfigMap.json"));
      expect(formatReproducer(report.failure!)).toContain(`trace: ${path}`);
      const file = readTraceFile(path!);
      expect(file.seed).toBe(1);
      expect(file.violation).toEqual({ invariant: "no late ConfigMap", message: "late exists", at: 1_500 });
      expect(file.traceHash).toBe(report.failure!.run.traceHash);
      let printed = "";
      expect(runSimCommand(["story", path!, "--lines", "1"], (text) => (printed += text))).toBe(0);
      expect(printed).toBe(
        [
          'seed 1: invariant "no late ConfigMap" broken at +1.500s: late exists',
          "faults: 0",
          "+1.500s user create configmaps default/late → 200 rv 8",
          "",
        ].join("\n"),
      );
    } finally {
      delete process.env.RECONCILE_SIM_TRACE_DIR;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reconcile-sim refuses what is not a trace, and says how it is used", () => {
    let printed = "";
    expect(runSimCommand([], (text) => (printed += text))).toBe(2);
    expect(printed).toBe("usage: reconcile-sim story <trace.json> [--lines N] [--events]\n");
    const dir = mkdtempSync(join(tmpdir(), "sim-trace-"));
    try {
      writeFileSync(join(dir, "x.json"), "{}");
      printed = "";
      expect(runSimCommand(["story", join(dir, "x.json")], (text) => (printed += text))).toBe(1);
      expect(printed).toBe(
        `reconcile-sim: ${join(dir, "x.json")} is not a reconcile-sim trace (format reconcile-sim-trace/v1)\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("simulated nodes", () => {
  it("crash a container where the fault plan says, and the kubelet restarts it", async () => {
    const result = await simulate({
      seed: 1,
      nodes: 1,
      builtins: ["replicaset"],
      faults: {
        plan: [{ kind: "containerCrash", component: "node-1", point: "container", index: 0, amount: 5_000 }],
      },
      setup: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(webReplicaSet(1));
      },
      eventually: {
        "the pod runs again after one restart": async (cluster) => {
          const [pod] = await cluster.list(pods, "default");
          const status = pod?.status?.containerStatuses?.[0];
          if (status?.restartCount !== 1 || status.state?.running === undefined)
            return `restarts ${status?.restartCount}, state ${JSON.stringify(status?.state)}`;
        },
      },
    });
    expect(result.ok).toBe(true);
    expect(result.faults).toEqual([
      { kind: "containerCrash", component: "node-1", point: "container", index: 0, amount: 5_000 },
    ]);
    const fault = result.trace.find((e) => e.type === "fault");
    expect(fault?.type === "fault" && fault.on).toMatch(/^container default\/web-[a-z0-9]{5}\/app#0$/);
  });

  it("makes a container with a readiness probe unready for a while, then Ready again", async () => {
    const unready = {
      kind: "containerUnready",
      component: "node-1",
      point: "container",
      index: 0,
      amount: 10_000,
    } as const;
    const readiness: boolean[] = [];
    const probed = webReplicaSet(1);
    probed.spec!.template!.spec!.containers[0]!.readinessProbe = {
      httpGet: { path: "/", port: 80 },
      periodSeconds: 1,
      failureThreshold: 1,
    };
    const result = await simulate({
      seed: 1,
      nodes: 1,
      builtins: ["replicaset"],
      faults: { plan: [unready] },
      setup: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(probed);
      },
      scenario: async (cluster) => {
        // Sample the pod's Ready condition each second for 20 s.
        for (let i = 0; i < 20; i++) {
          await cluster.sleep(1_000);
          const [pod] = await cluster.list(pods, "default");
          readiness.push(pod?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True");
        }
      },
    });
    expect(result.ok).toBe(true);
    expect(result.faults).toEqual([unready]);
    // Ready, then NotReady for about the fault's 10 s, then Ready again for good.
    const firstReady = readiness.indexOf(true);
    const wentUnready = readiness.indexOf(false, firstReady);
    const back = readiness.indexOf(true, wentUnready);
    expect([firstReady >= 0, wentUnready > firstReady, back > wentUnready]).toEqual([true, true, true]);
    expect(back - wentUnready).toBeGreaterThanOrEqual(9);
    expect(back - wentUnready).toBeLessThanOrEqual(11);
    expect(readiness.slice(back).every(Boolean)).toBe(true);
  });
});

describe("where and which faults", () => {
  const oneReplicaSet = async (cluster: SimCluster) => {
    await cluster.client.resource(replicaSets, "default").create(webReplicaSet(3));
  };

  it("faultsWhere keeps every other decision point free of faults", async () => {
    const result = await simulate({
      seed: 2,
      builtins: ["replicaset"],
      setup: oneReplicaSet,
      faults: { serverError: 0.5, watchCut: 0.5 },
      faultsWhere: ({ point, verb }) => point === "call" && verb === "create",
    });
    expect(result.faults.length).toBeGreaterThan(0);
    for (const fault of result.faults) expect(fault).toMatchObject({ kind: "serverError", point: "call" });
    const struck = result.trace.flatMap((e) => (e.type === "fault" ? [e.on] : []));
    for (const on of struck) expect(on).toMatch(/^create /);
  });

  it("RECONCILE_SIM_SEED runs that one seed of an exploration, RECONCILE_SIM_SEEDS that many", async () => {
    let simulated = 0;
    const options = {
      faults: false as const,
      setup: async () => {
        simulated++;
      },
    };
    process.env.RECONCILE_SIM_SEED = "42";
    try {
      expect((await explore({ ...options, seeds: 100 })).runs).toBe(1);
    } finally {
      delete process.env.RECONCILE_SIM_SEED;
    }
    process.env.RECONCILE_SIM_SEEDS = "3";
    try {
      expect((await explore({ ...options, seeds: 100 })).runs).toBe(3);
    } finally {
      delete process.env.RECONCILE_SIM_SEEDS;
    }
    expect(simulated).toBe(4);
  });
});
