// `npm run demo` tells the whole story (Deployment, scheduler, nodes, a lost
// node; `npm run demo -- story --dashboard` with the web view following it); `npm run demo -- ha` shows leader election taking over mid-rollout;
// `npm run demo -- serve [--nodes N]` serves the cluster to kubectl;
// `npm run demo -- replicaset` is the first slice (a ReplicaSet alone);
// `npm run demo -- workqueue` tours the workqueue.
import { runHaDemo } from "./ha-demo.js";
import { runReplicaSetDemo } from "./replicaset-demo.js";
import { serve } from "./serve.js";
import { runStoryDemo } from "./story-demo.js";
import { runWorkqueueDemo } from "./workqueue-demo.js";

const scenarios: Record<string, () => Promise<boolean>> = {
  story: runStoryDemo,
  ha: runHaDemo,
  serve,
  replicaset: runReplicaSetDemo,
  workqueue: runWorkqueueDemo,
};

const name = process.argv[2] ?? "story";
const scenario = scenarios[name];
if (scenario === undefined) {
  console.error(`unknown scenario "${name}"; choose one of: ${Object.keys(scenarios).join(", ")}`);
  process.exitCode = 2;
} else {
  process.exitCode = (await scenario()) ? 0 : 1;
}
