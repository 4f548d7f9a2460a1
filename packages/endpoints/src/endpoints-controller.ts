import {
  type DeepReadonly,
  errorMessage,
  isNotFound,
  isPodReady,
  labelsEqual,
  metaNamespaceKeyFunc,
  type Pod,
  pods,
  type RunOptions,
  services,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
  type SyncResult,
} from "@reconcile/controller";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import type {
  EndpointAddress,
  EndpointPort,
  EndpointSubset,
  Endpoints,
  Service,
} from "kubernetes-types/core/v1.js";
import {
  addressFamiliesOf,
  endpointHostname,
  findPort,
  headlessServiceLabel,
  isHeadless,
  podAddress,
  podsForService,
  selectsPods,
  servicesForPod,
  servicesToUpdateOnPodChange,
} from "./endpoint-util.js";
import { endpointsResource } from "./resources.js";

/** The most addresses one Endpoints object holds before it is truncated (upstream `maxCapacity`). */
export const maxEndpointsCapacity = 1000;
/** Annotation set while an Endpoints object is truncated to {@link maxEndpointsCapacity}. */
export const overCapacityAnnotation = "endpoints.kubernetes.io/over-capacity";
/** The annotation of a leader-election record kept in an Endpoints object (left alone). */
const leaderAnnotation = "control-plane.alpha.kubernetes.io/leader";

export interface EndpointsControllerOptions extends ControllerContext {
  /** Where Endpoints are written. Required. */
  client: Client;
  serviceInformer: ControllerInformer<Service>;
  podInformer: ControllerInformer<Pod>;
  endpointsInformer: ControllerInformer<Endpoints>;
  /** Default: a rate-limiting queue named `endpoint`. Events come from `endpoint-controller`. */
  queue?: RateLimitingInterface<string> | undefined;
}

/**
 * kube-controller-manager's Endpoints controller (`endpoints-controller`):
 * for every Service with a selector, an `Endpoints` of the same name listing
 * the selected pods' IPs — Ready pods under `addresses`, the others under
 * `notReadyAddresses` (all ready with `publishNotReadyAddresses`) — with the
 * Service's ports resolved per pod (named target ports by container port
 * name and protocol), repacked into subsets of identical ports. Deletes the
 * Endpoints when the Service goes; writes nothing when nothing changed.
 */
export class EndpointsController {
  readonly queue: RateLimitingInterface<string>;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #services: ControllerInformer<Service>;
  readonly #pods: ControllerInformer<Pod>;
  readonly #endpoints: ControllerInformer<Endpoints>;

