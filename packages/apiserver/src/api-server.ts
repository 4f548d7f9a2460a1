import {
  apiServices,
  copyJson,
  flowSchemas,
  type Logger,
  noopLogger,
  type ResourceDescriptor,
  validatingAdmissionPolicies,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, type Random, realClock, realRandom } from "@reconcile/clock";
import { AdmissionChain, type AdmissionObserver } from "./admission/chain.js";
import { admissionEquivalence } from "./admission/equivalence.js";
import { AdmissionObservers } from "./admission/observers.js";
import type { AdmissionPlugin, AuthorizationQuestion } from "./admission/plugin.js";
import { storageContext } from "./admission/plugin.js";
import {
  type AdmissionDependencies,
  builtinAdmissionPlugins,
  defaultAdmissionPlugins,
} from "./admission/plugins/index.js";
import { PolicyStatusController } from "./admission/policy-status.js";
import { ListCache, WriteCountingStorage } from "./admission/read-cache.js";
import { WebhookTransport } from "./admission/webhook/transport.js";
import { type RunningRegistration, startAPIServiceRegistration } from "./api-service-registration.js";
import { CustomResourceDefinitionController, customResourceDefinitionKind } from "./crd/controller.js";
import { type RunningFlowControl, startFlowControlConfiguration } from "./flow-control-configuration.js";
import { frontProxyOf, publishExtensionAuthentication } from "./front-proxy.js";
import { GarbageCollector } from "./gc/garbage-collector.js";
import { Aggregator, type AggregatorOptions } from "./http/aggregation/aggregator.js";
import { ClusterAuth } from "./http/auth/authenticate.js";
import { type ClientUser, inProcessIdentity } from "./http/auth/in-process.js";
import { answerReview, reviewRouteOf } from "./http/auth/reviews.js";
import { loopbackUser } from "./http/auth/user.js";
import { FlowController, type FlowControllerOptions } from "./http/flow-control/controller.js";
import type { ObjectCount } from "./http/flow-control/work-estimate.js";
import { type ListeningApiServer, type ListenOptions, listen } from "./http/server.js";
import type { FrontProxyCertificates } from "./http/tls.js";
import { createInitialObjects, recoverServiceAllocations } from "./initial-objects.js";
import { builtinDefinitions, definitionFor } from "./kinds/builtin.js";
import { type ComponentStatusProvider, componentStatusDefinition } from "./kinds/component-statuses.js";
import type { ResourceDefinition } from "./kinds/definition.js";
import { type ResourceMetricsProvider, resourceMetricsDefinitions } from "./kinds/resource-metrics.js";
import {
  ClusterIPAllocator,
  defaultServiceCIDR,
  defaultServiceNodePortRange,
  NodePortAllocator,
} from "./kinds/service-ips.js";
import { publishKubernetesEndpoints } from "./kubernetes-endpoints.js";
import { ResourceDefinitions } from "./registry/definitions.js";
import { InProcessClient, type ReviewAnswerer } from "./registry/in-process-client.js";
import { Registry } from "./registry/registry.js";
import { MemoryStorage } from "./storage/memory-storage.js";
import type { Storage } from "./storage/storage.js";

