// Our own controllers under every fault, each with upstream's invariants (its eventual state
// under every fault; its bounds under the faults its design covers): the
// short run is part of `npm test` (builtin.test.ts), the full run is
// `pnpm sim` (10,000 seeds each, a JSON report in bench-results/sim-report.json).
import {
  type Deployment,
  deployments,
  getControllerOf,
  isPodActive,
  namespaces,
  nodes,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
  services,
} from "@reconcile/api";
import {
  defaultFaultRates,
  type FaultKind,
  type FaultRates,
  readyKubelet,
  type SimCluster,
  type SimulationOptions,
} from "../src/index.js";

export interface BuiltinScenario {
  readonly name: string;
  readonly options: Omit<SimulationOptions, "seed">;
  /** Seeds in `npm test`'s short run. Default 40. */
  readonly shortSeeds?: number;
  /** Seeds in `pnpm sim`'s full run (unless SEEDS is set). Default 10,000. */
  readonly fullSeeds?: number;
}

const labels = { app: "web" };
const template = (image: string) => ({
  metadata: { labels },
  spec: { containers: [{ name: "app", image }] },
});

/** The `default/web` ReplicaSet of `replicas` pods of `image`, which most scenarios and tests start from. */
export function webReplicaSet(replicas: number, image = "nginx:1"): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "default" },
    spec: { replicas, selector: { matchLabels: labels }, template: template(image) },
  };
}

async function activePodsOf(cluster: SimCluster, owner: { metadata?: { uid?: string } } | undefined) {
  return (await cluster.list(pods, "default")).filter(
    (p) => isPodActive(p as Pod) && getControllerOf(p)?.uid === owner?.metadata?.uid,
  );
}

const replicaSet: BuiltinScenario = {
  name: "replicaset",
  options: {
    builtins: ["replicaset"],
    setup: async (cluster) => {
      await cluster.client.resource(replicaSets, "default").create(webReplicaSet(3));
    },
    scenario: async (cluster) => {
      const client = cluster.client.resource(replicaSets, "default");
      for (const replicas of [7, 2, 4]) {
        await cluster.sleep(4_000);
        const rs = await client.get("web");
        await client.update({ ...rs, spec: { ...rs.spec!, replicas } });
      }
    },
    eventually: {
      "exactly spec.replicas pods, and status says so": async (cluster) => {
        const [rs] = await cluster.list(replicaSets, "default");
        const active = (await activePodsOf(cluster, rs)).length;
        if (active !== 4) return `${active} active pods for 4 replicas`;
        if (rs?.status?.replicas !== 4) return `status.replicas is ${rs?.status?.replicas}`;
        if (rs.status.observedGeneration !== rs.metadata?.generation)
          return `observedGeneration ${rs.status.observedGeneration} behind generation ${rs.metadata?.generation}`;
      },
    },
  },
};

const deployment: BuiltinScenario = {
  name: "deployment",
  options: {
    builtins: ["deployment", "replicaset"],
    controllers: [readyKubelet()],
    setup: async (cluster) => {
      const d: Deployment = {
        metadata: { name: "web", namespace: "default" },
        spec: { replicas: 4, selector: { matchLabels: labels }, template: template("nginx:1") },
      };
      await cluster.client.resource(deployments, "default").create(d);
    },
    scenario: async (cluster) => {
      await cluster.sleep(5_000);
      const client = cluster.client.resource(deployments, "default");
      const d = await client.get("web");
      await client.update({ ...d, spec: { ...d.spec!, template: template("nginx:2") } });
    },
    eventually: {
      "the rollout completes: every pod on the new template, the old ReplicaSet at 0": async (cluster) => {
        const [d] = await cluster.list(deployments, "default");
        if (d?.status?.observedGeneration !== d?.metadata?.generation) return "observedGeneration behind";
        if (d?.status?.updatedReplicas !== 4 || d.status.availableReplicas !== 4)
          return `updated ${d?.status?.updatedReplicas}, available ${d?.status?.availableReplicas}`;
        for (const rs of await cluster.list(replicaSets, "default")) {
          const image = rs.spec?.template?.spec?.containers[0]?.image;
          const want = image === "nginx:2" ? 4 : 0;
          if ((rs.spec?.replicas ?? 0) !== want)
            return `${rs.metadata?.name} (${image}) has ${rs.spec?.replicas} replicas`;
          const active = (await activePodsOf(cluster, rs)).length;
          if (active !== want) return `${rs.metadata?.name} (${image}) has ${active} active pods`;
        }
      },
    },
  },
};

const namespace: BuiltinScenario = {
  name: "namespace",
  options: {
    builtins: ["namespace"],
    setup: async (cluster) => {
      await cluster.client.resource(namespaces).create({ metadata: { name: "shop" } });
      for (let i = 0; i < 3; i++) {
        await cluster.client.resource(services, "shop").create({
          metadata: { name: `svc-${i}` },
          spec: { ports: [{ port: 80 }] },
        });
        await cluster.client.resource(pods, "shop").create({
          metadata: { name: `pod-${i}` },
          spec: { containers: [{ name: "app", image: "nginx" }] },
        });
      }
    },
    scenario: async (cluster) => {
      await cluster.sleep(2_000);
      await cluster.client.resource(namespaces).delete("shop");
    },
    eventually: {
      "the namespace and everything in it are gone": async (cluster) => {
        const left = [
          ...(await cluster.list(pods, "shop")).map((p) => `pod ${p.metadata?.name}`),
          ...(await cluster.list(services, "shop")).map((s) => `service ${s.metadata?.name}`),
          ...(await cluster.list(namespaces))
            .filter((n) => n.metadata?.name === "shop")
            .map(() => "namespace shop"),
        ];
        if (left.length > 0) return `left: ${left.join(", ")}`;
      },
    },
  },
};