  constructor(options: EndpointsControllerOptions) {
    const { client, serviceInformer, podInformer, endpointsInformer } = options;
    this.#harness = defineController({
      name: "endpoint",
      context: options,
      events: { component: "endpoint-controller", client },
      informers: { services: serviceInformer, pods: podInformer, endpoints: endpointsInformer },
      queues: [{ name: "endpoint", queue: options.queue, workers: 5, sync: (key) => this.syncService(key) }],
    });
    [this.#client, this.#services, this.#pods, this.#endpoints] = [
      client,
      serviceInformer,
      podInformer,
      endpointsInformer,
    ];
    this.queue = this.#harness.queue;
    this.#addEventHandlers();
  }

  /** Services, their pods and leftover Endpoints wake the Service's key (upstream's handlers). */
  #addEventHandlers(): void {
    const enqueue = (key: string, reason: string) => this.#harness.enqueue(key, reason);
    const enqueueService = (obj: DeepReadonly<Service>, reason: string) =>
      enqueue(metaNamespaceKeyFunc(obj), reason);
    this.#services.addEventHandler({
      onAdd: (service) => enqueueService(service, "Service added"),
      onUpdate: (_, service) => enqueueService(service, "Service updated"),
      onDelete: (obj) => enqueueService(objectFromTombstone(obj), "Service deleted"),
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
    this.#endpoints.addEventHandler({
      // Every Endpoints found at start is checked once, so those of Services deleted meanwhile go
      // (upstream `checkLeftoverEndpoints`); leader-election records in Endpoints are left alone.
      onAdd: (endpoints, isInInitialList) => {
        if (!isInInitialList || endpoints.metadata?.annotations?.[leaderAnnotation] !== undefined) return;
        enqueue(metaNamespaceKeyFunc(endpoints), "leftover Endpoints found at start");
      },
      // A deleted Endpoints whose Service still selects pods is written again.
      onDelete: (obj) => {
        const key = metaNamespaceKeyFunc(objectFromTombstone(obj));
        const service = serviceIndexer.getByKey(key);
        if (service !== undefined && selectsPods(service)) enqueue(key, "Endpoints deleted");
      },
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its Service, pod and Endpoints informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof services): ControllerInformer<Service>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof endpointsResource): ControllerInformer<Endpoints>;
    },
    options: Omit<EndpointsControllerOptions, "serviceInformer" | "podInformer" | "endpointsInformer">,
  ): EndpointsController {
    return new EndpointsController({
      ...options,
      serviceInformer: factory.forResource(services),
      podInformer: factory.forResource(pods),
      endpointsInformer: factory.forResource(endpointsResource),
    });
  }

  /**
   * Waits for the caches, then runs `workers` workers (default 5,
   * `--concurrent-endpoint-syncs`) until `signal` aborts; settles after a full stop.
   */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Reconciles the Endpoints of the Service `namespace/name` with the pods it selects. */
  async syncService(key: string): Promise<SyncResult> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const service = this.#services.getIndexer().getByKey(key);
    if (service === undefined) {
      try {
        await this.#client.resource(endpointsResource, namespace).delete(name);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      return {};
    }
    if (!selectsPods(service)) return {};

    const subsets = desiredSubsets(service, podsForService(this.#pods.getIndexer(), service));
    const { subsets: capped, truncated } = truncateToCapacity(subsets, maxEndpointsCapacity);
    const current = this.#endpoints.getIndexer().getByKey(key);
    const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
    if (isHeadless(service)) labels[headlessServiceLabel] = "";
    else delete labels[headlessServiceLabel];

    const currentLabels = { ...(current?.metadata?.labels ?? {}) };
    const wantedLabels = { ...labels };
    delete currentLabels[headlessServiceLabel];
    delete wantedLabels[headlessServiceLabel];
    const capacityConsistent =
      (current?.metadata?.annotations?.[overCapacityAnnotation] === "truncated") === truncated;
    if (
      current !== undefined &&
      sameSubsets(current.subsets ?? [], capped) &&
      labelsEqual(currentLabels, wantedLabels) &&
      capacityConsistent &&
      (current.metadata?.labels?.[headlessServiceLabel] !== undefined) === isHeadless(service)
    ) {
      return {};
    }

    const annotations: Record<string, string> = { ...(current?.metadata?.annotations ?? {}) };
    if (truncated) annotations[overCapacityAnnotation] = "truncated";
    else delete annotations[overCapacityAnnotation];
    const endpoints: Endpoints = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: {
        ...(current === undefined ? {} : structuredClone(current.metadata as Endpoints["metadata"])),
        name,
        namespace,
        labels,
        annotations,
      },
      subsets: capped,
    };
    const client = this.#client.resource(endpointsResource, namespace);
    try {
      if (current === undefined) await client.create(endpoints);
      else await client.update(endpoints);
    } catch (error) {
      const verb = current === undefined ? "create" : "update";
      this.#harness.recorder.event(
        service as Service,
        "Warning",
        current === undefined ? "FailedToCreateEndpoint" : "FailedToUpdateEndpoint",
        current === undefined
          ? `Failed to create endpoint for service ${key}: ${errorMessage(error)}`
          : `Failed to update endpoint ${key}: ${errorMessage(error)}`,
      );
      this.#harness.logger.warn(
        { namespace, name, verb, err: errorMessage(error) },
        "writing Endpoints failed",
      );
      throw error;
    }
    return {};
  }
}

/**
 * The subsets the pods give: one address per (pod, port set), ready or not,
 * repacked so addresses with identical port lists share one subset (upstream
 * `RepackSubsets`), sorted so equal inputs give equal outputs.
 */