export interface ApiServerOptions {
  /** Where in-server controllers (the garbage collector) report failures. Default: `noopLogger`. */
  logger?: Logger | undefined;
  /** Source of time: creation and deletion timestamps, bookmarks, watch timeouts. Default: `realClock`. */
  clock?: Clock | undefined;
  /**
   * Where uids, generated names and cluster IPs draw from. Default `Math.random`
   * (uids from `crypto.randomUUID`); a seeded source (`seededRandom` of
   * `@reconcile/clock`) makes every generated value repeat from run to run.
   */
  random?: Random | undefined;
  /** How many changes the in-memory storage keeps for watches and continue tokens. Default: 10,000. Ignored with `storage`. */
  historySize?: number | undefined;
  /**
   * The memory budget of the in-memory storage's history, in bytes of JSON: older changes leave it
   * once it holds more. Default: 128 MiB. Ignored with `storage`.
   */
  historyBytes?: number | undefined;
  /** How many unread events one watcher may have before it is closed. Default: 10,000. Ignored with `storage`. */
  watchBufferSize?: number | undefined;
  /** Interval of BOOKMARK events on watches that allow them. Default: 60,000 ms. */
  bookmarkIntervalMs?: number | undefined;
  /** Where objects live. Default: a new `MemoryStorage` with `clock`, `historySize` and `watchBufferSize`. */
  storage?: Storage | undefined;
  /**
   * The resources served, each with its built-in definition (or, for a kind
   * reconcile does not know, the defaults of `defineKind`). Default: every
   * built-in kind. Ignored with `definitions`.
   */
  resources?: readonly ResourceDescriptor[] | undefined;
  /** The kinds served at start, in discovery order. Default: the built-in definitions. */
  definitions?: readonly ResourceDefinition[] | undefined;
  /** The largest object accepted, in bytes of JSON (kube-apiserver's etcd limit). Default: 1.5 MiB. */
  maxObjectBytes?: number | undefined;
  /** Run the garbage collector (deletion propagation through ownerReferences). Default: true. */
  garbageCollection?: boolean | undefined;
  /**
   * Serve `apiextensions.k8s.io/v1` CustomResourceDefinitions and, once established, the kinds they
   * define (added to `definitions` at run time). Default: true (about 0.3 ms more to start and 8 KB
   * of heap: one internal watch).
   */
  customResourceDefinitions?: boolean | undefined;
  /**
   * The range Services take cluster IPs from (`--service-cluster-ip-range`), or two of
   * different families, comma-separated, for a dual-stack cluster (the first is the
   * primary). Default: kubeadm's `10.96.0.0/12`. The allocated set is recovered from
   * the stored Services at start.
   */
  serviceClusterIPRange?: string | undefined;
  /**
   * The ports NodePort and LoadBalancer Services take node ports from
   * (`--service-node-port-range`, `base-last`). Default: `30000-32767`. The
   * allocated set is recovered from the stored Services at start.
   */
  serviceNodePortRange?: string | undefined;
  /**
   * Keep the `default/kubernetes` Service (the range's first IP, port `https` 443 → 6443), as
   * kube-apiserver does. Default: true.
   */
  kubernetesService?: boolean | undefined;
  /**
   * The admission chain every write passes (`--enable-admission-plugins`):
   * built-in plugins by upstream's name, run in kube-apiserver's order, then
   * plugins of your own in the order given. Default: {@link embeddedAdmissionPlugins},
   * kube-apiserver's defaults without the two that need a controller to
   * undo what they do; a cluster that runs the controller manager passes
   * {@link defaultAdmissionPlugins}. `[]` admits everything.
   */
  admissionPlugins?: readonly (string | AdmissionPlugin)[] | undefined;
  /**
   * Keep an `apiregistration.k8s.io/v1` APIService for every served group-version (`v1.apps`,
   * a CRD's `v1.example.com`), as kube-apiserver's aggregator does, when APIServices are
   * served. Default: false (its writes would cost every embedded server's start and shift
   * the resourceVersions tests see); the demo cluster turns it on.
   */
  apiServiceRegistration?: boolean | undefined;
  /**
   * Keep kube-apiserver's bootstrap API Priority and Fairness configuration (the mandatory and
   * suggested FlowSchemas and PriorityLevelConfigurations, each FlowSchema's `Dangling`
   * condition), as its `priority-and-fairness-config-producer` hook does (requests are
   * classified by them either way: see `flowControl`). Default: false (about twenty writes at start); the demo
   * cluster turns it on.
   */
  flowControlBootstrap?: boolean | undefined;
  /**
   * API Priority and Fairness on the HTTP listeners: the seats shared by the limited priority
   * levels (default 600, kube-apiserver's two inflight limits together) and how long a request
   * may wait in a queue (default 15,000 ms); `false` turns it off. The in-process client is not
   * limited.
   */
  flowControl?:
    | Pick<FlowControllerOptions, "serverConcurrencyLimit" | "queueWaitLimitMs">
    | false
    | undefined;
  /** API aggregation on the HTTP listeners: APIServices naming a Service are served by it; `false`: none. */
  aggregation?: Pick<AggregatorOptions, "recheckIntervalMs" | "probeTimeoutMs"> | false | undefined;
  /**
   * A front proxy, as kubeadm sets kube-apiserver up (`--proxy-client-cert-file`,
   * `--requestheader-client-ca-file`, allowed name `front-proxy-client`): the
   * aggregator presents the `front-proxy-client` certificate to aggregated
   * servers, this server's HTTPS listeners trust it, and the
   * `kube-system/extension-apiserver-authentication` ConfigMap says so to
   * aggregated servers (with the first HTTPS listener's CA as
   * `client-ca-file`). `true` generates a CA and the certificate; or give
   * them. Default: none (the demo cluster turns it on).
   */
  frontProxy?: boolean | FrontProxyCertificates | undefined;
}

