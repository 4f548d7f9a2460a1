import {
  type DeepReadonly,
  errorMessage,
  isNotFound,
  isPodReady,
  jsonEqual,
  labelsEqual,
  metaNamespaceKeyFunc,
  type Node,
  nodes,
  type Pod,
  pods,
  ReconcileError,
  type RunOptions,
  services,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  objectFromTombstone,
  type SyncResult,
} from "@reconcile/controller";
import {
  defaultControllerRateLimiter,
  type RateLimiter,
  type RateLimitingInterface,
} from "@reconcile/workqueue";
import type { Service } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointPort, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import {
  type AddressFamily,
  addressFamiliesOf,
  endpointHostname,
  endpointSliceControllerName,
  findPort,
  headlessServiceLabel,
  isHeadless,
  managedByLabel,
  podAddress,
  podsForService,
  selectsPods,
  serviceNameLabel,
  servicesForPod,
  servicesToUpdateOnPodChange,
} from "./endpoint-util.js";
import { endpointSlices } from "./resources.js";

/** The slice informer index from `namespace/service` to the slices this controller manages for it. */
export const slicesByServiceIndex = "endpointSlicesByService";
/** Node label giving an endpoint's zone. */
export const zoneLabel = "topology.kubernetes.io/zone";

export interface EndpointSliceControllerOptions extends ControllerContext {
  /** Where EndpointSlices are written. Required. */
  client: Client;
  serviceInformer: ControllerInformer<Service>;
  podInformer: ControllerInformer<Pod>;
  nodeInformer: ControllerInformer<Node>;
  endpointSliceInformer: ControllerInformer<EndpointSlice>;
  /** Endpoints per slice (`--max-endpoints-per-slice`, 1–1000). Default 100. */
  maxEndpointsPerSlice?: number | undefined;
  /** Default: a rate-limiting queue named `endpoint_slice` (per item 1 s doubling to 1000 s, overall 10/s burst 100). Events come from `endpoint-slice-controller`. */
  queue?: RateLimitingInterface<string> | undefined;
}

const staleSlicesMarker = Symbol.for("reconcile.endpoints.stale-endpoint-slices");

/** The slices cache lags behind this controller's own writes; the sync is retried. `code` is `"endpoints.stale-endpoint-slices"`. */
export class StaleEndpointSlicesError extends ReconcileError<"endpoints.stale-endpoint-slices"> {
  readonly [staleSlicesMarker] = true;
  constructor(service: string) {
    super(
      "endpoints.stale-endpoint-slices",
      `EndpointSlice informer cache is out of date for service ${service}`,
    );
    this.name = "StaleEndpointSlicesError";
  }

  static override isInstance(error: unknown): error is StaleEndpointSlicesError {
    return ReconcileError.hasMarker(error, staleSlicesMarker);
  }
}

/**
 * kube-controller-manager's EndpointSlice controller
 * (`endpointslice-controller`): for every Service with a selector, the
 * selected pods as endpoints (`ready`, `serving`, `terminating` conditions,
 * node, zone, hostname, targetRef) in `discovery.k8s.io/v1` EndpointSlices of
 * at most `maxEndpointsPerSlice`, grouped by resolved port list, labelled
 * `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`,
 * owned by the Service. Changes reuse existing slices (fill, then create);
 * a Service with no endpoints keeps one empty placeholder slice.
 */
export class EndpointSliceController {
  readonly queue: RateLimitingInterface<string>;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #services: ControllerInformer<Service>;
  readonly #pods: ControllerInformer<Pod>;
  readonly #nodes: ControllerInformer<Node>;
  readonly #slices: ControllerInformer<EndpointSlice>;
  readonly #maxPerSlice: number;
  /** Per Service, the resourceVersion of each slice this controller last wrote ("" once deleted). */
  readonly #written = new Map<string, Map<string, string>>();

