// The cluster every demo scenario runs: an API server (serving Endpoints,
// EndpointSlices and CustomResourceDefinitions too), controller managers (leader-elected on
// kube-system/kube-controller-manager), schedulers (leader-elected on
// kube-system/kube-scheduler), and simulated nodes, each node its own
// kubelet that can be stopped on its own ("the node stops heartbeating").
// Thin wiring: every piece of logic lives in a package.
import { setMaxListeners } from "node:events";
import { isAlreadyExists, kubernetesVersion, storageClasses } from "@reconcile/api";
import {
  ApiServer,
  type ApiServerOptions,
  defaultAdmissionPlugins,
  generateServingCertificates,
} from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { realClock } from "@reconcile/clock";
import { Introspection } from "@reconcile/controller";
import {
  ControllerManager,
  type KubeletMetricsSeam,
  type LeaderElectionOptions,
  type NodeLifecycleSettings,
  newControllerDescriptors,
  prometheusKubeletMetrics,
  prometheusSchedulerMetrics,
  type SchedulerMetricsSeam,
} from "@reconcile/controller-manager";
import type { CausalityRecorder, MachineryProvider } from "@reconcile/dashboard";
import { SharedInformerFactory } from "@reconcile/informer";
import { NodeSimulator, podCIDROf, resourceMetricsProvider } from "@reconcile/kubelet";
import { LeaderElector, LeaseLock } from "@reconcile/leader-election";
import { Scheduler } from "@reconcile/scheduler";
import { defaultClassAnnotation, simulatedProvisioner } from "@reconcile/volume";

/**
 * An API server that serves every built-in kind (Endpoints and EndpointSlices, and the kinds
 * served as storage only, among them) and CustomResourceDefinitions, with kube-apiserver's
 * default admission plugins (the cluster runs the controllers they rely on) and NodeRestriction,
 * as kubeadm and kind enable it, and kubeadm's front proxy (aggregated servers such as a real
 * metrics-server trust the users it passes on).
 */
export function newApiServer(options: ApiServerOptions = {}): ApiServer {
  return new ApiServer({
    customResourceDefinitions: true,
    apiServiceRegistration: true,
    flowControlBootstrap: true,
    frontProxy: true,
    admissionPlugins: [...defaultAdmissionPlugins, "NodeRestriction"],
    ...options,
  });
}

/**
 * The clients the cluster's components run with, each as its own identity, as on a kubeadm
 * cluster: every kubelet as `system:node:<name>` (the Node authorizer and NodeRestriction judge
 * it), the schedulers as `system:kube-scheduler`, the controller managers as
 * `system:kube-controller-manager` with each controller as its own ServiceAccount in kube-system
 * (`--use-service-account-credentials`). A permission our own components lack fails here first.
 */
export function componentClients(server: ApiServer) {
  // Each with its binary's User-Agent, so its writes carry its field manager as on a real cluster.
  const agent = (binary: string, suffix = "") =>
    `${binary}/v${kubernetesVersion.gitVersion.replace(/^v/, "")} (linux/amd64) kubernetes/reconcile${suffix}`;
  return {
    node: (name: string) =>
      server.client({
        user: { username: `system:node:${name}`, groups: ["system:nodes"] },
        userAgent: agent("kubelet"),
      }),
    scheduler: () =>
      server.client({ user: { username: "system:kube-scheduler" }, userAgent: agent("kube-scheduler") }),
    controllerManager: () =>
      server.client({
        user: { username: "system:kube-controller-manager" },
        userAgent: agent("kube-controller-manager"),
      }),
    controller: (serviceAccount: string) =>
      server.client({
        user: {
          username: `system:serviceaccount:kube-system:${serviceAccount}`,
          groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system"],
        },
        userAgent: agent("kube-controller-manager", `/system:serviceaccount:kube-system:${serviceAccount}`),
      }),
  };
}