/**
 * kube-apiserver's default plugins without those that need a controller to
 * undo what they do: `ServiceAccount` (a pod needs its namespace's `default`
 * ServiceAccount, which the serviceaccount controller creates),
 * `TaintNodesByCondition` (a new Node stays unschedulable until the node
 * lifecycle controller sees it Ready) and `StorageObjectInUseProtection` (a
 * claim or volume being deleted waits for the protection controllers): what
 * envtest and upstream's integration tests run.
 */
export const embeddedAdmissionPlugins: readonly string[] = defaultAdmissionPlugins.filter(
  (name) =>
    name !== "ServiceAccount" && name !== "TaintNodesByCondition" && name !== "StorageObjectInUseProtection",
);

export { initialNamespaces } from "./initial-objects.js";

/** The chain of `chosen`: the built-in plugins named, in kube-apiserver's order, then the user's own. */
function admissionChainOf(
  chosen: readonly (string | AdmissionPlugin)[],
  dependencies: AdmissionDependencies,
): AdmissionChain {
  const own = chosen.filter((plugin) => typeof plugin !== "string");
  // A plugin of the user's could change in place what pods would otherwise share.
  const sharedDefaults = own.every((plugin) => plugin.admit === undefined);
  const names = chosen.filter((plugin) => typeof plugin === "string");
  return new AdmissionChain([...builtinAdmissionPlugins(names, { ...dependencies, sharedDefaults }), ...own]);
}

/**
 * An embedded API server: storage with resourceVersions and watch history,
 * kube-apiserver's registry semantics, a garbage collector, and an in-process
 * `Client`. `close()` ends every watch and stops the garbage collector.
 */
export class ApiServer {
  readonly storage: Storage;
  readonly registry: Registry;
  readonly clock: Clock;
  /** Where uids, generated names and cluster IPs draw from. */
  readonly random: Random;
  /** The Services' cluster IPs: the range and what is taken. */
  readonly serviceIPs: ClusterIPAllocator;
  /** The Services' node ports: the range and what is taken. */
  readonly serviceNodePorts: NodePortAllocator;
  /**
   * How admission webhooks are reached: over HTTPS by default;
   * `admissionWebhooks.serve(url, handler)` answers a configuration's URL in
   * process instead (no TLS, no socket), behind the same matching rules.
   */
  readonly admissionWebhooks: WebhookTransport = new WebhookTransport();
  /** Who observes admission: the metrics of each listener that count webhook calls or time the chain. */
  readonly #admissionObservers = new AdmissionObservers();
  /**
   * Authentication and authorization of the listeners that require a token:
   * the ServiceAccount token issuer and the RBAC authorizer (whose bootstrap
   * roles and bindings are created when the first such listener answers).
   */
  readonly auth: ClusterAuth;
  /** API Priority and Fairness of the HTTP listeners (null when turned off). */
  readonly flowControl: FlowController | null;
  /** API aggregation of the HTTP listeners (null when turned off); it starts with the first listener. */
  readonly aggregator: Aggregator | null;
  /** The front proxy's CA and client certificate (`frontProxy`), once generated; undefined without one. */
  readonly frontProxy: Promise<FrontProxyCertificates> | undefined;
  readonly #garbageCollector: GarbageCollector | undefined;
  readonly #client: Client;
  readonly #ready: Promise<void>;
  /** The client CA `extension-apiserver-authentication` names: the first HTTPS listener's. */
  #clientCA: string | undefined;
  readonly #kubernetesService: boolean;
  readonly #logger: Logger;
  readonly #listeners = new Set<ListeningApiServer>();
  readonly #crdController: BackgroundRun | undefined;
  readonly #policyStatus: BackgroundRun | undefined;
  readonly #apiServices: RunningRegistration | undefined;
  readonly #flowControl: RunningFlowControl | undefined;
  #closed = false;

