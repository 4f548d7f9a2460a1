import type * as http from "node:http";
import type { Duplex } from "node:stream";
import {
  type APIService,
  apiServices,
  endpoints,
  isNotFound,
  jsonEqual,
  rfc3339,
  services,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, type Random, realRandom, type TimerHandle } from "@reconcile/clock";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";
import type { UserInfo } from "../auth/user.js";
import { watchKind } from "../auth/watch-kind.js";
import type { CertificateAndKey } from "../tls.js";
import {
  type AvailableVerdict,
  discoveryAttempts,
  discoveryVerdict,
  firstPassing,
  isAvailable,
  serviceVerdict,
  withAvailable,
} from "./availability.js";
import {
  BackendAgents,
  probeBackend,
  proxyToBackend,
  proxyUpgradeToBackend,
  serviceUnavailable,
} from "./backend.js";
import { type RemoteDiscovery, remoteDiscovery } from "./discovery.js";
import { endpointURL, type ResolvedEndpoint, ResolveError, resolveServiceEndpoint } from "./resolve.js";

export interface AggregatorOptions {
  /** The server's own client: APIServices, Services and Endpoints are read and APIService status written with it. */
  client: Client;
  clock: Clock;
  /** How often every aggregated APIService is checked again without a change (upstream's resync). Default 30,000 ms. */
  recheckIntervalMs?: number | undefined;
  /** How long the discovery check waits for an aggregated server. Default 5,000 ms. */
  probeTimeoutMs?: number | undefined;
  /** Where the address of a Service with several is drawn from. Default: `realRandom`. */
  random?: Random | undefined;
  /**
   * The front proxy whose client certificate requests and checks are made
   * with (kube-apiserver's `--proxy-client-cert-file`), which aggregated
   * servers trust. Default: none (they see no client certificate).
   */
  frontProxy?: Promise<{ client: CertificateAndKey }> | undefined;
}

/** A group-version served by an aggregated server: its APIService and what its discovery said. */
export interface RemoteGroupVersion {
  readonly apiService: APIService;
  readonly group: string;
  readonly version: string;
  readonly discovery: RemoteDiscovery | undefined;
}

/**
 * kube-aggregator in the API server: APIServices whose `spec.service` names
 * a Service are served by that server. Requests under `/apis/<group>/<version>`
 * are passed on to it (with the user as front-proxy headers), discovery
 * lists its group and resources, and its `Available` condition is kept as
 * the remote availability controller keeps it — checked on every change of
 * the APIService, its Service or its Endpoints, and every 30 s.
 */
export class Aggregator {
  readonly #client: Client;
  readonly #clock: Clock;
  readonly #recheckIntervalMs: number;
  readonly #probeTimeoutMs: number;
  readonly #random: Random;
  /** APIServices with a Service, by name. */
  readonly #remote = new Map<string, APIService>();
  /** The same, by `group/version`. */
  readonly #byGroupVersion = new Map<string, APIService>();
  readonly #discovery = new Map<string, RemoteDiscovery>();
  readonly #agents = new BackendAgents();
  readonly #proxyClient: Promise<CertificateAndKey | undefined>;
  readonly #stop = new AbortController();
  #started: Promise<void> | undefined;
  #serviceWatches: Promise<unknown> | undefined;
  #running: Promise<unknown>[] = [];
  /** Names to check; one check runs at a time. */
  readonly #dirty = new Set<string>();
  #checking: Promise<void> = Promise.resolve();
  #recheck: TimerHandle | undefined;
  /** How many times each APIService went from Available to not, by the reason it then gave. */
  readonly #unavailable = new Map<string, Map<string, number>>();

  constructor(options: AggregatorOptions) {
    this.#client = options.client;
    this.#clock = options.clock;
    this.#recheckIntervalMs = options.recheckIntervalMs ?? 30_000;
    this.#probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
    this.#random = options.random ?? realRandom;
    this.#proxyClient = options.frontProxy?.then((proxy) => proxy.client) ?? Promise.resolve(undefined);
    // A failure to make it shows on the first request or check that needs it.
    this.#proxyClient.catch(() => {});
  }

  /** Whether the APIServices have been listed (after {@link start}). */
  synced = false;

