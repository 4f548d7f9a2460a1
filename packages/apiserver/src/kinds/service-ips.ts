import { type IPFamily, type KubeObject, newInternalError, newInvalid, type Service } from "@reconcile/api";
import type { ServicePort } from "kubernetes-types/core/v1.js";
import type { ClusterIPAllocator } from "../registry/cluster-ip-allocator.js";
import { FieldErrors } from "../registry/field-errors.js";
import { NodePortOperation, NodePortUnavailable } from "../registry/node-port-allocator.js";
import type { WriteHookContext, WriteHooks } from "../registry/resource-definition.js";
import { initIPFamilyFields, normalizeClusterIPs } from "./service-families.js";

export { ClusterIPAllocator, defaultServiceCIDR } from "../registry/cluster-ip-allocator.js";
export { defaultServiceNodePortRange, NodePortAllocator } from "../registry/node-port-allocator.js";

// What a Service takes from the server's pools as upstream's Service REST
// storage does (pkg/registry/core/service/storage/alloc.go): a cluster IP
// unless it is headless or an ExternalName, node ports for NodePort and
// LoadBalancer Services, a health check node port for a LoadBalancer with
// `externalTrafficPolicy: Local`. Taken before the write is stored, given
// back if nothing is stored, released once the Service no longer holds them.

/**
 * The Service's cluster IPs on create (upstream's `allocClusterIPs`), one per
 * family of `ipFamilies` (which `initIPFamilyFields` has settled): ExternalName
 * and headless (`None`) Services take none; a requested IP is checked and
 * taken; a family without one gets a free address. `clusterIP` follows
 * `clusterIPs[0]`. Returns the addresses taken, for release if the write fails.
 */
export function allocateServiceIPs(allocator: ClusterIPAllocator, object: KubeObject): string[] {
  const service = object as Service;
  const spec = service.spec;
  if (spec === undefined || spec.type === "ExternalName") return [];
  if ((spec.clusterIPs?.[0] ?? spec.clusterIP) === "None") {
    spec.clusterIP = "None";
    spec.clusterIPs = ["None"];
    return [];
  }
  const families = spec.ipFamilies ?? allocator.families.slice(0, 1);
  const ips = [...(spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []))];
  while (ips.length < families.length) ips.push("");
  const taken = takeIPs(
    allocator,
    service,
    ips,
    families.map((family, index) => ({ family, index })),
  );
  spec.clusterIPs = ips;
  spec.clusterIP = ips[0]!;
  return taken;
}

/**
 * Takes the address of each wanted family into `ips` at its index (the
 * requested one, or any free one where `ips` holds ""); all or nothing.
 */
function takeIPs(
  allocator: ClusterIPAllocator,
  service: Service,
  ips: string[],
  wanted: readonly { family: string; index: number }[],
): string[] {
  const taken: string[] = [];
  const name = service.metadata?.name ?? "";
  try {
    for (const { family, index } of wanted) {
      const requested = ips[index] || undefined;
      const ip = allocator.allocate(name, requested, family as IPFamily, ips);
      taken.push(ip);
      ips[index] = ip;
    }
  } catch (error) {
    for (const ip of taken) allocator.release(ip);
    throw error;
  }
  return taken;
}

/** The cluster IPs a stored Service holds, if any. */
export function serviceIPsOf(object: KubeObject): string[] {
  const spec = (object as Service).spec;
  if (spec === undefined || spec.type === "ExternalName") return [];
  const ips = spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []);
  return ips.filter((ip) => ip !== "" && ip !== "None");
}

/** Every node port a stored Service holds: its ports' and its health check's. */
export function nodePortsOf(object: KubeObject): number[] {
  const spec = (object as Service).spec;
  const ports = (spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p !== 0);
  if (needsHealthCheckPort(object as Service) && spec?.healthCheckNodePort)
    ports.push(spec.healthCheckNodePort);
  return ports;
}

/** NodePort and LoadBalancer Services expose node ports. */
export function needsNodePorts(service: Service): boolean {
  const type = service.spec?.type;
  return type === "NodePort" || type === "LoadBalancer";
}

/** A LoadBalancer that keeps traffic on the node needs a health check port (upstream's `NeedsHealthCheck`). */
export function needsHealthCheckPort(service: Service): boolean {
  return service.spec?.type === "LoadBalancer" && service.spec.externalTrafficPolicy === "Local";
}

/** Whether new node ports are taken for the ports that name none (`allocateLoadBalancerNodePorts: false` says no). */
function allocatesNodePorts(service: Service): boolean {
  const type = service.spec?.type;
  return (
    type === "NodePort" || (type === "LoadBalancer" && service.spec?.allocateLoadBalancerNodePorts !== false)
  );
}

/**
 * The node ports of a new Service (upstream's `initNodePorts`): ports that
 * share a port number share a node port; a requested one is taken or the
 * create is a 422 on that port's `nodePort`.
 */