  constructor(options: EndpointSliceControllerOptions) {
    const { client, serviceInformer, podInformer, nodeInformer, endpointSliceInformer } = options;
    this.#maxPerSlice = maxEndpointsPerSlice(options.maxEndpointsPerSlice ?? 100);
    this.#harness = defineController({
      name: "endpoint_slice",
      context: options,
      events: { component: "endpoint-slice-controller", client },
      informers: {
        services: serviceInformer,
        pods: podInformer,
        nodes: nodeInformer,
        endpointslices: endpointSliceInformer,
      },
      queues: [
        {
          name: "endpoint_slice",
          queue: options.queue,
          rateLimiter: endpointSliceRateLimiter,
          workers: 5,
          sync: (key) => this.syncService(key),
        },
      ],
    });
    [this.#client, this.#services, this.#pods] = [client, serviceInformer, podInformer];
    [this.#nodes, this.#slices] = [nodeInformer, endpointSliceInformer];
    this.queue = this.#harness.queue;
    this.#addEventHandlers();
  }

  /** Services, their pods and others' changes to managed slices wake the Service's key (upstream's handlers). */
  #addEventHandlers(): void {
    const enqueue = (key: string, reason: string) => this.#harness.enqueue(key, reason);
    ensureIndex(this.#slices.getIndexer(), slicesByServiceIndex, (slice) => {
      const labels = slice.metadata?.labels;
      const service = labels?.[serviceNameLabel];
      if (!service || labels?.[managedByLabel] !== endpointSliceControllerName) return [];
      return [`${slice.metadata?.namespace ?? ""}/${service}`];
    });
    this.#services.addEventHandler({
      onAdd: (service) => enqueue(metaNamespaceKeyFunc(service), "Service added"),
      onUpdate: (_, service) => enqueue(metaNamespaceKeyFunc(service), "Service updated"),
      onDelete: (obj) => {
        const key = metaNamespaceKeyFunc(objectFromTombstone(obj));
        // The slices go with the Service through their owner reference; only memory is dropped here.
        this.#written.delete(key);
      },
    });
    const serviceIndexer = this.#services.getIndexer();
    this.#pods.addEventHandler({
      onAdd: (pod) => {
        for (const key of servicesForPod(serviceIndexer, pod)) enqueue(key, "selected Pod added");
      },
      onUpdate: (oldPod, pod) => {
        for (const key of servicesToUpdateOnPodChange(serviceIndexer, oldPod, pod)) {
          enqueue(key, "selected Pod changed");
        }
      },
      onDelete: (obj) => {
        for (const key of servicesForPod(serviceIndexer, objectFromTombstone(obj))) {
          enqueue(key, "selected Pod deleted");
        }
      },
    });
    // Someone else's change to a managed slice brings the Service back, after a second (upstream's minimum).
    const onSlice = (slice: DeepReadonly<EndpointSlice>) => {
      const labels = slice.metadata?.labels;
      const service = labels?.[serviceNameLabel];
      if (!service || labels?.[managedByLabel] !== endpointSliceControllerName) return;
      const key = `${slice.metadata?.namespace ?? ""}/${service}`;
      const written = this.#written.get(key)?.get(slice.metadata?.name ?? "");
      if (written !== undefined && written === (slice.metadata?.resourceVersion ?? "")) return;
      this.#harness.enqueueAfter(key, 1_000, "managed EndpointSlice changed");
    };
    this.#slices.addEventHandler({
      onAdd: onSlice,
      onUpdate: (_, slice) => onSlice(slice),
      onDelete: (obj) => onSlice(objectFromTombstone(obj)),
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its Service, pod, node and EndpointSlice informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof services): ControllerInformer<Service>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof nodes): ControllerInformer<Node>;
      forResource(resource: typeof endpointSlices): ControllerInformer<EndpointSlice>;
    },
    options: Omit<
      EndpointSliceControllerOptions,
      "serviceInformer" | "podInformer" | "nodeInformer" | "endpointSliceInformer"
    >,
  ): EndpointSliceController {
    return new EndpointSliceController({
      ...options,
      serviceInformer: factory.forResource(services),
      podInformer: factory.forResource(pods),
      nodeInformer: factory.forResource(nodes),
      endpointSliceInformer: factory.forResource(endpointSlices),
    });
  }

  /** Waits for the caches, then runs `workers` workers (default 5, `--concurrent-service-endpoint-syncs`) until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Reconciles the EndpointSlices of the Service `namespace/name`. */
  async syncService(key: string): Promise<SyncResult> {
    const { namespace } = splitMetaNamespaceKey(key);
    const service = this.#services.getIndexer().getByKey(key);
    if (service === undefined || !selectsPods(service)) {
      this.#written.delete(key);
      return {};
    }
    const existing = this.#slices
      .getIndexer()
      .byIndex(slicesByServiceIndex, key)
      .filter((slice) => !slice.metadata?.deletionTimestamp);
    if (this.#isStale(key, existing)) throw new StaleEndpointSlicesError(key);

    // One set of slices per address family the Service has (a dual-stack Service has two).
    const addressTypes = addressFamiliesOf(service);
    const plan: SlicePlan = { creates: [], updates: [], deletes: [] };
    let missingNode: string | undefined;
    for (const addressType of addressTypes) {
      const desired = this.#desiredEndpoints(service, addressType);
      missingNode ??= desired.missingNode;
      const part = planSlices({
        service,
        addressType,
        existing: existing.filter((slice) => slice.addressType === addressType),
        groups: desired.groups,
        maxPerSlice: this.#maxPerSlice,
      });
      plan.creates.push(...part.creates);
      plan.updates.push(...part.updates);
      plan.deletes.push(...part.deletes);
    }
    // Slices of an address type the Service no longer has go too.
    for (const slice of existing)
      if (!addressTypes.includes(slice.addressType as AddressFamily))
        plan.deletes.push(slice.metadata?.name ?? "");
    if (service.metadata?.deletionTimestamp) plan.creates.length = 0;

    const client = this.#client.resource(endpointSlices, namespace);
    const written = this.#written.get(key) ?? new Map<string, string>();
    this.#written.set(key, written);
    try {
      for (const slice of plan.creates) {
        const created = await client.create(slice);
        written.set(created.metadata?.name ?? "", created.metadata?.resourceVersion ?? "");
      }
      for (const slice of plan.updates) {
        const updated = await client.update(slice);
        written.set(updated.metadata?.name ?? "", updated.metadata?.resourceVersion ?? "");
      }
      for (const name of plan.deletes) {
        try {
          await client.delete(name);
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        written.set(name, "");
      }
    } catch (error) {
      this.#harness.recorder.event(
        service as Service,
        "Warning",
        "FailedToUpdateEndpointSlices",
        `Error updating Endpoint Slices for Service ${key}: ${errorMessage(error)}`,
      );
      throw error;
    }
    if (missingNode !== undefined) {
      throw new Error(`skipped pods of service ${key}: node ${missingNode} is not in the node cache yet`);
    }
    return {};
  }

  /**
   * Whether the cache has not caught up with this controller's writes for
   * the Service (upstream `endpointSliceTracker.StaleSlices`): a slice it
   * wrote missing or older in the cache, or one it deleted still there.
   */
  #isStale(key: string, cached: readonly DeepReadonly<EndpointSlice>[]): boolean {
    const written = this.#written.get(key);
    if (written === undefined) return false;
    const inCache = new Map(cached.map((s) => [s.metadata?.name ?? "", s.metadata?.resourceVersion ?? ""]));
    for (const [name, rv] of written) {
      const cachedRv = inCache.get(name);
      if (rv === "") {
        if (cachedRv !== undefined) return true;
        written.delete(name);
        continue;
      }
      if (cachedRv === undefined || olderThan(cachedRv, rv)) return true;
    }
    return false;
  }

  #desiredEndpoints(
    service: DeepReadonly<Service>,
    addressType: AddressFamily,
  ): {
    groups: Map<string, PortGroup>;
    missingNode: string | undefined;
  } {
    const publishNotReady = service.spec?.publishNotReadyAddresses === true;
    const groups = new Map<string, PortGroup>();
    let missingNode: string | undefined;
    const nodeIndexer = this.#nodes.getIndexer();
    for (const pod of podsForService(this.#pods.getIndexer(), service)) {
      const ip = podAddress(pod, addressType);
      if (ip === undefined) continue;
      const nodeName = pod.spec?.nodeName;
      const node = nodeName ? nodeIndexer.getByKey(nodeName) : undefined;
      if (nodeName && node === undefined && !publishNotReady) {
        missingNode = nodeName;
        continue;
      }
      const serving = isPodReady(pod);
      const terminating = Boolean(pod.metadata?.deletionTimestamp);
      const endpoint: Endpoint = {
        addresses: [ip],
        conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating },
        ...(nodeName ? { nodeName } : {}),
        targetRef: {
          kind: "Pod",
          namespace: pod.metadata?.namespace ?? "",
          name: pod.metadata?.name ?? "",
          uid: pod.metadata?.uid ?? "",
        },
      };
      const zone = node?.metadata?.labels?.[zoneLabel];
      if (zone) endpoint.zone = zone;
      const hostname = endpointHostname(pod, service);
      if (hostname !== undefined) endpoint.hostname = hostname;
      const ports: EndpointPort[] = [];
      for (const servicePort of service.spec?.ports ?? []) {
        const port = findPort(pod, servicePort);
        if (port === undefined) continue;
        ports.push({
          name: servicePort.name ?? "",
          port,
          protocol: servicePort.protocol ?? "TCP",
          ...(servicePort.appProtocol ? { appProtocol: servicePort.appProtocol } : {}),
        });
      }
      const portsKey = portListKey(ports);
      let group = groups.get(portsKey);
      if (group === undefined) {
        group = { ports, endpoints: new Map() };
        groups.set(portsKey, group);
      }
      group.endpoints.set(endpointKey(endpoint), endpoint);
    }
    return { groups, missingNode };
  }
}