/** Every fault but `kinds`. */
function without(...kinds: FaultKind[]): FaultRates {
  return Object.fromEntries(
    Object.entries(defaultFaultRates).filter(([kind]) => !kinds.includes(kind as FaultKind)),
  );
}

/**
 * The ReplicaSet's upper bound holds when the controller can trust what it
 * saw of its own writes. Upstream's design leaves two holes, both found
 * here: a create whose answer is lost counts as failed (expectations are
 * lowered, and a sync before the watch shows the pod creates another), and a
 * restart on a stale list sees fewer pods than exist. The extra pods are
 * deleted afterwards, which the all-faults scenario checks.
 */
const replicaSetBounded: BuiltinScenario = {
  name: "replicaset-bounded",
  options: {
    ...replicaSet.options,
    faults: without("lostResponse", "staleRestart"),
    invariants: {
      // Above the current size during a scale-down (its deletions in flight), never above the
      // largest size asked for: expectations keep a slow watch from causing extra pods.
      "never more active pods than the largest size asked for (7)": async (cluster) => {
        const [rs] = await cluster.list(replicaSets, "default");
        const active = (await activePodsOf(cluster, rs)).length;
        if (active > 7) return `${active} active pods, spec ${rs?.spec?.replicas}`;
      },
    },
  },
};

/**
 * The Deployment's maxSurge bound holds on what the controller has seen.
 * With a blind ReplicaSet cache (a watch late, cut or refused while the
 * relist fails too, a stale restart) or a lost answer to its create, a new
 * ReplicaSet is sized before the old one is in the cache and the sizes add
 * up past the bound, as upstream's, whose controller keeps no expectations
 * for ReplicaSets. With every read answered, errors on writes and crashes
 * never break it.
 */
const deploymentBounded: BuiltinScenario = {
  name: "deployment-bounded",
  options: {
    ...deployment.options,
    faults: without("watchDelay", "watchCut", "staleRestart", "lostResponse"),
    faultsWhere: ({ verb }) => verb !== "list" && verb !== "watch" && verb !== "get",
    invariants: {
      // What the controller promises is the ReplicaSets' sizes: pods of an old ReplicaSet whose
      // deletion failed (a 429, then a crash) still run while the new one grows, as upstream.
      "the ReplicaSets never add up to more than replicas + maxSurge (25% of 4 = 1)": async (cluster) => {
        const sizes = (await cluster.list(replicaSets, "default")).map((rs) => rs.spec?.replicas ?? 0);
        const total = sizes.reduce((a, b) => a + b, 0);
        if (total > 5) return `the ReplicaSets add up to ${total} (${sizes.join(" + ")})`;
      },
    },
  },
};

/**
 * Two controller managers elect a leader; crashes and lease-write faults
 * hand the Lease over. Besides the ReplicaSet's eventual state, no manager
 * may write while another holds the Lease (checked on every write).
 */
const replicaSetHA: BuiltinScenario = {
  name: "replicaset-ha",
  options: { ...replicaSet.options, builtinReplicas: 2 },
};

/**
 * Three simulated nodes with the scheduler, the ReplicaSet controller, the
 * node lifecycle and taint eviction controllers; one node stops for 400 s
 * (its kubelet dies: no heartbeat, no Lease). Its pods are evicted after the
 * 300 s default toleration and replaced on the other nodes; when it comes back
 * it cleans up. Eventually six pods run, each on a Ready node.
 */
const nodeFailure: BuiltinScenario = {
  name: "node-failure",
  // About 0.3 s a run: three kubelets and 450 s of virtual time.
  shortSeeds: 12,
  fullSeeds: 1_000,
  options: {
    nodes: 3,
    builtins: ["replicaset", "nodelifecycle", "taint-eviction-controller"],
    setup: async (cluster) => {
      await cluster.client.resource(replicaSets, "default").create(webReplicaSet(6));
    },
    scenario: async (cluster) => {
      await cluster.sleep(20_000);
      cluster.crash("node-2", 400_000);
    },
    eventually: {
      "six pods run, each on a Ready node": async (cluster) => {
        const ready = new Set(
          (await cluster.list(nodes))
            .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
            .map((n) => n.metadata?.name),
        );
        const running = (await cluster.list(pods, "default")).filter(
          (p) =>
            p.status?.phase === "Running" && !p.metadata?.deletionTimestamp && ready.has(p.spec?.nodeName),
        );
        if (running.length !== 6) return `${running.length} pods run on Ready nodes`;
      },
    },
  },
};

export const builtinScenarios: readonly BuiltinScenario[] = [
  nodeFailure,
  replicaSetHA,
  replicaSet,
  replicaSetBounded,
  deployment,
  deploymentBounded,
  namespace,
];
