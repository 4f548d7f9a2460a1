// The cluster the controller-manager benchmarks run: the embedded API
// server, this package's ControllerManager (leader election off), the
// scheduler and simulated nodes from @reconcile/kubelet, in one process on the
// real clock with upstream's defaults.
import { nodes as nodesResource, type Pod, pods } from "@reconcile/api";
import { ApiServer, type Storage } from "@reconcile/apiserver";
import { type Client, listerWatcher, writeVerbs } from "@reconcile/client";
import { SharedIndexInformer, SharedInformerFactory } from "@reconcile/informer";
import { NodeSimulator, NodeThreads } from "../../kubelet/src/index.js";
import { Scheduler } from "../../scheduler/src/index.js";
import { type ControllerDescriptors, ControllerManager } from "../src/index.js";

export interface BenchCluster {
  readonly server: ApiServer;
  /** The client every component uses (`options.client`'s, when given). */
  readonly client: Client;
  /** The pod informer the simulated nodes share; add handlers before the cluster starts. */
  readonly podInformer: SharedIndexInformer<Pod>;
  readonly signal: AbortSignal;
  close(): Promise<void>;
}

export interface BenchClusterOptions {
  nodes: number;
  /** `--controllers` of the manager, e.g. `"replicaset,deployment"`. */
  controllers: string;
  /** Wraps the server's client for every component. */
  client?: ((client: Client) => Client) | undefined;
  /** Wraps the client the controller manager alone writes with. */
  managerClient?: ((client: Client) => Client) | undefined;
  /** Called before anything runs, e.g. to add informer handlers. */
  prepare?: ((cluster: BenchCluster) => void) | undefined;
  /**
   * Runs the nodes on this many worker threads (NodeThreads) instead of the
   * server's thread. Default: `NODE_THREADS` from the environment, else 0.
   */
  nodeThreads?: number | undefined;
  /** Where the API server keeps objects. Default: in memory. */
  storage?: Storage | undefined;
  /** The manager's controller table. Default: `newControllerDescriptors()`. */
  descriptors?: ControllerDescriptors | undefined;
}

/**
 * Starts the cluster and resolves once every node is registered and the
 * informers are synced. The manager starts last, so a controller's first
 * sync sees every node (as a DaemonSet's needs).
 */
export async function startCluster(options: BenchClusterOptions): Promise<BenchCluster> {
  const server = new ApiServer({ storage: options.storage });
  const client = options.client?.(server.client()) ?? server.client();
  const stop = new AbortController();
  // Every component's informers share one frozen copy of each object (acceptFrozen), as the demo's do.
  const acceptFrozen = process.env.ACCEPT_FROZEN !== "0";
  const podInformer = new SharedIndexInformer<Pod>({
    listerWatcher: listerWatcher(client, pods),
    resource: pods,
    acceptFrozen,
  });
  const threads = options.nodeThreads ?? Number(process.env.NODE_THREADS ?? 0);
  // A thread's client copies each object as it posts it: the server's need not copy first.
  const simulator =
    threads > 0
      ? new NodeThreads({
          client: options.client?.(server.client({ shared: true })) ?? server.client({ shared: true }),
          nodes: options.nodes,
          threads,
        })
      : new NodeSimulator({ client, nodes: options.nodes, podInformer });
  const manager = new ControllerManager({
    client: options.managerClient?.(client) ?? client,
    controllers: options.controllers,
    descriptors: options.descriptors,
    leaderElection: false,
    acceptFrozen,
  });
  const schedulerFactory = new SharedInformerFactory({ client, acceptFrozen });
  const scheduler = Scheduler.fromInformerFactory(schedulerFactory, { client });
  const tasks: Promise<unknown>[] = [];
  const cluster: BenchCluster = {
    server,
    client,
    podInformer,
    signal: stop.signal,
    async close() {
      stop.abort();
      await Promise.allSettled(tasks);
      await schedulerFactory.shutdown();
      await server.close();
    },
  };
  options.prepare?.(cluster);
  tasks.push(
    podInformer.run(stop.signal),
    simulator.run({ signal: stop.signal }),
    scheduler.run({ signal: stop.signal }),
  );
  schedulerFactory.start(stop.signal);
  await podInformer.whenSynced();
  await schedulerFactory.waitForCacheSync(stop.signal);
  // One item per page: the list's remaining count says how many nodes registered, without copying them all.
  const registered = async () => {
    const list = await server.client().resource(nodesResource).list({ limit: 1 });
    return list.items.length + (list.metadata?.remainingItemCount ?? 0);
  };
  while ((await registered()) < options.nodes) await sleep(50);
  tasks.push(manager.run({ signal: stop.signal }));
  return cluster;
}

/**
 * `client`, telling `observe` of every write as it starts, by verb and
 * resource (`create pods`, `update deployments.apps/status`); `observe` may
 * return a function called when the write is answered.
 */
export function observeWrites(client: Client, observe: (key: string) => (() => void) | undefined): Client {
  return {
    resource: (descriptor, namespace) => {
      const resource = client.resource(descriptor, namespace);
      const plural = descriptor.group ? `${descriptor.plural}.${descriptor.group}` : descriptor.plural;
      return new Proxy(resource, {
        get(target, verb) {
          const value = Reflect.get(target, verb);
          if (typeof value !== "function") return value;
          // Methods run on the real client (its private fields are not the proxy's).
          if (typeof verb !== "string" || !writeVerbs.has(verb)) return value.bind(target);
          const key =
            verb === "updateStatus"
              ? `update ${plural}/status`
              : verb === "updateScale"
                ? `update ${plural}/scale`
                : `${verb} ${plural}`;
          return (...args: unknown[]) => {
            const answered = observe(key);
            const answer = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            if (answered !== undefined) answer.then(answered, answered);
            return answer;
          };
        },
      });
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
