// `npm run demo` runs the ReplicaSet slice; `npm run demo -- serve` serves the same control
// plane to kubectl; `npm run demo -- workqueue` runs the workqueue tour.
import { runReplicaSetDemo } from "./replicaset-demo.js";
import { serve } from "./serve.js";
import { runWorkqueueDemo } from "./workqueue-demo.js";

const scenarios: Record<string, () => Promise<boolean>> = {
  replicaset: runReplicaSetDemo,
  serve,
  workqueue: runWorkqueueDemo,
};

const name = process.argv[2] ?? "replicaset";
const scenario = scenarios[name];
if (scenario === undefined) {
  console.error(`unknown scenario "${name}"; choose one of: ${Object.keys(scenarios).join(", ")}`);
  process.exitCode = 2;
} else {
  process.exitCode = (await scenario()) ? 0 : 1;
}
