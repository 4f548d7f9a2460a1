// `npm run demo -- ha`: two controller managers and two schedulers, each
// pair competing for its Lease in kube-system. Mid-rollout the leaders are
// killed (they stop without releasing their Leases, as a crash would); the
// standbys take over once the Leases run out and the rollout carries on.
import { deployments } from "@reconcile/api";
import { clusterCA, newApiServer, startCluster } from "./cluster.js";
import { complete, deployment, runSteps, type Step, setImage } from "./story-demo.js";

/** Shorter than upstream's 15 s / 10 s / 2 s so that the takeover shows within seconds. */
const election = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 };

export async function runHaDemo(): Promise<boolean> {
  const server = newApiServer();
  const cluster = startCluster(server, {
    nodes: 3,
    controllerManagers: 2,
    schedulers: 2,
    election,
    rootCA: await clusterCA(),
  });
  let killed: string[] = [];
  const steps: Step[] = [
    {
      title: "create Deployment web (nginx:1.27) with 6 replicas",
      act: (c) =>
        c
          .resource(deployments, "default")
          .create(deployment(6, "nginx:1.27"))
          .then(() => {}),
      reached: (v) =>
        complete(v, 6, "nginx:1.27") &&
        cluster.controllerManagers.filter((m) => m.isLeader()).length === 1 &&
        cluster.schedulers.filter((s) => s.isLeader()).length === 1,
      expected: "one leader of each pair; 6 ready pods",
    },
    {
      title: "set image nginx:1.28, then kill the leading controller manager and scheduler",
      act: async (c) => {
        await setImage(c, "nginx:1.28");
        const leaders = [...cluster.controllerManagers, ...cluster.schedulers].filter((x) => x.isLeader());
        killed = leaders.map((x) => x.identity);
        await Promise.all(leaders.map((x) => x.kill()));
      },
      reached: (v) =>
        complete(v, 6, "nginx:1.28") &&
        killed.length === 2 &&
        !killed.includes(v.leaders["kube-controller-manager"] ?? "") &&
        !killed.includes(v.leaders["kube-scheduler"] ?? "") &&
        cluster.controllerManagers.filter((m) => m.isLeader()).length === 1 &&
        cluster.schedulers.filter((s) => s.isLeader()).length === 1,
      expected: `the standbys take over after the ${election.leaseDurationMs / 1000} s Leases run out; 6 ready pods of nginx:1.28`,
    },
  ];
  console.log(
    `Leases: ${election.leaseDurationMs / 1000} s duration, ${election.renewDeadlineMs / 1000} s renew deadline, ${election.retryPeriodMs / 1000} s retry (upstream: 15 / 10 / 2).\n`,
  );
  return runSteps(server, cluster, steps, "npm run demo -- ha");
}