function initNodePorts(service: Service, operation: NodePortOperation): void {
  const ports = service.spec?.ports ?? [];
  const byPort = new Map<number, number>();
  ports.forEach((port, index) => {
    if (!port.nodePort && !allocatesNodePorts(service)) return;
    const shared = byPort.get(port.port);
    if (shared === undefined) {
      const requested = ports.find((p) => p.port === port.port && p.nodePort)?.nodePort;
      const nodePort =
        requested === undefined ? nextNodePort(operation) : take(service, operation, index, requested);
      port.nodePort = nodePort;
      byPort.set(port.port, nodePort);
    } else if (port.nodePort !== shared) {
      if (!port.nodePort) port.nodePort = shared;
      else take(service, operation, index, port.nodePort);
    }
  });
}

/** Any free node port; a full range is upstream's 500. */
function nextNodePort(operation: NodePortOperation): number {
  const port = operation.allocateNext();
  if (port === undefined) throw newInternalError("failed to allocate a nodePort: range is full");
  return port;
}

/** Takes a requested node port, or throws upstream's 422 on `spec.ports[index].nodePort`. */
function take(service: Service, operation: NodePortOperation, index: number, port: number): number {
  try {
    operation.allocate(port);
    return port;
  } catch (error) {
    if (!(error instanceof NodePortUnavailable)) throw error;
    const errors = new FieldErrors();
    errors.invalid(`spec.ports[${index}].nodePort`, port, error.message);
    throw newInvalid({ group: "", kind: "Service" }, service.metadata?.name ?? "", errors.list);
  }
}

/** The health check port of a new LoadBalancer with local traffic: the requested one or any. */
function allocateHealthCheckPort(service: Service, operation: NodePortOperation): void {
  const spec = service.spec!;
  const requested = spec.healthCheckNodePort;
  if (!requested) {
    const port = operation.allocateNext();
    if (port === undefined)
      throw newInternalError("failed to allocate a HealthCheck NodePort 0: range is full");
    spec.healthCheckNodePort = port;
    return;
  }
  try {
    operation.allocate(requested);
  } catch (error) {
    if (!(error instanceof NodePortUnavailable)) throw error;
    throw newInternalError(
      `failed to allocate requested HealthCheck NodePort ${requested}: ${error.message}`,
    );
  }
}

/**
 * A Service's cluster IP and node ports, as its REST storage takes them:
 * allocated before the create is stored (and given back if nothing is),
 * moved on update as the type and ports change, released once the Service
 * has left storage.
 */
export const serviceIPHooks: WriteHooks = {
  beginCreate(object, { serviceIPs, serviceNodePorts }) {
    const service = object as Service;
    const ips = serviceIPs === undefined ? [] : allocateServiceIPs(serviceIPs, object);
    const releaseIPs = () => {
      for (const ip of ips) serviceIPs?.release(ip);
    };
    if (serviceNodePorts === undefined || service.spec === undefined)
      return ips.length === 0 ? undefined : releaseIPs;
    const operation = new NodePortOperation(serviceNodePorts);
    try {
      if (needsNodePorts(service)) initNodePorts(service, operation);
      if (needsHealthCheckPort(service)) allocateHealthCheckPort(service, operation);
    } catch (error) {
      operation.revert();
      releaseIPs();
      throw error;
    }
    return () => {
      operation.revert();
      releaseIPs();
    };
  },
  beginUpdate(object, old, context) {
    return beginServiceUpdate(object as Service, old as Service, context);
  },
  afterDelete(object, { serviceIPs, serviceNodePorts }) {
    for (const ip of serviceIPsOf(object)) serviceIPs?.release(ip);
    for (const port of nodePortsOf(object)) serviceNodePorts?.release(port);
  },
};

/**
 * An update's allocations (upstream's `beginUpdate`): the allocated values
 * the client left out kept, `clusterIP` and `clusterIPs` in step, the
 * families settled, then cluster IPs taken or released as the type enters
 * or leaves ExternalName and as the Service gains or drops its second
 * family, node ports as the ports change. Releases wait for the write; what
 * was taken goes back if it fails.
 */
function beginServiceUpdate(
  service: Service,
  old: Service,
  { serviceIPs, serviceNodePorts }: WriteHookContext,
): ((stored: boolean) => void) | undefined {
  if (service.spec === undefined || old.spec === undefined) return undefined;
  patchAllocatedValues(service, old);
  normalizeClusterIPs(service, old);
  initIPFamilyFields(service, old, serviceIPs?.families);
  const { taken, released } =
    serviceIPs === undefined ? { taken: [], released: [] } : updateClusterIPs(service, old, serviceIPs);
  const operation = serviceNodePorts === undefined ? undefined : new NodePortOperation(serviceNodePorts);
  try {
    if (operation !== undefined) updateNodePorts(service, old, operation);
  } catch (error) {
    operation?.revert();
    for (const ip of taken) serviceIPs?.release(ip);
    throw error;
  }
  return (stored) => {
    if (stored) {
      operation?.commit();
      for (const ip of released) serviceIPs?.release(ip);
    } else {
      operation?.revert();
      for (const ip of taken) serviceIPs?.release(ip);
    }
  };
}