export interface ClusterOptions {
  /** Simulated nodes, named node-1 … node-N. Default 3. */
  nodes?: number;
  /** Controller managers competing for their Lease. Default 1. */
  controllerManagers?: number;
  /** Schedulers competing for their Lease. Default 1. */
  schedulers?: number;
  /** Lease timing of both elections. Default: upstream's 15 s / 10 s / 2 s. */
  election?: Pick<LeaderElectionOptions, "leaseDurationMs" | "renewDeadlineMs" | "retryPeriodMs">;
  /**
   * How fast a silent node is noticed: the kubelets' node Lease duration (renewed every quarter of
   * it) and the node lifecycle controller's flags. Default: upstream's (40 s Lease, 5 s monitor
   * period, 50 s grace period).
   */
  nodeLifecycle?: { leaseDurationSeconds: number; settings: NodeLifecycleSettings } | undefined;
  /** The CA that verifies the API server, published in every namespace as `kube-root-ca.crt`. Default: none. */
  rootCA?: string | undefined;
  /** The CA (PEM certificate and key) that signs approved CertificateSigningRequests. Default: none (no signer runs). */
  clusterSigning?: { cert: string; key: string } | undefined;
  /** Fill ServiceAccount token Secrets with tokens the API server accepts. Default true. */
  serviceAccountTokens?: boolean | undefined;
  /** Records every component's writes and the controllers' reconciles, for the dashboard's trace. Default: none. */
  causality?: CausalityRecorder | undefined;
  /** Give pods an IPv6 address too, for a server whose Service ranges are dual-stack. Default false. */
  dualStack?: boolean | undefined;
}

/**
 * A lost node noticed in seconds rather than minutes: upstream's timings divided by ten (a 4 s
 * node Lease renewed every second, a 0.5 s monitor period, a 5 s grace period).
 */
export const fastNodeLifecycle: NonNullable<ClusterOptions["nodeLifecycle"]> = {
  leaseDurationSeconds: 4,
  settings: {
    nodeMonitorPeriodMs: 500,
    nodeMonitorGracePeriodMs: 5_000,
    nodeStartupGracePeriodMs: 6_000,
  },
};

let caOfThisProcess: Promise<{ cert: string; key: string }> | undefined;

/**
 * A CA for a demo cluster that serves plain HTTP: every cluster has one, and
 * pods need its `kube-root-ca.crt` ConfigMap (their ServiceAccount token
 * volume projects it). Made once per process (an RSA key takes a moment).
 */
export async function clusterCA(): Promise<string> {
  return (await clusterCertificateAuthority()).cert;
}

/** The same CA with its key, for the CSR signer of a cluster that serves plain HTTP. */
export function clusterCertificateAuthority(): Promise<{ cert: string; key: string }> {
  caOfThisProcess ??= generateServingCertificates().then(({ ca }) => ca);
  return caOfThisProcess;
}

/** One controller manager or scheduler process, as far as the demo is concerned. */
export interface Component {
  readonly identity: string;
  /** Whether it is the acting leader now. */
  isLeader(): boolean;
  /** Kills it: stops without giving up its Lease, as a crashed process would. */
  kill(): Promise<void>;
  readonly killed: boolean;
}

export interface Cluster {
  readonly client: Client;
  readonly nodeNames: readonly string[];
  readonly controllerManagers: readonly (Component & { manager: ControllerManager })[];
  readonly schedulers: readonly Component[];
  /** Stops a node's kubelet: it stops heartbeating and leaves its pods as they were. */
  stopNode(name: string): Promise<void>;
  /** How the API server reaches the nodes' kubelets for `pods/log`. */
  kubeletConnection(): ReturnType<NodeSimulator["kubeletConnection"]>;
  /** Resolves once every node's pod cache has synced and the add-ons are installed. */
  readonly synced: Promise<void>;
  /**
   * What each component holds now, for the dashboard: each controller manager's election, informers
   * and controllers, each scheduler's queue and last decisions (while it leads), every kubelet's pod
   * workers and PLEG.
   */
  machinery(): MachineryProvider[];
  /** Stops everything still running; resolves once all has stopped. */
  stop(): Promise<void>;
}

/**
 * `kubectl get componentstatuses`: a component is healthy while one of its
 * instances runs (kube-apiserver asks the one on its own machine; every
 * instance here is on this one).
 */
function serveComponentHealth(
  server: ApiServer,
  controllerManagers: readonly Component[],
  schedulers: readonly Component[],
): void {
  const health = (name: string, instances: readonly Component[]) =>
    instances.some((instance) => !instance.killed)
      ? { name, healthy: true, message: "ok" }
      : { name, healthy: false, error: `every ${name} instance has stopped` };
  server.serveComponentStatuses(() => [
    health("controller-manager", controllerManagers),
    health("scheduler", schedulers),
  ]);
}

/** The controller manager's table: upstream's controllers, with the cluster's CA and token signer. */
function controllerDescriptors(server: ApiServer, options: ClusterOptions) {
  return newControllerDescriptors({
    nodeLifecycle: options.nodeLifecycle?.settings,
    rootCA: options.rootCA,
    clusterSigning: options.clusterSigning,
    serviceAccountTokenSigner: (options.serviceAccountTokens ?? true) ? server.auth.tokens : undefined,
  });
}

