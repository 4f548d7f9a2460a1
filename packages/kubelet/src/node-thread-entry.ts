// A node thread's start (see node-threads.ts): a NodeSimulator over a port
// client, fed by one informer on the bound pods, until the parent says stop.
import { parentPort, workerData } from "node:worker_threads";
import { type Pod, pods } from "@reconcile/api";
import { listerWatcher, portClient } from "@reconcile/client";
import { seededRandom } from "@reconcile/clock";
import { SharedIndexInformer } from "@reconcile/informer";
import { NodeSimulator } from "./node-simulator.js";
import type { NodeThreadData, NodeThreadEvent } from "./node-threads.js";

async function main(data: NodeThreadData, parent: NonNullable<typeof parentPort>): Promise<void> {
  const client = portClient(data.port);
  const random = data.seed === undefined ? undefined : seededRandom(data.seed);
  const stop = new AbortController();
  parent.on("message", (message: { type: string }) => {
    if (message.type === "stop") stop.abort();
  });
  // Bound pods only: the kubelets have nothing to do with a pod before it is scheduled.
  const podInformer = new SharedIndexInformer<Pod>({
    listerWatcher: listerWatcher(client, pods, { fieldSelector: "spec.nodeName!=" }),
    resource: pods,
    random,
  });
  const simulator = new NodeSimulator({
    client,
    nodes: data.names,
    podInformer,
    dualStack: data.dualStack,
    random,
    firstIndex: data.first,
    kubeletOptions: () => data.kubelet,
  });
  const running = Promise.all([podInformer.run(stop.signal), simulator.run({ signal: stop.signal })]);
  void simulator.synced.then(() => parent.postMessage({ type: "synced" } satisfies NodeThreadEvent));
  await running;
  client.close();
  data.port.close();
  parent.close();
}

const data = workerData as NodeThreadData | undefined;
if (parentPort !== null && data?.reconcileNodeThread === true) {
  const parent = parentPort;
  main(data, parent).catch((error: unknown) => {
    // The parent sees the failure as the thread's error.
    setImmediate(() => {
      throw error;
    });
  });
}