  constructor(options: ApiServerOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? realRandom;
    this.storage =
      options.storage ??
      new MemoryStorage({
        clock: this.clock,
        historySize: options.historySize,
        historyBytes: options.historyBytes,
        maxObjectBytes: options.maxObjectBytes,
        watchBufferSize: options.watchBufferSize,
      });
    this.serviceIPs = new ClusterIPAllocator(
      options.serviceClusterIPRange ?? defaultServiceCIDR,
      this.random,
    );
    this.serviceNodePorts = new NodePortAllocator(
      options.serviceNodePortRange ?? defaultServiceNodePortRange,
      this.random,
    );
    const storage = this.storage;
    this.#kubernetesService = options.kubernetesService ?? true;
    this.#logger = options.logger ?? noopLogger;
    const ready = (this.#ready = createInitialObjects(storage, this.clock, this.random).then(() =>
      recoverServiceAllocations(
        storage,
        { ips: this.serviceIPs, nodePorts: this.serviceNodePorts },
        this.clock,
        this.random,
        this.#kubernetesService,
      ),
    ));
    const counted = new WriteCountingStorage(this.storage);
    const admissionLists = new ListCache(counted, this.clock);
    const admissionContext = storageContext(
      counted,
      this.clock,
      (apiVersion, kind) => this.registry.resourceForKind(apiVersion, kind),
      this.random,
      (question) => this.#allows(question),
      admissionEquivalence(() => this.registry.definitions),
      admissionLists,
    );
    const chosen = options.admissionPlugins ?? embeddedAdmissionPlugins;
    const admission = (this.#admissionObservers.chain = admissionChainOf(chosen, {
      context: admissionContext,
      transport: this.admissionWebhooks,
      webhookObserver: this.#admissionObservers.webhooks,
    }));
    this.registry = new Registry({
      admission: admission.plugins.length > 0 ? admission : undefined,
      storage: counted,
      clock: this.clock,
      random: this.random,
      definitions: new ResourceDefinitions(
        options.definitions ?? options.resources?.map(definitionFor) ?? builtinDefinitions,
      ),
      maxObjectBytes: options.maxObjectBytes ?? 1.5 * 1024 * 1024,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      ready,
      serviceIPs: this.serviceIPs,
      serviceNodePorts: this.serviceNodePorts,
    });
    this.#client = new InProcessClient(this.registry, undefined, this.#answerReview);
    this.auth = new ClusterAuth({
      client: this.#client,
      clock: this.clock,
      store: { storage: counted, clock: this.clock, random: this.random },
      bootstrapped: () => admissionLists.clear(),
    });
    const loopback = { client: this.#client, clock: this.clock, random: this.random };
    this.flowControl = flowControllerOf(options.flowControl, this.storage, loopback);
    this.frontProxy = frontProxyOf(options.frontProxy);
    const aggregation = { ...options.aggregation, ...loopback, frontProxy: this.frontProxy };
    this.aggregator = options.aggregation === false ? null : new Aggregator(aggregation);
    if (options.customResourceDefinitions ?? true) {
      this.registry.definitions.add(customResourceDefinitionKind);
      const controller = new CustomResourceDefinitionController({
        client: this.#client,
        definitions: this.registry.definitions,
        clock: this.clock,
        conversionWebhooks: { transport: this.admissionWebhooks, context: admissionContext },
      });
      this.#crdController = runOnceReady(ready, (signal) => controller.run({ signal }));
    }
    // Served from the start, as upstream's, empty until `serveComponentStatuses` says what there is.
    if (options.definitions === undefined && options.resources === undefined)
      this.registry.definitions.add(componentStatusDefinition(() => []));
    if (this.registry.definitions.get(validatingAdmissionPolicies) !== undefined) {
      const source = this.registry.definitions;
      const controller = new PolicyStatusController({ client: this.#client, source, clock: this.clock });
      this.#policyStatus = runOnceReady(ready, (signal) => controller.run({ signal }));
    }
    if ((options.apiServiceRegistration ?? false) && this.registry.definitions.get(apiServices) !== undefined)
      this.#apiServices = startAPIServiceRegistration(
        { client: this.#client, definitions: this.registry.definitions, clock: this.clock },
        ready,
      );
    if ((options.flowControlBootstrap ?? false) && this.registry.definitions.get(flowSchemas) !== undefined)
      this.#flowControl = startFlowControlConfiguration({ client: this.#client, clock: this.clock }, ready);
    if (options.garbageCollection ?? true) {
      this.#garbageCollector = new GarbageCollector({
        registry: this.registry,
        storage: this.storage,
        logger: options.logger,
      });
      // A storage that cannot take the initial namespaces fails every request with that error;
      // the collector then never starts (nothing would be left for it to do).
      ready.then(
        () => this.#garbageCollector?.start(),
        () => {},
      );
    }
  }

  /**
   * The kinds this server serves, live: `definitions.add(defineKind({ descriptor }))`
   * serves a new kind over HTTP and through the in-process client from the next request on.
   */
  get definitions(): ResourceDefinitions {
    return this.registry.definitions;
  }

  /**
   * Serves `kubectl get componentstatuses` (`v1` ComponentStatus, deprecated
   * but served) from `provider`: the health of the control plane's
   * components as this server knows it, asked on each read. Until it is
   * called the list is empty (the resource is served from the start, as
   * upstream's); a second call replaces the provider.
   */
  serveComponentStatuses(provider: ComponentStatusProvider): void {
    const definition = componentStatusDefinition(provider);
    this.registry.definitions.remove(definition.descriptor);
    this.registry.definitions.add(definition);
  }

  /**
   * Serves the resource metrics API (`metrics.k8s.io/v1beta1` NodeMetrics
   * and PodMetrics, which `kubectl top` and the HPA read) from `provider`,
   * as metrics-server does on a cluster; a second call replaces the provider.
   */
  serveResourceMetrics(provider: ResourceMetricsProvider): void {
    for (const definition of resourceMetricsDefinitions(provider)) {
      this.registry.definitions.remove(definition.descriptor);
      this.registry.definitions.add(definition);
    }
  }

  /**
   * A client that calls this server in process. Without options it is the
   * server's own trusted client (as kube-apiserver's loopback client, it may
   * do anything). With `user`, it acts as that user: every call is judged by
   * the server's authorizer chain (`Node,RBAC`) and every write reaches
   * admission as that user's, as the same calls over HTTP with that user's
   * credentials would — how a component runs as its own identity
   * (`system:node:<name>` in `system:nodes`, `system:kube-scheduler`, a
   * controller's ServiceAccount). `userAgent` is the client's User-Agent:
   * writes without `fieldManager` are recorded in managedFields under its
   * product (`kube-controller-manager/v1.32.0 …` → `kube-controller-manager`).
   * `shared` skips the copy of every object handed out: only for a caller
   * that copies each at once and changes none, as `servePort` does when it
   * posts them to another thread (`NodeThreads`).
   */
  client(
    options: {
      user?: ClientUser | undefined;
      userAgent?: string | undefined;
      shared?: boolean | undefined;
    } = {},
  ): Client {
    if (options.user === undefined && options.userAgent === undefined && options.shared !== true)
      return this.#client;
    const identity = options.user === undefined ? undefined : inProcessIdentity(this.auth, options.user);
    return new InProcessClient(
      this.registry,
      identity,
      this.#answerReview,
      options.userAgent,
      options.shared,
    );
  }

  /**
   * The access and token reviews for in-process clients, judged by this
   * server's authorizer as over HTTP; the server's own client asks as the
   * loopback user (`system:apiserver` in `system:masters`).
   */
  readonly #answerReview: ReviewAnswerer = (resource, namespace, body, user) => {
    const route = reviewRouteOf(resource.group, resource.plural, namespace);
    if (route === undefined) return undefined;
    const asker = user ?? loopbackUser;
    const userInfo = {
      username: asker.username,
      groups: [...asker.groups],
      ...(asker.uid === undefined ? {} : { uid: asker.uid }),
      ...(asker.extra === undefined ? {} : { extra: copyExtra(asker.extra) }),
    };
    return answerReview(route, copyJson(body), userInfo, {
      authn: { adminToken: undefined, staticTokens: new Map(), auth: this.auth },
      client: this.#client,
      now: this.clock.now(),
    });
  };

  /**
   * Times the admission chain of every write, from now until the returned
   * function is called: each plugin's phase (`admissionController`, what
   * kube-apiserver reports as `apiserver_admission_controller_admission_duration_seconds`)
   * and each whole phase (`admissionStep`, `…_step_admission_duration_seconds`).
   * A listener's `metrics` that have these methods are attached this way.
   * While nobody observes, nothing is timed.
   */
  observeAdmission(observer: Partial<AdmissionObserver>): () => void {
    return this.#admissionObservers.add(observer);
  }

  /**
   * Serves this server's Kubernetes REST API over HTTP (on 127.0.0.1 and a
   * free port unless told otherwise) and resolves once it listens. `close()`
   * of the API server closes every listener too.
   */
  async listen(options: ListenOptions = {}): Promise<ListeningApiServer> {
    if (this.#closed) throw new Error("ApiServer.listen: the server is closed");
    const listening = await listen(this, options);
    this.#listeners.add(listening);
    await this.#publishListener(listening);
    // The listener's metrics count the webhook calls and time the admission chain of every request, wherever it came from.
    const stopObserving =
      options.metrics === undefined ? undefined : this.#admissionObservers.add(options.metrics);
    listening.server.once("close", () => {
      this.#listeners.delete(listening);
      stopObserving?.();
    });
    return listening;
  }

  /**
   * What a listener changes in the cluster, as kube-apiserver's reconcilers
   * keep it: the first one is the address `default/kubernetes` names, and the
   * front proxy's trust is published. A failure is logged; the listener
   * serves either way.
   */
  async #publishListener(listening: ListeningApiServer): Promise<void> {
    try {
      await this.#ready;
      if (this.#listeners.size === 1 && this.#kubernetesService)
        await publishKubernetesEndpoints(this.#client, listening.host, listening.port);
      if (this.frontProxy !== undefined) {
        this.#clientCA ??= listening.certificateAuthority;
        await publishExtensionAuthentication(this.#client, await this.frontProxy, this.#clientCA);
      }
    } catch (error) {
      this.#logger.error({ err: error }, "could not publish the listener's address and front proxy");
    }
  }

  /** What admission plugins ask the authorizer (a CSR's signer: `approve`, `sign`). */
  async #allows({ user, verb, apiGroup, resource, name }: AuthorizationQuestion): Promise<boolean> {
    const decision = await this.auth.authorize({
      user: { ...user, groups: [...user.groups], extra: copyExtra(user.extra) },
      resourceRequest: true,
      verb,
      apiGroup,
      resource,
      subresource: "",
      namespace: "",
      name,
    });
    return decision.allowed;
  }

  /**
   * Resolves once background work has caught up with every write made so far:
   * the garbage collector has processed all changes up to now and has nothing
   * left to do, and the APIServices follow the kinds served now. Tests await
   * it instead of sleeping.
   */
  async flush(): Promise<void> {
    try {
      await this.#ready;
    } catch {
      return; // the storage never took the initial namespaces: there is no background work
    }
    await this.#apiServices?.registration.settled();
    await this.#flowControl?.configuration.settled();
    await this.aggregator?.settled();
    await this.#garbageCollector?.flush();
  }

  /** Closes every HTTP listener, ends every watch (served and internal) and stops the garbage collector. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#listeners].map((listening) => listening.close()));
    this.#crdController?.stop.abort();
    this.#policyStatus?.stop.abort();
    this.#apiServices?.stop.abort();
    this.#flowControl?.stop.abort();
    const authStopped = Promise.all([this.auth.close(), this.flowControl?.close(), this.aggregator?.close()]);
    this.registry.closeWatches();
    this.admissionWebhooks.close();
    await this.#crdController?.done;
    await this.#policyStatus?.done;
    await this.#apiServices?.done;
    await this.#flowControl?.done;
    await authStopped;
    await this.#garbageCollector?.stop();
    this.storage.close();
  }
}

/** Something the server runs in the background: how to stop it, and when it has. */
interface BackgroundRun {
  stop: AbortController;
  done: Promise<void>;
}

/** Starts `run` once the server is `ready` (its initial objects stored); never, if it cannot be. */
function runOnceReady(ready: Promise<void>, run: (signal: AbortSignal) => Promise<void>): BackgroundRun {
  const stop = new AbortController();
  const done = ready.then(
    () => run(stop.signal),
    () => {},
  );
  return { stop, done };
}

/** A user's extra values as the authorizer takes them (mutable arrays). */
function copyExtra(
  extra: Readonly<Record<string, readonly string[]>> | undefined,
): Record<string, string[]> | undefined {
  return extra === undefined
    ? undefined
    : Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, [...v]]));
}

/** The server's API Priority and Fairness, its lists' costs estimated from what the storage holds; null when off. */
function flowControllerOf(
  options: ApiServerOptions["flowControl"],
  storage: Storage,
  loopback: Pick<FlowControllerOptions, "client" | "clock">,
): FlowController | null {
  if (options === false) return null;
  // The objects of a resource (`deployments.apps`), where the storage knows at once.
  const objectCount = (groupResource: string): ObjectCount => {
    const dot = groupResource.indexOf(".");
    const plural = dot < 0 ? groupResource : groupResource.slice(0, dot);
    const group = dot < 0 ? "core" : groupResource.slice(dot + 1);
    return storage.count?.(`/${group}/${plural}/`) ?? "not-found";
  };
  return new FlowController({ objectCount, ...options, ...loopback });
}