export function startCluster(server: ApiServer, options: ClusterOptions = {}): Cluster {
  const client = server.client();
  const identities = recordedClients(componentClients(server), options.causality);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every component listens to it
  const tasks: Promise<unknown>[] = [];
  const nodeCount = options.nodes ?? 3;
  const nodeNames = Array.from({ length: nodeCount }, (_, i) => `node-${i + 1}`);
  const kubeletIntrospection = new Introspection();

  // Nodes: one simulator per node (so each can stop alone), each watching its own pods as its node.
  const nodeStops = new Map<string, { abort: AbortController; done: Promise<void> }>();
  // The kubelets' metrics join the first manager's registry once it exists (below); nothing is
  // observed before then, as no pod runs before the controllers do.
  let kubeletMetrics: KubeletMetricsSeam | undefined;
  const metrics = {
    observePodWorkerDuration: (operation: string, seconds: number) =>
      kubeletMetrics?.observePodWorkerDuration(operation, seconds),
    observePodStartSLIDuration: (seconds: number) => kubeletMetrics?.observePodStartSLIDuration(seconds),
  };
  const simulators = nodeNames.map((name, i) => {
    const simulator = new NodeSimulator({
      client: identities.node(name),
      nodes: [name],
      introspection: kubeletIntrospection,
      kubeletOptions: () => ({
        podCIDR: podCIDROf(i, options.dualStack === true),
        nodeIP: `10.0.${Math.floor(i / 250)}.${(i % 250) + 2}`,
        metrics,
        ...(options.nodeLifecycle
          ? { nodeLeaseDurationSeconds: options.nodeLifecycle.leaseDurationSeconds }
          : {}),
      }),
    });
    const nodeAbort = new AbortController();
    const done = simulator.run({ signal: AbortSignal.any([abort.signal, nodeAbort.signal]) });
    nodeStops.set(name, { abort: nodeAbort, done });
    tasks.push(done);
    return simulator;
  });

  const controllerManagers = Array.from({ length: options.controllerManagers ?? 1 }, (_, i) => {
    const identity = `kube-controller-manager-${i + 1}`;
    const manager = new ControllerManager({
      client: identities.controllerManager(),
      serviceAccountCredentials: identities.controller,
      leaderElection: { identity, ...options.election },
      descriptors: controllerDescriptors(server, options),
      reconcileObserver: options.causality?.observer(identity),
      // The components' informers share one frozen copy of each object rather than one each.
      acceptFrozen: true,
    });
    return {
      manager,
      ...component(
        identity,
        abort.signal,
        tasks,
        (signal) => manager.run({ signal }),
        () => manager.isActing(),
      ),
    };
  });

  // One process, one /metrics: the schedulers' families join the first manager's registry.
  const schedulerMetrics = prometheusSchedulerMetrics(controllerManagers[0]!.manager.registry);
  kubeletMetrics = prometheusKubeletMetrics(controllerManagers[0]!.manager.registry);
  const schedulerIntrospections: MachineryProvider[] = [];
  const schedulers = Array.from({ length: options.schedulers ?? 1 }, (_, i) => {
    const identity = `kube-scheduler-${i + 1}`;
    const introspection = new Introspection();
    schedulerIntrospections.push({ component: identity, snapshot: () => introspection.snapshot() });
    const elected = electedScheduler(
      identity,
      identities.scheduler(),
      options,
      schedulerMetrics,
      introspection,
    );
    return component(identity, abort.signal, tasks, elected.run, elected.isLeader);
  });

  // What metrics-server would serve: every node's usage, loads shared across all nodes.
  server.serveResourceMetrics(
    resourceMetricsProvider(
      simulators.flatMap((simulator) => simulator.kubelets),
      realClock,
    ),
  );

  serveComponentHealth(server, controllerManagers, schedulers);

  const synced = Promise.all([...simulators.map((s) => s.synced), installAddons(client)]).then(() => {});
  return {
    client,
    nodeNames,
    controllerManagers,
    schedulers,
    async stopNode(name) {
      const node = nodeStops.get(name);
      if (node === undefined) throw new Error(`no node ${name}`);
      node.abort.abort();
      await node.done;
    },
    kubeletConnection: () => joinedKubeletConnection(simulators),
    synced,
    machinery: () => [
      ...controllerManagers.map(({ identity, manager }) => ({
        component: identity,
        snapshot: () => manager.manager.machinery(),
      })),
      ...schedulerIntrospections,
      { component: "kubelet", snapshot: () => kubeletIntrospection.snapshot() },
    ],
    async stop() {
      abort.abort();
      await Promise.allSettled(tasks);
    },
  };
}

