// Simulated nodes on worker threads: the NodeSimulator's kubelets run beside
// the thread that holds the API server, controllers and scheduler, so a
// cluster in one process uses a second core. Each thread reaches the API
// server through a port (`portClient`/`servePort`: structured clones, no
// HTTP), watching only bound pods.
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { type Client, servePort } from "@reconcile/client";
import type { KubeletOptions } from "./kubelet-options.js";
import { nodeNamesOf } from "./node-simulator.js";

/** The kubelet options that can cross to a thread (plain data). */
export type NodeThreadKubeletOptions = Pick<
  KubeletOptions,
  | "resources"
  | "labels"
  | "kubeletVersion"
  | "syncFrequencyMs"
  | "plegRelistPeriodMs"
  | "nodeStatusUpdateFrequencyMs"
  | "nodeStatusReportFrequencyMs"
  | "nodeLeaseDurationSeconds"
>;

export interface NodeThreadsOptions {
  /** The API server the nodes talk to, served to each thread over a port. Required. */
  client: Client;
  /** How many nodes (named `<namePrefix><i>`, from 1), or their names. Required. */
  nodes: number | readonly string[];
  /** Default "node-". */
  namePrefix?: string | undefined;
  /** Worker threads to spread the nodes over, in contiguous runs. Default 1. */
  threads?: number | undefined;
  /** As NodeSimulator's `dualStack`. Default false. */
  dualStack?: boolean | undefined;
  /** Options every kubelet gets, over the NodeSimulator's per-node defaults. */
  kubelet?: NodeThreadKubeletOptions | undefined;
  /** Thread t's kubelets draw from `seededRandom(seed + t)`. Default: `Math.random`. */
  seed?: number | undefined;
}

/** What a thread is told at start (its `workerData`). */
export interface NodeThreadData {
  reconcileNodeThread: true;
  port: MessagePort;
  names: readonly string[];
  /** Index of the thread's first node among all nodes: its pod CIDR and node IP follow from it. */
  first: number;
  dualStack: boolean;
  kubelet: NodeThreadKubeletOptions;
  seed: number | undefined;
}

/** A thread's message to its parent: its pod informer has synced. */
export type NodeThreadEvent = { type: "synced" };

/**
 * See the file comment. Unlike NodeSimulator, the kubelets' own servers
 * (logs, exec, attach, port-forward, node proxy, resource metrics) are not
 * reachable from the API server's thread.
 */
export class NodeThreads {
  /** Every node's name, in order. */
  readonly nodeNames: readonly string[];
  readonly #options: NodeThreadsOptions;
  #running = false;
  #markSynced!: () => void;
  /** Settles once every thread's pod informer has synced, or the run has stopped. */
  readonly synced: Promise<void> = new Promise((resolve) => (this.#markSynced = resolve));

  constructor(options: NodeThreadsOptions) {
    if (options?.client === undefined) throw new TypeError("NodeThreads: client is required");
    const threads = options.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1)
      throw new RangeError("NodeThreads: threads must be a positive integer");
    this.nodeNames = nodeNamesOf(options.nodes, options.namePrefix, "NodeThreads");
    this.#options = options;
  }

  /** Runs every thread until `signal` aborts; resolves once all have stopped, rejects if one failed. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (this.#running) throw new Error("NodeThreads: already running");
    this.#running = true;
    const threads = Math.min(this.#options.threads ?? 1, Math.max(1, this.nodeNames.length));
    const perThread = Math.ceil(this.nodeNames.length / threads);
    const runs: Promise<void>[] = [];
    const synced: Promise<void>[] = [];
    for (let t = 0; t < threads; t++) {
      const first = t * perThread;
      const names = this.nodeNames.slice(first, first + perThread);
      if (names.length === 0) break;
      const seed = this.#options.seed === undefined ? undefined : this.#options.seed + t;
      const thread = this.#start(names, first, seed, signal);
      runs.push(thread.done);
      synced.push(thread.synced);
    }
    void Promise.all(synced).then(() => this.#markSynced());
    const results = await Promise.allSettled(runs);
    this.#markSynced();
    const failed = results.find((result) => result.status === "rejected");
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  }

  #start(
    names: readonly string[],
    first: number,
    seed: number | undefined,
    signal: AbortSignal,
  ): { done: Promise<void>; synced: Promise<void> } {
    const { port1, port2 } = new MessageChannel();
    const data: NodeThreadData = {
      reconcileNodeThread: true,
      port: port2,
      names,
      first,
      dualStack: this.#options.dualStack === true,
      kubelet: this.#options.kubelet ?? {},
      seed,
    };
    const worker = startThread(data);
    const serving = new AbortController();
    const served = servePort(this.#options.client, port1, { signal: serving.signal });
    let markSynced!: () => void;
    const synced = new Promise<void>((resolve) => (markSynced = resolve));
    const stop = () => worker.postMessage({ type: "stop" });
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
    const done = new Promise<void>((resolve, reject) => {
      let failure: unknown;
      worker.on("message", (event: NodeThreadEvent) => {
        if (event.type === "synced") markSynced();
      });
      worker.on("error", (error) => (failure = error));
      worker.on("exit", (code) => {
        signal.removeEventListener("abort", stop);
        markSynced();
        serving.abort();
        void served.finally(() => {
          port1.close();
          if (failure !== undefined) reject(failure);
          else if (code !== 0) reject(new Error(`NodeThreads: a node thread exited with code ${code}`));
          else resolve();
        });
      });
    });
    return { done, synced };
  }
}

/**
 * Starts a thread on the built entry beside this module, or, under the
 * TypeScript sources (tests, benchmarks), on the source entry
 * through tsx's loader, registered in the thread itself: Node 20 does not
 * carry `--import` loaders into worker threads.
 */
function startThread(data: NodeThreadData): Worker {
  const here = import.meta.url;
  const extension = here.slice(here.lastIndexOf("."));
  const entry = new URL(`./node-thread-entry${extension}`, here);
  const options = { workerData: data, transferList: [data.port] };
  if (extension !== ".ts") return new Worker(entry, options);
  const tsx = import.meta.resolve("tsx/esm/api");
  const code = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  // The parent's resolution conditions, and the sources' own; a thread refuses V8 and process flags.
  const execArgv = ["--conditions=@reconcile/source"];
  process.execArgv.forEach((arg, i) => {
    if (arg.startsWith("--conditions=")) execArgv.push(arg);
    else if ((arg === "--conditions" || arg === "-C") && process.execArgv[i + 1] !== undefined)
      execArgv.push(`--conditions=${process.execArgv[i + 1]}`);
  });
  return new Worker(code, { ...options, eval: true, execArgv });
}
