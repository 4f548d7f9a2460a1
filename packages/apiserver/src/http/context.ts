import type * as http from "node:http";
import type { ResourceDescriptor } from "@reconcile/api";
import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import type { ResourceDefinition, SubresourceHandler } from "../kinds/definition.js";
import { defaultPrinter } from "../kinds/printers/index.js";
import type { Registry } from "../registry/registry.js";
import type { Printer } from "../registry/resource-definition.js";
import type { Aggregator } from "./aggregation/aggregator.js";
import { type AuditOptions, Auditor, auditOf } from "./audit/event.js";
import {
  type Authentication,
  type ClusterAuth,
  type StaticTokenUser,
  staticTokenMap,
} from "./auth/authenticate.js";
import type { RequestHeaderAuthenticator } from "./auth/request-header.js";
import { discoveredDefinitions, routableResources } from "./auth/review-kinds.js";
import type { ReviewContext } from "./auth/reviews.js";
import { readingRequestBody } from "./connection-limiter.js";
import type { AggregatedGroupVersion } from "./discovery.js";
import type { FlowController } from "./flow-control/controller.js";
import { openApiDocuments } from "./openapi.js";
import type { KubeletConnection } from "./pod-connect.js";
import { defaultMaxRequestBytes, readRequestBody } from "./request-body.js";
import type { ApiServerMetrics } from "./request-metrics.js";
import { bodyTimeout } from "./respond.js";

export interface HttpHandlerOptions {
  /** The registry every request runs through (the one the in-process client uses). */
  registry: Registry;
  /** Serves `GET /metrics` from it, after reporting the storage object counts. */
  metrics?: ApiServerMetrics | undefined;
  /** Ages in Tables are computed with it. Default `realClock`. */
  clock?: Clock | undefined;
  /** The largest request body accepted, in bytes. Default 3 MiB (kube-apiserver's). */
  maxRequestBytes?: number | undefined;
  /**
   * When set, every request but `/healthz`, `/livez`, `/readyz` and `/version`
   * needs `Authorization: Bearer <token>`; others get a 401 Status. Default: no
   * auth, and then only requests whose `Host` is a loopback name or address
   * are answered (others get a 403), so a web page cannot reach the server
   * through DNS rebinding.
   */
  token?: string | undefined;
  /**
   * More bearer tokens and the users they stand for (kube-apiserver's
   * `--token-auth-file`); only with `token`. Default: none.
   */
  users?: readonly StaticTokenUser[] | undefined;
  /**
   * With `token`: who requests are (the admin token, `users`, client
   * certificates, ServiceAccount tokens, anonymous) and what RBAC lets them
   * do. The server's own, shared by all its listeners.
   */
  auth?: ClusterAuth | undefined;
  /** `host:port` advertised in `/api`. Default: the request's Host header. */
  serverAddress?: string | undefined;
  /**
   * A request other than a watch that has not been answered in this time gets
   * a 504 Timeout (or, with its answer under way, its connection closed), as
   * kube-apiserver's `--request-timeout`. Measured on `clock`. Default 60,000 ms.
   */
  requestTimeoutMs?: number | undefined;
  /**
   * A request body still arriving this long after the server began to read
   * it is refused with a 408 and its connection closed: a client that trickles
   * a body must not hold its slot for the whole request timeout. Measured on
   * `clock`. Default 15,000 ms (a 3 MiB body at 200 KiB/s).
   */
  bodyTimeoutMs?: number | undefined;
  /**
   * A watch whose client has taken nothing of what the server wrote for this
   * long is closed: a client that stops reading must not hold a watch (and its
   * buffered events) forever. Measured on `clock`. Default 30,000 ms.
   */
  watchWriteTimeoutMs?: number | undefined;
  /** How `pods/log` reaches the pod's kubelet. Default: none (logs of a pod on a node are a 500). */
  kubeletConnection?: KubeletConnection | undefined;
  /**
   * Audit requests (kube-apiserver's `--audit-policy-file` and its backends):
   * a policy deciding what each request records, and where events go.
   * Default: none (every answer still carries its `Audit-Id`).
   */
  audit?: AuditOptions | Auditor | undefined;
  /** API Priority and Fairness: classify every request, and hold it to its level's seats. Default: none. */
  flowControl?: FlowController | undefined;
  /** API aggregation: group-versions whose APIService names a Service are served by that server. Default: none. */
  aggregator?: Aggregator | undefined;
  /** A front proxy's requests, trusted by its client certificate (with `token`). Default: none. */
  requestHeader?: RequestHeaderAuthenticator | undefined;
}

/** kube-apiserver's `--request-timeout` default. */
export const defaultRequestTimeoutMs = 60_000;
const defaultBodyTimeoutMs = 15_000;
const defaultWatchWriteTimeoutMs = 30_000;

/**
 * What every request of one handler shares: its options with their defaults
 * applied, and the per-kind facts (printer, protobuf message, POST
 * subresources, OpenAPI) read from the registry's definitions per request, so
 * a kind defined at run time is served at once.
 */