/** The component clients, each recording its writes under its component's name when there is a recorder. */
function recordedClients(
  clients: ReturnType<typeof componentClients>,
  causality: CausalityRecorder | undefined,
): ReturnType<typeof componentClients> {
  if (causality === undefined) return clients;
  return {
    node: (name) => causality.client(`kubelet ${name}`, clients.node(name)),
    scheduler: () => causality.client("kube-scheduler", clients.scheduler()),
    controllerManager: () => causality.client("kube-controller-manager", clients.controllerManager()),
    controller: (serviceAccount) => causality.client(serviceAccount, clients.controller(serviceAccount)),
  };
}

/** A scheduler process: it schedules while it holds the Lease `kube-system/kube-scheduler`. */
function electedScheduler(
  identity: string,
  client: Client,
  options: ClusterOptions,
  metrics: SchedulerMetricsSeam,
  introspection: Introspection,
): { run: (signal: AbortSignal) => Promise<void>; isLeader: () => boolean } {
  let leading = false;
  const run = (signal: AbortSignal) =>
    new LeaderElector({
      lock: new LeaseLock({ client, namespace: "kube-system", name: "kube-scheduler", identity }),
      name: "kube-scheduler",
      ...options.election,
      callbacks: {
        onStartedLeading: async (term) => {
          leading = true;
          try {
            await runScheduler(client, term, metrics, introspection);
          } finally {
            leading = false;
          }
        },
        onStoppedLeading: () => {},
      },
    }).run({ signal });
  return { run, isLeader: () => leading };
}

/** One scheduler term: its own informers, run until the term ends; its last 200 decisions shown while it runs. */
async function runScheduler(
  client: Client,
  signal: AbortSignal,
  metrics: SchedulerMetricsSeam,
  introspection: Introspection,
): Promise<void> {
  const factory = new SharedInformerFactory({ client, acceptFrozen: true });
  const scheduler = Scheduler.fromInformerFactory(factory, {
    client,
    metrics,
    decisionLog: 200,
    introspection,
  });
  factory.start(signal);
  try {
    await scheduler.run({ signal });
  } finally {
    await factory.shutdown();
  }
}

function component(
  identity: string,
  clusterSignal: AbortSignal,
  tasks: Promise<unknown>[],
  run: (signal: AbortSignal) => Promise<void>,
  isLeader: () => boolean,
): Component {
  const own = new AbortController();
  const done = run(AbortSignal.any([clusterSignal, own.signal])).catch((error) => {
    if (!clusterSignal.aborted && !own.signal.aborted) console.error(`${identity} stopped:`, error);
  });
  tasks.push(done);
  let killed = false;
  return {
    identity,
    isLeader: () => !killed && isLeader(),
    get killed() {
      return killed;
    },
    async kill() {
      killed = true;
      own.abort();
      await done;
    },
  };
}

/** The default StorageClass a kind cluster ships, here served by the simulated provisioner. */
async function installAddons(client: Client): Promise<void> {
  try {
    await client.resource(storageClasses).create({
      metadata: { name: "standard", annotations: { [defaultClassAnnotation]: "true" } },
      provisioner: simulatedProvisioner,
      reclaimPolicy: "Delete",
      volumeBindingMode: "Immediate",
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** One KubeletConnection over several NodeSimulators: the first that knows the node answers. */
function joinedKubeletConnection(
  simulators: readonly NodeSimulator[],
): ReturnType<NodeSimulator["kubeletConnection"]> {
  const first = <T>(ask: (connection: ReturnType<NodeSimulator["kubeletConnection"]>) => T | undefined) => {
    for (const simulator of simulators) {
      const answer = ask(simulator.kubeletConnection());
      if (answer !== undefined) return answer;
    }
    return undefined;
  };
  return {
    containerLogs: (nodeName, namespace, podName, container, logOptions) =>
      first((c) => c.containerLogs(nodeName, namespace, podName, container, logOptions)),
    exec: (nodeName, namespace, podName, container, command, execOptions) =>
      first((c) => c.exec(nodeName, namespace, podName, container, command, execOptions)),
    attach: (nodeName, namespace, podName, container) =>
      first((c) => c.attach(nodeName, namespace, podName, container)),
    portForward: (nodeName, namespace, podName, port) =>
      first((c) => c.portForward(nodeName, namespace, podName, port)),
    nodeProxy: (nodeName, method, path) => first((c) => c.nodeProxy(nodeName, method, path)),
  };
}