/**
 * Cluster IPs on update (upstream's `updateClusterIPs`): leaving ExternalName
 * takes every family's IP, becoming ExternalName gives them all back, a
 * second family added takes its IP (the requested one or any), a second
 * family dropped gives its IP back once the write is stored.
 */
function updateClusterIPs(
  service: Service,
  old: Service,
  allocator: ClusterIPAllocator,
): { taken: string[]; released: string[] } {
  const spec = service.spec!;
  const oldSpec = old.spec!;
  if (oldSpec.type === "ExternalName" && spec.type !== "ExternalName")
    return { taken: allocateServiceIPs(allocator, service), released: [] };
  if (oldSpec.clusterIPs?.[0] === "None") return { taken: [], released: [] };
  if (oldSpec.type !== "ExternalName" && spec.type === "ExternalName")
    return { taken: [], released: serviceIPsOf(old) };
  const oldFamilies = oldSpec.ipFamilies ?? [];
  const families = spec.ipFamilies ?? [];
  if (oldFamilies.length === 1 && families.length === 2) {
    const ips = [...(spec.clusterIPs ?? [])];
    if (ips.length < 2) ips.push("");
    const taken = takeIPs(allocator, service, ips, [{ family: families[1]!, index: 1 }]);
    spec.clusterIPs = ips;
    return { taken, released: [] };
  }
  if (oldFamilies.length === 2 && families.length === 1) {
    const secondary = oldSpec.clusterIPs?.[1];
    return { taken: [], released: secondary === undefined ? [] : [secondary] };
  }
  return { taken: [], released: [] };
}

/** Node ports on update (upstream's `txnUpdateNodePorts`). */
function updateNodePorts(service: Service, old: Service, operation: NodePortOperation): void {
  const oldPorts = (old.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p !== 0);
  if (needsNodePorts(old) && !needsNodePorts(service))
    for (const port of oldPorts) operation.releaseDeferred(port);
  if (needsNodePorts(service)) {
    const takenHere = new Set<number>();
    (service.spec?.ports ?? []).forEach((port, index) => {
      if (!port.nodePort && !allocatesNodePorts(service)) return;
      if (!port.nodePort) {
        port.nodePort = nextNodePort(operation);
      } else if (!oldPorts.includes(port.nodePort) && !takenHere.has(port.nodePort)) {
        take(service, operation, index, port.nodePort);
        takenHere.add(port.nodePort);
      }
    });
    const newPorts = new Set((service.spec?.ports ?? []).map((p) => p.nodePort ?? 0));
    for (const port of oldPorts) if (!newPorts.has(port)) operation.releaseDeferred(port);
  }
  const hadHealthCheck = needsHealthCheckPort(old);
  const hasHealthCheck = needsHealthCheckPort(service);
  if (!hadHealthCheck && hasHealthCheck) allocateHealthCheckPort(service, operation);
  else if (hadHealthCheck && !hasHealthCheck && old.spec?.healthCheckNodePort)
    operation.releaseDeferred(old.spec.healthCheckNodePort);
}

/**
 * Values the server allocated that an update left out are kept (upstream's
 * `patchAllocatedValues`), so a `kubectl replace` of a file without them
 * keeps the Service's IP and ports. Node ports are matched by port name.
 */
export function patchAllocatedValues(service: Service, old: Service): void {
  const spec = service.spec!;
  const oldSpec = old.spec!;
  if (spec.type !== "ExternalName" && oldSpec.type !== "ExternalName") {
    if (!spec.clusterIP && oldSpec.clusterIP) spec.clusterIP = oldSpec.clusterIP;
    if (
      (spec.clusterIPs ?? []).length === 0 &&
      oldSpec.clusterIPs !== undefined &&
      oldSpec.clusterIPs.length > 0
    )
      spec.clusterIPs = oldSpec.clusterIPs;
  }
  if (needsNodePorts(old) && needsNodePorts(service)) {
    const used = (ports: ServicePort[] | undefined) => new Set((ports ?? []).map((p) => p.nodePort ?? 0));
    const newUsed = used(spec.ports);
    const byName = new Map((oldSpec.ports ?? []).map((p) => [p.name ?? "", p.nodePort ?? 0]));
    for (const port of spec.ports ?? []) {
      if (port.nodePort) continue;
      const previous = byName.get(port.name ?? "") ?? 0;
      // A node port both Services already use elsewhere cannot be patched in.
      if (previous !== 0 && !newUsed.has(previous)) port.nodePort = previous;
    }
  }
  if (
    needsHealthCheckPort(old) &&
    needsHealthCheckPort(service) &&
    !spec.healthCheckNodePort &&
    oldSpec.healthCheckNodePort
  )
    spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
}