interface PortGroup {
  ports: EndpointPort[];
  endpoints: Map<string, Endpoint>;
}

interface SlicePlan {
  creates: EndpointSlice[];
  updates: EndpointSlice[];
  deletes: string[];
}

/**
 * Decides the writes for one address type (upstream's reconciler, in
 * short): keep every wanted endpoint in the slice that has it, updated if it
 * changed; drop unwanted ones; fill slices with room (those already being
 * updated first) up to the maximum; create slices for the rest. A slice left
 * empty is deleted — or reused in place of a create; with no endpoints at
 * all one placeholder slice remains.
 */
export function planSlices(input: {
  service: DeepReadonly<Service>;
  addressType: "IPv4" | "IPv6";
  existing: readonly DeepReadonly<EndpointSlice>[];
  groups: Map<string, PortGroup>;
  maxPerSlice: number;
}): SlicePlan {
  const { service, addressType, existing, groups, maxPerSlice } = input;
  const labels = sliceLabels(service);
  const plan: SlicePlan = { creates: [], updates: [], deletes: [] };
  const totalWanted = [...groups.values()].reduce((n, g) => n + g.endpoints.size, 0);
  if (totalWanted === 0) return placeholderPlan(service, addressType, existing, labels);

  type Working = { slice: EndpointSlice; changed: boolean; group: string };
  const working: Working[] = [];
  const emptied: EndpointSlice[] = [];
  const placed = new Set<string>();
  for (const current of existing) {
    const slice = structuredClone(current) as EndpointSlice;
    const groupKey = portListKey(slice.ports ?? []);
    const group = groups.get(groupKey);
    let changed = !labelsEqual(slice.metadata?.labels, labels);
    slice.metadata = { ...slice.metadata, labels: { ...labels } };
    const kept: Endpoint[] = [];
    for (const endpoint of slice.endpoints ?? []) {
      const key = endpointKey(endpoint);
      const wanted = group?.endpoints.get(key);
      if (wanted === undefined || placed.has(key)) {
        changed = true;
        continue;
      }
      placed.add(key);
      if (!jsonEqual(wanted, endpoint)) changed = true;
      kept.push(wanted);
    }
    slice.endpoints = kept;
    if (group === undefined || kept.length === 0) {
      emptied.push(slice);
      continue;
    }
    working.push({ slice, changed, group: groupKey });
  }

  for (const [groupKey, group] of groups) {
    const leftovers = [...group.endpoints.entries()].filter(([key]) => !placed.has(key)).map(([, e]) => e);
    if (leftovers.length === 0) continue;
    // Fill slices being updated anyway first, fullest first; then unchanged ones with room.
    const candidates = working
      .filter((w) => w.group === groupKey && (w.slice.endpoints?.length ?? 0) < maxPerSlice)
      .sort(
        (a, b) =>
          Number(b.changed) - Number(a.changed) ||
          (b.slice.endpoints?.length ?? 0) - (a.slice.endpoints?.length ?? 0),
      );
    for (const candidate of candidates) {
      while (leftovers.length > 0 && (candidate.slice.endpoints?.length ?? 0) < maxPerSlice) {
        candidate.slice.endpoints!.push(leftovers.shift()!);
        candidate.changed = true;
      }
    }
    while (leftovers.length > 0) {
      const chunk = leftovers.splice(0, maxPerSlice);
      const reuse = emptied.shift();
      if (reuse !== undefined) {
        reuse.ports = group.ports;
        reuse.endpoints = chunk;
        working.push({ slice: reuse, changed: true, group: groupKey });
      } else {
        plan.creates.push(newSlice(service, addressType, labels, group.ports, chunk));
      }
    }
  }
  for (const w of working) if (w.changed) plan.updates.push(w.slice);
  for (const slice of emptied) plan.deletes.push(slice.metadata?.name ?? "");
  return plan;
}