  /** Starts watching APIServices (once); settles when they are listed. */
  start(): Promise<void> {
    this.#started ??= this.#watchAPIServices().then(() => {
      this.synced = true;
    });
    return this.#started;
  }

  async #watchAPIServices(): Promise<void> {
    let listed = true;
    try {
      await this.#client.resource(apiServices).list({ limit: 1 });
    } catch (error) {
      if (isNotFound(error)) return; // a server that does not serve APIServices aggregates nothing
      listed = false;
    }
    const watch = watchKind(this.#client, this.#clock, apiServices, this.#stop.signal, (type, object) =>
      this.#apiServiceChanged(type, object),
    );
    this.#running.push(watch.done);
    // A storage that cannot list now is listed again in the background; requests do not wait for it.
    if (listed) await watch.synced;
  }

  /** Stops the watches, the checks and the connections to aggregated servers. */
  async close(): Promise<void> {
    this.#stop.abort();
    if (this.#recheck !== undefined) this.#clock.clearTimeout(this.#recheck);
    await Promise.allSettled(this.#running);
    await this.#checking;
    this.#agents.close();
  }

  /** Settles once every check asked for so far has run. */
  async settled(): Promise<void> {
    let seen: Promise<void> | undefined;
    while (seen !== this.#checking) {
      seen = this.#checking;
      await seen;
    }
  }

  /** `[name, reason, count]` of each APIService that went from Available to not (upstream's unavailable counter). */
  *unavailableCounts(): Iterable<[string, string, number]> {
    for (const [name, reasons] of this.#unavailable)
      for (const [reason, count] of reasons) yield [name, reason, count];
  }

  /** The aggregated APIService serving the group-version a path is under (`/apis/<group>/<version>[/…]`), if any. */
  remoteFor(pathname: string): APIService | undefined {
    if (this.#byGroupVersion.size === 0 || !pathname.startsWith("/apis/")) return undefined;
    const [group, version] = pathname.slice("/apis/".length).split("/");
    if (!group || !version) return undefined;
    return this.#byGroupVersion.get(`${group}/${version}`);
  }

  /** Every aggregated group-version, with its discovery as last fetched. */
  remoteGroupVersions(): RemoteGroupVersion[] {
    return [...this.#remote.values()].map((apiService) => ({
      apiService,
      group: apiService.spec?.group ?? "",
      version: apiService.spec?.version ?? "",
      discovery: this.#discovery.get(apiService.metadata?.name ?? ""),
    }));
  }

  /**
   * Passes a request on to the aggregated server of `apiService`: a 503
   * `service unavailable` while the APIService is not Available or its
   * Service resolves to no address, as kube-aggregator answers.
   */
  async proxy(
    apiService: APIService,
    user: UserInfo,
    pathAndQuery: string,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const endpoint = await this.#endpointOf(apiService);
    if (endpoint === undefined) {
      request.resume();
      response.writeHead(503, {
        "Content-Type": "text/plain; charset=utf-8",
        "X-Content-Type-Options": "nosniff",
      });
      response.end("service unavailable\n");
      return;
    }
    await proxyToBackend(
      apiService,
      this.#agents.agentFor(apiService, await this.#proxyClient),
      endpoint,
      user,
      pathAndQuery,
      request,
      response,
    );
  }

  /**
   * Passes an upgrade request (exec-like streams) for `apiService` on to its
   * server as {@link proxy} passes others; the same 503 while it is not
   * Available or resolves to no address.
   */
  async proxyUpgrade(
    apiService: APIService,
    user: UserInfo,
    pathAndQuery: string,
    request: http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ): Promise<void> {
    const endpoint = await this.#endpointOf(apiService);
    if (endpoint === undefined) return serviceUnavailable(socket, "service unavailable");
    const client = await this.#proxyClient;
    proxyUpgradeToBackend(apiService, client, endpoint, user, pathAndQuery, request, socket, head);
  }

  /** Where a request for `apiService` goes now; undefined while it is not Available or resolves to no address. */
  async #endpointOf(apiService: APIService): Promise<ResolvedEndpoint | undefined> {
    if (!isAvailable(apiService)) return undefined;
    const endpoint = this.#resolve(apiService, ...(await this.#serviceAndEndpoints(apiService)));
    return endpoint instanceof ResolveError ? undefined : endpoint;
  }

  #apiServiceChanged(type: string, object: APIService): void {
    const name = object.metadata?.name ?? "";
    const previous = this.#remote.get(name);
    if (previous !== undefined)
      this.#byGroupVersion.delete(`${previous.spec?.group ?? ""}/${previous.spec?.version ?? ""}`);
    if (type === "DELETED" || object.spec?.service === undefined) {
      this.#remote.delete(name);
      this.#discovery.delete(name);
      this.#agents.forget(name);
      return;
    }
    this.#remote.set(name, object);
    this.#byGroupVersion.set(`${object.spec.group ?? ""}/${object.spec.version ?? ""}`, object);
    this.#watchServices();
    // A status write of the check itself changes nothing the check reads.
    if (previous === undefined || !jsonEqual(previous.spec, object.spec)) this.#enqueue([name]);
  }

  /** Watches Services and Endpoints (once there is an aggregated APIService): a change checks the APIServices on it. */
  #watchServices(): void {
    if (this.#serviceWatches !== undefined) return;
    const signal = this.#stop.signal;
    const changed = (_type: string, object: Service | Endpoints) => {
      const namespace = object.metadata?.namespace ?? "";
      const serviceName = object.metadata?.name ?? "";
      const names: string[] = [];
      for (const [name, apiService] of this.#remote) {
        const ref = apiService.spec?.service;
        if (ref?.namespace === namespace && ref.name === serviceName) names.push(name);
      }
      this.#enqueue(names);
    };
    const watches = [
      watchKind(this.#client, this.#clock, services, signal, changed),
      watchKind(this.#client, this.#clock, endpoints, signal, changed),
    ];
    this.#serviceWatches = Promise.allSettled(watches.map((w) => w.done));
    this.#running.push(this.#serviceWatches);
    this.#scheduleRecheck();
  }

  #scheduleRecheck(): void {
    if (this.#stop.signal.aborted) return;
    this.#recheck = this.#clock.setTimeout(() => {
      this.#enqueue([...this.#remote.keys()]);
      this.#scheduleRecheck();
    }, this.#recheckIntervalMs);
  }

  #enqueue(names: readonly string[]): void {
    if (names.length === 0 || this.#stop.signal.aborted) return;
    const idle = this.#dirty.size === 0;
    for (const name of names) this.#dirty.add(name);
    if (!idle) return;
    this.#checking = this.#checking.then(async () => {
      while (this.#dirty.size > 0 && !this.#stop.signal.aborted) {
        const [name] = this.#dirty;
        this.#dirty.delete(name!);
        await this.#check(name!).catch(() => {
          // A failed status write (a conflict, the server stopping) is retried at the next change or resync.
        });
      }
    });
  }

  /** Checks one APIService and writes its `Available` condition if it changed. */
  async #check(name: string): Promise<void> {
    const apiService = this.#remote.get(name);
    if (apiService === undefined) return;
    const verdict = await this.#verdict(apiService);
    const now = rfc3339(this.#clock.now());
    const conditions = withAvailable(apiService.status?.conditions ?? [], verdict, now);
    if (jsonEqual(conditions, apiService.status?.conditions ?? [])) return;
    const written = await this.#client
      .resource(apiServices)
      .updateStatus({ ...apiService, status: { ...apiService.status, conditions } });
    // Counted as upstream's SetUnavailableCounter: a fall from Available, by the reason now given.
    if (isAvailable(apiService) && verdict.status !== "True") {
      let reasons = this.#unavailable.get(name);
      if (reasons === undefined) this.#unavailable.set(name, (reasons = new Map()));
      reasons.set(verdict.reason, (reasons.get(verdict.reason) ?? 0) + 1);
    }
    // The watch brings the same object; the proxy sees the verdict at once.
    if (this.#remote.get(name)?.metadata?.resourceVersion === apiService.metadata?.resourceVersion)
      this.#apiServiceChanged("MODIFIED", written);
  }

  async #verdict(apiService: APIService): Promise<AvailableVerdict> {
    const spec = apiService.spec!;
    const [service, endpointsOfService] = await this.#serviceAndEndpoints(apiService);
    const early = serviceVerdict(apiService, service, endpointsOfService);
    const name = apiService.metadata?.name ?? "";
    if (early !== undefined) {
      this.#markStale(name);
      return early;
    }
    const path =
      name === "v1." ? `/api/${spec.version ?? ""}` : `/apis/${spec.group ?? ""}/${spec.version ?? ""}`;
    // Five checks at once, each on an address drawn afresh: one answering backend is enough.
    const { verdict, body } = await firstPassing(
      discoveryAttempts,
      async (): Promise<{ verdict: AvailableVerdict; body?: string | undefined }> => {
        const endpoint = this.#resolve(apiService, service, endpointsOfService);
        if (endpoint instanceof ResolveError)
          return { verdict: { status: "False", reason: "FailedDiscoveryCheck", message: endpoint.message } };
        const probe = await probeBackend(endpoint, path, this.#probeTimeoutMs, await this.#proxyClient);
        return {
          verdict: discoveryVerdict(`${endpointURL(endpoint)}${path}`, probe.failure),
          body: probe.body,
        };
      },
      (result) => result.verdict.status === "True",
    );
    if (verdict.status === "True")
      this.#discovery.set(name, remoteDiscovery(body ?? "", spec.group ?? "", spec.version ?? ""));
    else this.#markStale(name);
    return verdict;
  }

  /** Discovery of an APIService that cannot be reached: its last resources, marked stale. */
  #markStale(name: string): void {
    const last = this.#discovery.get(name);
    this.#discovery.set(name, { resources: last?.resources ?? [], freshness: "Stale" });
  }

  /** The Service an APIService names, and its Endpoints (each undefined when missing). */
  async #serviceAndEndpoints(apiService: APIService): Promise<[Service | undefined, Endpoints | undefined]> {
    const { namespace = "", name = "" } = apiService.spec?.service ?? {};
    const get = async <T>(resource: Parameters<Client["resource"]>[0]) => {
      try {
        return (await this.#client.resource(resource, namespace).get(name)) as T;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    };
    return Promise.all([get<Service>(services), get<Endpoints>(endpoints)]);
  }

  /** Where the APIService's server is reached, or why it cannot be. */
  #resolve(
    apiService: APIService,
    service: Service | undefined,
    endpointsOfService: Endpoints | undefined,
  ): ResolvedEndpoint | ResolveError {
    const ref = apiService.spec?.service ?? {};
    try {
      return resolveServiceEndpoint(
        service,
        endpointsOfService,
        ref.name ?? "",
        ref.port ?? 443,
        this.#random,
      );
    } catch (error) {
      if (error instanceof ResolveError) return error;
      throw error;
    }
  }
}