export class HandlerContext {
  readonly registry: Registry;
  readonly clock: Clock;
  readonly maxRequestBytes: number;
  readonly token: Buffer | undefined;
  readonly serverAddress: string | undefined;
  readonly requestTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly watchWriteTimeoutMs: number;
  readonly kubeletConnection: KubeletConnection | undefined;
  readonly metrics: ApiServerMetrics | undefined;
  /** Authentication and authorization; undefined without a token (every loopback request is allowed). */
  readonly authn: Authentication | undefined;
  /** The audit policy and backend; undefined when requests are not audited. */
  readonly auditor: Auditor | undefined;
  readonly flowControl: FlowController | undefined;
  readonly aggregator: Aggregator | undefined;
  /** What routing and discovery know at the definitions' generation they were computed at. */
  #served:
    | {
        generation: number;
        resources: readonly ResourceDescriptor[];
        definitions: readonly ResourceDefinition[];
      }
    | undefined;
  /** OpenAPI of the definitions' generation it was computed at, recomputed when that changes. */
  #openApi: { generation: number; documents: ReturnType<typeof openApiDocuments> } | undefined;

  constructor(options: HttpHandlerOptions) {
    this.registry = options.registry;
    this.clock = options.clock ?? realClock;
    this.maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    this.token = options.token === undefined ? undefined : Buffer.from(options.token);
    this.serverAddress = options.serverAddress;
    this.requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? defaultBodyTimeoutMs;
    this.watchWriteTimeoutMs = options.watchWriteTimeoutMs ?? defaultWatchWriteTimeoutMs;
    this.kubeletConnection = options.kubeletConnection;
    this.metrics = options.metrics;
    this.flowControl = options.flowControl;
    this.aggregator = options.aggregator;
    this.auditor =
      options.audit === undefined || options.audit instanceof Auditor
        ? options.audit
        : new Auditor(options.audit, this.clock);
    this.authn =
      this.token === undefined || options.auth === undefined
        ? undefined
        : {
            adminToken: this.token,
            staticTokens: staticTokenMap(options.users),
            auth: options.auth,
            requestHeader: options.requestHeader,
          };
  }

  #servedNow() {
    const generation = this.registry.definitions.generation;
    if (this.#served?.generation !== generation)
      this.#served = {
        generation,
        resources: routableResources(this.registry.resources),
        definitions: discoveredDefinitions(this.registry.definitions.list()),
      };
    return this.#served;
  }

  /** The group-versions aggregated servers serve, for discovery. */
  aggregatedGroupVersions(): AggregatedGroupVersion[] {
    if (this.aggregator === undefined) return [];
    return this.aggregator.remoteGroupVersions().map(({ apiService, group, version, discovery }) => ({
      group,
      version,
      groupPriorityMinimum: apiService.spec?.groupPriorityMinimum ?? 0,
      versionPriority: apiService.spec?.versionPriority ?? 0,
      discovery,
    }));
  }

  /** The resources a request path may name: the registry's, and the reviews (answered, not stored). */
  routableResources(): readonly ResourceDescriptor[] {
    return this.#servedNow().resources;
  }

  /** The definitions discovery lists: the registry's (ServiceAccounts with `token`), and the reviews. */
  discoveryDefinitions(): readonly ResourceDefinition[] {
    return this.#servedNow().definitions;
  }

  /** What the review endpoints need. */
  reviewContext(): ReviewContext {
    return { authn: this.authn, client: this.authn?.auth.client, now: this.clock.now() };
  }

  /** Reads the body, telling a client that waits for it (`Expect: 100-continue`) to send it only if it may. */
  body(request: http.IncomingMessage, response: http.ServerResponse): Promise<Buffer> {
    const declared = Number(request.headers["content-length"]);
    if (/\b100-continue\b/i.test(request.headers.expect ?? "") && !(declared > this.maxRequestBytes))
      response.writeContinue();
    const done = readingRequestBody(request.socket);
    const read = readRequestBody(request, this.maxRequestBytes);
    let timer: TimerHandle | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = this.clock.setTimeout(() => {
        // The rest of this body will not be read: the connection goes with the answer.
        response.shouldKeepAlive = false;
        request.pause();
        reject(bodyTimeout(this.bodyTimeoutMs));
      }, this.bodyTimeoutMs);
    });
    const body = Promise.race([read, late]).finally(() => {
      if (timer !== undefined) this.clock.clearTimeout(timer);
      done();
    });
    const audit = auditOf(response);
    if (audit === undefined) return body;
    return body.then((bytes) => {
      audit.requestBody(bytes, request.headers["content-type"], this.protobufMessageOf);
      return bytes;
    });
  }

  /** OpenAPI of the kinds served now; computed once per change of the served set. */
  openApiDocuments(): ReturnType<typeof openApiDocuments> {
    const generation = this.registry.definitions.generation;
    if (this.#openApi?.generation !== generation)
      this.#openApi = { generation, documents: openApiDocuments(this.registry.definitions.list()) };
    return this.#openApi.documents;
  }

  /** The protobuf message of a served kind, for kubectl's protobuf bodies. */
  readonly protobufMessageOf = (apiVersion: string, kind: string): string | undefined =>
    this.registry.definitions.forKind(apiVersion, kind)?.protobufMessage;

  /** The subresources of a served resource, by name, as its definition serves them. */
  readonly subresourcesOf = (resource: ResourceDescriptor): Readonly<Record<string, SubresourceHandler>> =>
    this.registry.definitions.get(resource)?.subresources ?? {};

  /** The names of a served resource's subresources, for routing. */
  readonly subresourceNamesOf = (resource: ResourceDescriptor): readonly string[] =>
    Object.keys(this.subresourcesOf(resource));

  /** The warning every answer about a served resource carries (a deprecated version's), if any. */
  warningOf(resource: ResourceDescriptor): string | undefined {
    return this.registry.definitions.get(resource)?.warning;
  }

  /** The columns a served resource prints with. */
  printerOf(resource: ResourceDescriptor): Printer {
    return this.registry.definitions.get(resource)?.printer ?? defaultPrinter;
  }
}