function placeholderPlan(
  service: DeepReadonly<Service>,
  addressType: "IPv4" | "IPv6",
  existing: readonly DeepReadonly<EndpointSlice>[],
  labels: Record<string, string>,
): SlicePlan {
  const plan: SlicePlan = { creates: [], updates: [], deletes: [] };
  const placeholder = existing.find((s) => (s.endpoints ?? []).length === 0 && (s.ports ?? []).length === 0);
  const keep = placeholder ?? existing[0];
  for (const slice of existing) if (slice !== keep) plan.deletes.push(slice.metadata?.name ?? "");
  if (keep === undefined) {
    plan.creates.push(newSlice(service, addressType, labels, [], []));
  } else if (keep !== placeholder || !labelsEqual(keep.metadata?.labels, labels)) {
    const slice = structuredClone(keep) as EndpointSlice;
    slice.metadata = { ...slice.metadata, labels };
    slice.endpoints = [];
    delete slice.ports;
    plan.updates.push(slice);
  }
  return plan;
}

function newSlice(
  service: DeepReadonly<Service>,
  addressType: "IPv4" | "IPv6",
  labels: Record<string, string>,
  ports: EndpointPort[],
  endpoints: Endpoint[],
): EndpointSlice {
  const name = service.metadata?.name ?? "";
  const slice: EndpointSlice = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      generateName: `${name}-`,
      namespace: service.metadata?.namespace ?? "",
      labels: { ...labels },
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name,
          uid: service.metadata?.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints,
  };
  if (ports.length > 0) slice.ports = ports;
  return slice;
}

