import {
  type DeepReadonly,
  isPodReady,
  jsonEqual,
  labelsEqual,
  type Pod,
  selectorFromSet,
} from "@reconcile/api";
import type { ControllerIndexer } from "@reconcile/controller";
import type { Service, ServicePort } from "kubernetes-types/core/v1.js";

/** Label every managed EndpointSlice carries: the Service it belongs to. */
export const serviceNameLabel = "kubernetes.io/service-name";
/** Label naming the controller that manages an EndpointSlice. */
export const managedByLabel = "endpointslice.kubernetes.io/managed-by";
/** The value of {@link managedByLabel} for this package's EndpointSlice controller. */
export const endpointSliceControllerName = "endpointslice-controller.k8s.io";
/** Label on Endpoints and EndpointSlices of headless Services (`clusterIP: None`). */
export const headlessServiceLabel = "service.kubernetes.io/headless";

/** Whether the Service gets endpoints from a controller: it has a selector (even `{}`) and is not ExternalName. */
export function selectsPods(service: DeepReadonly<Service>): boolean {
  return service.spec?.selector != null && service.spec.type !== "ExternalName";
}

/** Whether the Service is headless: `clusterIP` is `None` (or empty, as upstream counts it for the label). */
export function isHeadless(service: DeepReadonly<Service>): boolean {
  const ip = service.spec?.clusterIP;
  return ip === "None" || ip === undefined || ip === "";
}

/**
 * The pod's IP of `family`, or undefined when the pod is not such an
 * endpoint: terminal (`Succeeded`/`Failed`), no IP yet, or none of that family.
 */
export function podAddress(pod: DeepReadonly<Pod>, family: AddressFamily): string | undefined {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return undefined;
  const ips = pod.status?.podIPs?.map((p) => p.ip ?? "") ?? (pod.status?.podIP ? [pod.status.podIP] : []);
  const wantV6 = family === "IPv6";
  return ips.find((ip) => ip !== "" && ip.includes(":") === wantV6);
}

export type AddressFamily = "IPv4" | "IPv6";

/**
 * The address families a Service's endpoints are published for (upstream's
 * `getAddressTypesForService`): its `ipFamilies`, or IPv4 when it has none.
 */
export function addressFamiliesOf(service: DeepReadonly<Service>): AddressFamily[] {
  const families = (service.spec?.ipFamilies ?? []).filter(
    (family): family is AddressFamily => family === "IPv4" || family === "IPv6",
  );
  return families.length === 0 ? ["IPv4"] : [...new Set(families)];
}

/**
 * The pod port a Service port targets (upstream `podutil.FindPort`): a
 * number as is (absent or 0 means the Service port itself, as defaulting
 * would set it); a name, the first container port (regular, then
 * restartable init containers) with that name and the Service port's
 * protocol; undefined when no container port matches.
 */
export function findPort(pod: DeepReadonly<Pod>, servicePort: DeepReadonly<ServicePort>): number | undefined {
  const target = servicePort.targetPort;
  if (typeof target === "number") return target === 0 ? servicePort.port : target;
  if (target === undefined || target === "") return servicePort.port;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = servicePort.protocol ?? "TCP";
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always"),
  ];
  for (const container of containers) {
    for (const port of container.ports ?? []) {
      if (port.name === target && (port.protocol ?? "TCP") === protocol) return port.containerPort;
    }
  }
  return undefined;
}

/** The pod's hostname as an endpoint: `spec.hostname` when `spec.subdomain` names the Service. */
export function endpointHostname(pod: DeepReadonly<Pod>, service: DeepReadonly<Service>): string | undefined {
  const hostname = pod.spec?.hostname;
  if (!hostname || pod.spec?.subdomain !== service.metadata?.name) return undefined;
  if (pod.metadata?.namespace !== service.metadata?.namespace) return undefined;
  return hostname;
}

/** The pods of the Service's namespace its selector matches (an empty selector matches all). */
export function podsForService(
  podIndexer: ControllerIndexer<Pod>,
  service: DeepReadonly<Service>,
): DeepReadonly<Pod>[] {
  const selector = selectorFromSet(service.spec?.selector as Record<string, string> | undefined);
  return podIndexer
    .byIndex("namespace", service.metadata?.namespace ?? "")
    .filter((pod) => selector.matches(pod.metadata?.labels as Record<string, string> | undefined));
}

/** Keys (`namespace/name`) of the Services whose selector matches the pod. */
export function servicesForPod(
  serviceIndexer: ControllerIndexer<Service>,
  pod: DeepReadonly<Pod>,
): Set<string> {
  const keys = new Set<string>();
  const namespace = pod.metadata?.namespace ?? "";
  for (const service of serviceIndexer.byIndex("namespace", namespace)) {
    if (!selectsPods(service)) continue;
    const selector = selectorFromSet(service.spec?.selector as Record<string, string> | undefined);
    if (selector.matches(pod.metadata?.labels as Record<string, string> | undefined)) {
      keys.add(`${namespace}/${service.metadata?.name}`);
    }
  }
  return keys;
}

/**
 * The Services to resync after a pod update (upstream `GetServicesToUpdateOnPodChange`):
 * none if nothing an endpoint shows changed; those matching the new pod,
 * plus those matching the old one when the labels changed.
 */
export function servicesToUpdateOnPodChange(
  serviceIndexer: ControllerIndexer<Service>,
  oldPod: DeepReadonly<Pod>,
  newPod: DeepReadonly<Pod>,
): Set<string> {
  if (oldPod.metadata?.resourceVersion === newPod.metadata?.resourceVersion) return new Set();
  const labelsChanged = !labelsEqual(oldPod.metadata?.labels, newPod.metadata?.labels);
  if (!labelsChanged && !endpointChanged(oldPod, newPod)) return new Set();
  const keys = servicesForPod(serviceIndexer, newPod);
  if (labelsChanged) for (const key of servicesForPod(serviceIndexer, oldPod)) keys.add(key);
  return keys;
}

function endpointChanged(a: DeepReadonly<Pod>, b: DeepReadonly<Pod>): boolean {
  return (
    a.status?.podIP !== b.status?.podIP ||
    !jsonEqual(a.status?.podIPs, b.status?.podIPs) ||
    isPodReady(a) !== isPodReady(b) ||
    Boolean(a.metadata?.deletionTimestamp) !== Boolean(b.metadata?.deletionTimestamp) ||
    a.spec?.hostname !== b.spec?.hostname ||
    a.spec?.subdomain !== b.spec?.subdomain ||
    a.spec?.nodeName !== b.spec?.nodeName ||
    a.status?.phase !== b.status?.phase
  );
}
