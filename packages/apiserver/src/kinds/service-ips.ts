import type { KubeObject, Service } from "@reconcile/api";
import type { ClusterIPAllocator } from "../registry/cluster-ip-allocator.js";
import type { WriteHooks } from "../registry/resource-definition.js";

export { ClusterIPAllocator, defaultServiceCIDR } from "../registry/cluster-ip-allocator.js";

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
  const ip = (object as Service).spec?.clusterIP;
  return ip && ip !== "None" ? ip : undefined;
}

/**
 * A Service's cluster IP, as its REST storage takes it: allocated before the
 * create is stored (and given back if nothing is), released once the Service
 * has left storage.
 */
export const serviceIPHooks: WriteHooks = {
  beginCreate(object, { serviceIPs }) {
    if (serviceIPs === undefined) return undefined;
    const ip = allocateServiceIP(serviceIPs, object);
    return ip === undefined ? undefined : () => serviceIPs.release(ip);
  },
  afterDelete(object, { serviceIPs }) {
    const ip = serviceIPOf(object);
    if (ip !== undefined) serviceIPs?.release(ip);
  },
};