/** The Service's labels minus the reserved keys, plus the service-name, managed-by and headless labels. */
function sliceLabels(service: DeepReadonly<Service>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.metadata?.labels ?? {})) {
    if (k === serviceNameLabel || k === managedByLabel || k === headlessServiceLabel) continue;
    labels[k] = v;
  }
  labels[serviceNameLabel] = service.metadata?.name ?? "";
  labels[managedByLabel] = endpointSliceControllerName;
  if (isHeadless(service)) labels[headlessServiceLabel] = "";
  return labels;
}

function portListKey(ports: readonly DeepReadonly<EndpointPort>[]): string {
  return JSON.stringify(
    [...ports]
      .map((p) => [p.name ?? "", p.port ?? 0, p.protocol ?? "TCP", p.appProtocol ?? ""])
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
}

function endpointKey(endpoint: DeepReadonly<Endpoint>): string {
  return `${endpoint.targetRef?.uid ?? ""}/${endpoint.addresses[0] ?? ""}`;
}

/** Numeric resourceVersions compare as numbers; anything else as different. */
function olderThan(cached: string, written: string): boolean {
  if (/^\d+$/.test(cached) && /^\d+$/.test(written)) return BigInt(cached) < BigInt(written);
  return false;
}

/** Upstream's queue limiter: per item 1 s doubling to 1000 s, overall 10/s with a burst of 100. */
function endpointSliceRateLimiter(clock: Clock): RateLimiter<string> {
  return defaultControllerRateLimiter({ clock, baseDelayMs: 1_000 });
}

function maxEndpointsPerSlice(max: number): number {
  if (!Number.isInteger(max) || max < 1 || max > 1000) {
    throw new RangeError(
      `EndpointSliceController: maxEndpointsPerSlice must be an integer in 1–1000, got ${max}`,
    );
  }
  return max;
}