export function desiredSubsets(
  service: DeepReadonly<Service>,
  selected: readonly DeepReadonly<Pod>[],
): EndpointSubset[] {
  const publishNotReady = service.spec?.publishNotReadyAddresses === true;
  const servicePorts = service.spec?.ports ?? [];
  const groups = new Map<
    string,
    { ports: EndpointPort[]; ready: Map<string, EndpointAddress>; notReady: Map<string, EndpointAddress> }
  >();
  // Endpoints hold the Service's primary family only.
  const family = addressFamiliesOf(service)[0]!;
  for (const pod of selected) {
    const ip = podAddress(pod, family);
    if (ip === undefined) continue;
    if (pod.metadata?.deletionTimestamp && !publishNotReady) continue;
    const address: EndpointAddress = {
      ip,
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: {
        kind: "Pod",
        namespace: pod.metadata?.namespace ?? "",
        name: pod.metadata?.name ?? "",
        uid: pod.metadata?.uid ?? "",
      },
    };
    const hostname = endpointHostname(pod, service);
    if (hostname !== undefined) address.hostname = hostname;
    const ready = publishNotReady || isPodReady(pod);
    const ports: EndpointPort[] = [];
    if (servicePorts.length === 0) {
      // A headless Service without ports still lists its pods, in a subset without ports.
      if (!isHeadless(service)) continue;
    }
    for (const servicePort of servicePorts) {
      const port = findPort(pod, servicePort);
      if (port === undefined) continue;
      ports.push({
        ...(servicePort.name ? { name: servicePort.name } : {}),
        port,
        protocol: servicePort.protocol ?? "TCP",
        ...(servicePort.appProtocol ? { appProtocol: servicePort.appProtocol } : {}),
      });
    }
    if (servicePorts.length > 0 && ports.length === 0) continue;
    ports.sort(comparePorts);
    const groupKey = JSON.stringify(ports);
    let group = groups.get(groupKey);
    if (group === undefined) {
      group = { ports, ready: new Map(), notReady: new Map() };
      groups.set(groupKey, group);
    }
    if (ready) {
      group.ready.set(ip, address);
      group.notReady.delete(ip);
    } else if (!group.ready.has(ip)) {
      group.notReady.set(ip, address);
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, group]) => {
      const subset: EndpointSubset = {};
      const addresses = [...group.ready.values()].sort(compareAddresses);
      const notReady = [...group.notReady.values()].sort(compareAddresses);
      if (addresses.length > 0) subset.addresses = addresses;
      if (notReady.length > 0) subset.notReadyAddresses = notReady;
      if (group.ports.length > 0) subset.ports = group.ports;
      return subset;
    });
}

/**
 * Caps the addresses at `capacity` (upstream `truncateEndpoints`): ready
 * addresses are kept first; each subset keeps a share proportional to its
 * size, rounded up, until the budget is spent.
 */
export function truncateToCapacity(
  subsets: EndpointSubset[],
  capacity: number,
): { subsets: EndpointSubset[]; truncated: boolean } {
  const ready = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const notReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
  if (ready + notReady <= capacity) return { subsets, truncated: false };
  const readyBudget = Math.min(ready, capacity);
  let notReadyBudget = capacity - readyBudget;
  let readyLeft = readyBudget;
  const result = subsets.map((subset) => {
    const out: EndpointSubset = { ...subset };
    const r = subset.addresses ?? [];
    const keepReady = Math.min(r.length, readyLeft, Math.ceil((r.length / Math.max(ready, 1)) * readyBudget));
    readyLeft -= keepReady;
    const nr = subset.notReadyAddresses ?? [];
    const keepNotReady = Math.min(
      nr.length,
      notReadyBudget,
      Math.ceil((nr.length / Math.max(notReady, 1)) * (capacity - readyBudget)),
    );
    notReadyBudget -= keepNotReady;
    if (r.length > 0) out.addresses = r.slice(0, keepReady);
    if (nr.length > 0) out.notReadyAddresses = nr.slice(0, keepNotReady);
    if (out.addresses?.length === 0) delete out.addresses;
    if (out.notReadyAddresses?.length === 0) delete out.notReadyAddresses;
    return out;
  });
  return { subsets: result, truncated: true };
}

/** Subsets equal, ignoring the targetRef's resourceVersion (upstream compares that way). */
function sameSubsets(
  current: readonly DeepReadonly<EndpointSubset>[],
  wanted: readonly EndpointSubset[],
): boolean {
  const strip = (subsets: readonly DeepReadonly<EndpointSubset>[]) =>
    JSON.stringify(subsets, (key, value) => (key === "resourceVersion" ? undefined : value));
  return strip(current) === strip(wanted);
}

function comparePorts(a: EndpointPort, b: EndpointPort): number {
  return (
    (a.name ?? "").localeCompare(b.name ?? "") ||
    a.port - b.port ||
    (a.protocol ?? "").localeCompare(b.protocol ?? "")
  );
}

function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  return a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : (a.targetRef?.uid ?? "").localeCompare(b.targetRef?.uid ?? "");
}
