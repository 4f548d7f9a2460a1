import { type KubeObject, newInternalError, newInvalid, type Service } from "@reconcile/api";
import type { ServicePort } from "kubernetes-types/core/v1.js";
import type { ClusterIPAllocator } from "../registry/cluster-ip-allocator.js";
import { FieldErrors } from "../registry/field-errors.js";
import { NodePortOperation, NodePortUnavailable } from "../registry/node-port-allocator.js";
import type { WriteHookContext, WriteHooks } from "../registry/resource-definition.js";

export { ClusterIPAllocator, defaultServiceCIDR } from "../registry/cluster-ip-allocator.js";
export { defaultServiceNodePortRange, NodePortAllocator } from "../registry/node-port-allocator.js";

// What a Service takes from the server's pools as upstream's Service REST
// storage does (pkg/registry/core/service/storage/alloc.go): a cluster IP
// unless it is headless or an ExternalName, node ports for NodePort and
// LoadBalancer Services, a health check node port for a LoadBalancer with
// `externalTrafficPolicy: Local`. Taken before the write is stored, given
// back if nothing is stored, released once the Service no longer holds them.

/**
 * The Service's cluster IP on create (upstream's `RESTAllocStuff.allocateCreate`):
 * ExternalName and headless (`None`) Services take none; a requested IP is
 * checked and taken; otherwise one is allocated. `clusterIPs` follows
 * `clusterIP`. Returns the address taken, for release if the write fails.
 */
export function allocateServiceIP(allocator: ClusterIPAllocator, object: KubeObject): string | undefined {
  const service = object as Service;
  const spec = service.spec;
  if (spec === undefined || spec.type === "ExternalName") return undefined;
  const requested = spec.clusterIP || spec.clusterIPs?.[0] || undefined;
  if (requested === "None") {
    spec.clusterIP = "None";
    spec.clusterIPs = ["None"];
    return undefined;
  }
  const ip = allocator.allocate(service.metadata?.name ?? "", requested);
  spec.clusterIP = ip;
  spec.clusterIPs = [ip];
  return ip;
}

/** The cluster IP a stored Service holds, if any. */
export function serviceIPOf(object: KubeObject): string | undefined {
  const service = object as Service;
  if (service.spec?.type === "ExternalName") return undefined;
  const ip = service.spec?.clusterIP;
  return ip && ip !== "None" ? ip : undefined;
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
    const ip = serviceIPs === undefined ? undefined : allocateServiceIP(serviceIPs, object);
    const releaseIP = () => (ip === undefined ? undefined : serviceIPs?.release(ip));
    if (serviceNodePorts === undefined || service.spec === undefined)
      return ip === undefined ? undefined : releaseIP;
    const operation = new NodePortOperation(serviceNodePorts);
    try {
      if (needsNodePorts(service)) initNodePorts(service, operation);
      if (needsHealthCheckPort(service)) allocateHealthCheckPort(service, operation);
    } catch (error) {
      operation.revert();
      releaseIP();
      throw error;
    }
    return () => {
      operation.revert();
      releaseIP();
    };
  },
  beginUpdate(object, old, context) {
    return beginServiceUpdate(object as Service, old as Service, context);
  },
  afterDelete(object, { serviceIPs, serviceNodePorts }) {
    const ip = serviceIPOf(object);
    if (ip !== undefined) serviceIPs?.release(ip);
    for (const port of nodePortsOf(object)) serviceNodePorts?.release(port);
  },
};

/**
 * An update's allocations (upstream's `beginUpdate`): values the client left
 * out are kept, a cluster IP is taken or released as the type enters or
 * leaves ExternalName, and node ports follow the ports. Releases wait for the
 * write; what was taken goes back if it fails.
 */
function beginServiceUpdate(
  service: Service,
  old: Service,
  { serviceIPs, serviceNodePorts }: WriteHookContext,
): ((stored: boolean) => void) | undefined {
  if (service.spec === undefined || old.spec === undefined) return undefined;
  patchAllocatedValues(service, old);
  let takenIP: string | undefined;
  let releasedIP: string | undefined;
  if (serviceIPs !== undefined) {
    if (old.spec.type === "ExternalName" && service.spec.type !== "ExternalName") {
      // Leaving ExternalName: the IP family fields a create would have set (upstream's `initIPFamilyFields`).
      service.spec.ipFamilyPolicy ??= "SingleStack";
      service.spec.ipFamilies ??= ["IPv4"];
      takenIP = allocateServiceIP(serviceIPs, service);
    } else if (old.spec.type !== "ExternalName" && service.spec.type === "ExternalName")
      releasedIP = serviceIPOf(old);
  }
  const operation = serviceNodePorts === undefined ? undefined : new NodePortOperation(serviceNodePorts);
  try {
    if (operation !== undefined) updateNodePorts(service, old, operation);
  } catch (error) {
    operation?.revert();
    if (takenIP !== undefined) serviceIPs?.release(takenIP);
    throw error;
  }
  return (stored) => {
    if (stored) {
      operation?.commit();
      if (releasedIP !== undefined) serviceIPs?.release(releasedIP);
    } else {
      operation?.revert();
      if (takenIP !== undefined) serviceIPs?.release(takenIP);
    }
  };
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
