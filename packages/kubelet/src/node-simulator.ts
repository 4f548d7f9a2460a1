// Many kubelets in one process, for demos and scale tests: N nodes, each a
// whole Kubelet with its own simulated runtime, pod CIDR and node IP, fed
// by one shared pod informer instead of N watches. Each pod event goes to
// the kubelet its `spec.nodeName` names, as N field-selected watches would
// deliver it.
import { setMaxListeners } from "node:events";
import { type DeepReadonly, isDeletedFinalStateUnknown, type Pod, pods } from "@reconcile/api";
import { type Client, listerWatcher } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import type { Introspection, Logger } from "@reconcile/controller";
import { type ResourceEventHandler, SharedIndexInformer } from "@reconcile/informer";
import { attachInPod, type ExecAnswer, execInPod } from "./exec.js";
import { Kubelet, type KubeletOptions } from "./kubelet.js";
import { type KubeletHttpAnswer, kubeletHttpAnswer } from "./kubelet-server.js";
import type { ContainerLogOptions, ContainerLogResult } from "./logs.js";
import { kubeletView } from "./machinery.js";
import { type PortForwardAnswer, portForwardInPod } from "./port-forward.js";
import {
  collectResourceMetrics,
  type ResourceUsageDefaults,
  resourceMetricsProvider,
} from "./resource-usage.js";
import type { ExecOptions } from "./runtime/runtime.js";

export interface NodeSimulatorOptions {
  /** Where the nodes read pods and write everything. Required. */
  client: Client;
  /** How many nodes (named `<namePrefix><i>`, from 1), or their names. Required. */
  nodes: number | readonly string[];
  /** Default "node-". */
  namePrefix?: string | undefined;
  /**
   * The place of the first node among all nodes, when these are part of a
   * larger set (the nodes of one of several `NodeThreads`): node i's
   * addresses are those of node `firstIndex + i`. Default 0.
   */
  firstIndex?: number | undefined;
  /**
   * A shared informer on all pods to feed the nodes from; the simulator adds
   * one handler and leaves running it to the caller. Default: the simulator
   * runs its own — for a single node, on that node's pods only
   * (`spec.nodeName=<name>`), as a kubelet watches, which is all a node's
   * identity may list.
   */
  podInformer?: SharedIndexInformer<Pod> | undefined;
  /**
   * Per-node options over the defaults: node i (from 0) gets pod CIDR
   * `10.244.<i>.0/24` (and `fd00:10:244:<i in hex>::/64` when `dualStack`)
   * and node IP `10.0.<i / 250>.<i % 250 + 2>`.
   */
  kubeletOptions?: ((name: string, index: number) => Partial<KubeletOptions>) | undefined;
  /** Pods get an IPv6 address beside their IPv4 one, as on a dual-stack cluster. Default false. */
  dualStack?: boolean | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
  logger?: Logger | undefined;
  /** Where each node's kubelet shows its pod workers and PLEG (a `kubelet` source named after the node). Default: nowhere. */
  introspection?: Introspection | undefined;
}

/** See the file comment. */
export class NodeSimulator {
  readonly kubelets: readonly Kubelet[];
  readonly #byName = new Map<string, Kubelet>();
  readonly #options: NodeSimulatorOptions;
  readonly #clock: Clock;
  readonly #names: readonly string[];
  readonly #kubeletOptions = new Map<string, KubeletOptions>();
  readonly #startedAt: number;
  #running = false;
  #markSynced!: () => void;
  /** Settles once the pod informer has synced (the nodes' pod sources are ready), or the run has stopped. */
  readonly synced: Promise<void> = new Promise((resolve) => (this.#markSynced = resolve));

  constructor(options: NodeSimulatorOptions) {
    if (options?.client === undefined) throw new TypeError("NodeSimulator: client is required");
    const names = nodeNamesOf(options.nodes, options.namePrefix, "NodeSimulator");
    this.#options = options;
    this.#names = names;
    this.#clock = options.clock ?? realClock;
    this.#startedAt = this.#clock.now();
    const first = options.firstIndex ?? 0;
    this.kubelets = names.map((nodeName, i) => {
      const kubeletOptions: KubeletOptions = {
        nodeName,
        client: options.client,
        clock: this.#clock,
        random: options.random,
        logger: options.logger,
        podSource: "external",
        podCIDR: podCIDROf(first + i, options.dualStack === true),
        nodeIP: nodeIPOf(first + i),
        ...options.kubeletOptions?.(nodeName, i),
      };
      const kubelet = new Kubelet(kubeletOptions);
      this.#byName.set(nodeName, kubelet);
      this.#kubeletOptions.set(nodeName, kubeletOptions);
      options.introspection?.register({
        kind: "kubelet",
        name: nodeName,
        snapshot: () => kubeletView(kubelet),
      });
      return kubelet;
    });
  }

  /** The kubelet of a node, by name. */
  kubelet(nodeName: string): Kubelet | undefined {
    return this.#byName.get(nodeName);
  }

  /**
   * How an API server reaches these kubelets for `pods/log` (the shape of
   * `@reconcile/apiserver`'s `KubeletConnection`): undefined for a node this
   * simulator does not run.
   */
  kubeletConnection(): {
    containerLogs(
      nodeName: string,
      namespace: string,
      podName: string,
      container: string,
      options: ContainerLogOptions,
    ): ContainerLogResult | undefined;
    exec(
      nodeName: string,
      namespace: string,
      podName: string,
      container: string,
      command: readonly string[],
      options: ExecOptions,
    ): ExecAnswer | undefined;
    attach(nodeName: string, namespace: string, podName: string, container: string): ExecAnswer | undefined;
    portForward(
      nodeName: string,
      namespace: string,
      podName: string,
      port: number,
    ): PortForwardAnswer | undefined;
    nodeProxy(nodeName: string, method: string, path: string): KubeletHttpAnswer | undefined;
  } {
    return {
      containerLogs: (nodeName, namespace, podName, container, options) =>
        this.#byName.get(nodeName)?.containerLogs(namespace, podName, container, options),
      exec: (nodeName, namespace, podName, container, command, options) => {
        const kubelet = this.#byName.get(nodeName);
        if (kubelet === undefined) return undefined;
        return execInPod(kubelet.runtime, kubelet.getPods(), namespace, podName, container, command, options);
      },
      attach: (nodeName, namespace, podName, container) => {
        const kubelet = this.#byName.get(nodeName);
        if (kubelet === undefined) return undefined;
        return attachInPod(kubelet.runtime, kubelet.getPods(), namespace, podName, container);
      },
      portForward: (nodeName, namespace, podName, port) => {
        const kubelet = this.#byName.get(nodeName);
        if (kubelet === undefined) return undefined;
        return portForwardInPod(kubelet.runtime, kubelet.getPods(), namespace, podName, port);
      },
      nodeProxy: (nodeName, method, path) => {
        const kubelet = this.#byName.get(nodeName);
        if (kubelet === undefined) return undefined;
        const now = this.#clock.now();
        const usage = () => {
          const { nodes, pods } = collectResourceMetrics(this.kubelets, now);
          return { node: nodes.find((node) => node.metadata?.name === nodeName), pods };
        };
        const options = this.#kubeletOptions.get(nodeName)!;
        return kubeletHttpAnswer({ kubelet, options, now, startedAt: this.#startedAt, usage }, method, path);
      },
    };
  }

  /**
   * What these nodes and their pods use now, for a resource metrics API
   * (the shape of `@reconcile/apiserver`'s `ResourceMetricsProvider`, as
   * metrics-server scrapes kubelets): see `collectResourceMetrics`.
   */
  resourceMetrics(defaults?: Partial<ResourceUsageDefaults>): ReturnType<typeof resourceMetricsProvider> {
    return resourceMetricsProvider(this.kubelets, this.#clock, defaults);
  }

  /** Runs every node until `signal` aborts; resolves once all have stopped. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (this.#running) throw new Error("NodeSimulator: already running");
    this.#running = true;
    setMaxListeners(0, signal);
    const ownInformer = this.#options.podInformer === undefined;
    const informer =
      this.#options.podInformer ??
      new SharedIndexInformer<Pod>({
        listerWatcher: listerWatcher(
          this.#options.client,
          pods,
          this.#names.length === 1 ? { fieldSelector: `spec.nodeName=${this.#names[0]}` } : {},
        ),
        resource: pods,
        // The kubelets change no pod they are given: they share the server's frozen copy where it has one.
        acceptFrozen: true,
        clock: this.#clock,
        random: this.#options.random,
      });
    const registration = informer.addEventHandler(this.#router());
    const tasks = this.kubelets.map((kubelet) => kubelet.run({ signal }));
    if (ownInformer) tasks.push(informer.run({ signal }));
    tasks.push(this.#markReadyOnSync(informer, signal));
    await Promise.allSettled(tasks);
    if (!ownInformer && !informer.isStopped()) informer.removeEventHandler(registration);
  }

  #router(): ResourceEventHandler<Pod> {
    const to = (pod: DeepReadonly<Pod>) => {
      const name = pod.spec?.nodeName;
      return name ? this.#byName.get(name) : undefined;
    };
    return {
      onAdd: (pod, initial) => to(pod)?.podHandler.onAdd?.(pod, initial),
      onUpdate: (old, pod) => {
        const kubelet = to(pod);
        if (kubelet === undefined) return;
        // A pod bound by this update is new to its node, as a field-selected watch would report it.
        if (old.spec?.nodeName !== pod.spec?.nodeName) kubelet.podHandler.onAdd?.(pod, false);
        else kubelet.podHandler.onUpdate?.(old, pod);
      },
      onDelete: (obj) => {
        const pod = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
        to(pod)?.podHandler.onDelete?.(obj);
      },
    };
  }

  async #markReadyOnSync(informer: SharedIndexInformer<Pod>, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !informer.hasSynced()) {
      try {
        await this.#clock.sleep(10, { signal });
      } catch {
        break;
      }
    }
    if (informer.hasSynced()) for (const kubelet of this.kubelets) kubelet.markSourcesReady();
    this.#markSynced();
  }
}

/**
 * The names of `nodes` (`<prefix><i>` from 1, or the names given), at most
 * {@link maxSimulatedNodes} of them (one /24 pod CIDR each); `owner` names
 * the refusal.
 */
export function nodeNamesOf(nodes: number | readonly string[], prefix = "node-", owner: string): string[] {
  const names =
    typeof nodes === "number" ? Array.from({ length: nodes }, (_, i) => `${prefix}${i + 1}`) : [...nodes];
  if (names.length > maxSimulatedNodes)
    throw new RangeError(
      `${owner}: at most ${maxSimulatedNodes.toLocaleString("en-US")} nodes (one /24 pod CIDR each)`,
    );
  return names;
}

/** The /24s of 10.244.0.0/14, the usual cluster CIDR's neighbourhood, numbered first. */
const firstRangeNodes = 12 * 256;
/** Then the /24s of 10.112.0.0 to 10.243.255.0: above the Service range 10.96.0.0/12, below 10.244. */
const secondRangeNodes = (244 - 112) * 256;
/** How many nodes get a pod CIDR of their own. */
export const maxSimulatedNodes = firstRangeNodes + secondRangeNodes;

/** Node i's InternalIP (from 0): `10.0.<i / 250>.<i % 250 + 2>`. */
function nodeIPOf(index: number): string {
  return `10.0.${Math.floor(index / 250)}.${(index % 250) + 2}`;
}

/**
 * Node i's pod CIDR (from 0): `10.244.<i>.0/24` and on through 10.255.255.0/24
 * for the first 3,072 nodes, then from 10.112.0.0/24 up to 10.243.255.0/24
 * (clear of the nodes' 10.0.0.0/16 and the Services' 10.96.0.0/12); and
 * `fd00:10:244:<i in hex>::/64` on a dual-stack cluster.
 */
export function podCIDROf(index: number, dualStack: boolean): string {
  if (!Number.isInteger(index) || index < 0 || index >= maxSimulatedNodes)
    throw new RangeError(`podCIDROf: node index ${index} is outside 0 to ${maxSimulatedNodes - 1}`);
  const second =
    index < firstRangeNodes
      ? 244 + Math.floor(index / 256)
      : 112 + Math.floor((index - firstRangeNodes) / 256);
  const ipv4 = `10.${second}.${index % 256}.0/24`;
  // Written as Go writes the prefix: node 0's is fd00:10:244::/64.
  const ipv6 = index === 0 ? "fd00:10:244::/64" : `fd00:10:244:${index.toString(16)}::/64`;
  return dualStack ? `${ipv4},${ipv6}` : ipv4;
}
