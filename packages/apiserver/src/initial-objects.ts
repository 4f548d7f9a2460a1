import { rfc3339 } from "@reconcile/api";
import { type Clock, type Random, uuidFrom } from "@reconcile/clock";
import { systemPriorityClasses } from "./admission/plugins/index.js";
import {
  type ClusterIPAllocator,
  type NodePortAllocator,
  nodePortsOf,
  serviceIPsOf,
} from "./kinds/service-ips.js";
import { type Storage, StorageError } from "./storage/storage.js";

/** The namespaces every cluster starts with. */
export const initialNamespaces = ["default", "kube-system", "kube-public", "kube-node-lease"] as const;

/** The namespaces and system PriorityClasses every cluster starts with; those already stored stay. */
export async function createInitialObjects(storage: Storage, clock: Clock, random: Random): Promise<void> {
  await createInitialNamespaces(storage, clock, random);
  for (const pc of systemPriorityClasses) {
    const name = pc.metadata!.name!;
    const object = {
      ...pc,
      metadata: { name, uid: uuidFrom(random), creationTimestamp: rfc3339(clock.now()) },
    };
    try {
      await storage.create(`/scheduling.k8s.io/priorityclasses/${name}`, object as never);
    } catch (error) {
      if (!StorageError.is(error, "KeyExists")) throw error;
    }
  }
}

async function createInitialNamespaces(storage: Storage, clock: Clock, random: Random): Promise<void> {
  for (const name of initialNamespaces) {
    try {
      await storage.create(`/core/namespaces/${name}`, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name,
          uid: uuidFrom(random),
          creationTimestamp: rfc3339(clock.now()),
          labels: { "kubernetes.io/metadata.name": name },
        },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" },
      } as never);
    } catch (error) {
      if (!StorageError.is(error, "KeyExists")) throw error;
    }
  }
}

/**
 * Marks every stored Service's cluster IP and node ports taken
 * (kube-apiserver's repair of the allocators from storage), then creates
 * `default/kubernetes` on the range's first IP if it is missing.
 */
export async function recoverServiceAllocations(
  storage: Storage,
  allocators: { ips: ClusterIPAllocator; nodePorts: NodePortAllocator },
  clock: Clock,
  random: Random,
  kubernetesService: boolean,
): Promise<void> {
  const stored = await storage.list("/core/services/");
  const allocator = allocators.ips;
  for (const service of stored.items) {
    for (const ip of serviceIPsOf(service)) allocator.restore(ip);
    for (const port of nodePortsOf(service)) allocators.nodePorts.restore(port);
  }
  if (!kubernetesService) return;
  if (stored.items.some((s) => s.metadata?.namespace === "default" && s.metadata.name === "kubernetes"))
    return;
  const ip = allocator.first;
  allocator.restore(ip);
  try {
    await storage.create("/core/services/default/kubernetes", {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "kubernetes",
        namespace: "default",
        uid: uuidFrom(random),
        creationTimestamp: rfc3339(clock.now()),
        labels: { component: "apiserver", provider: "kubernetes" },
      },
      spec: {
        type: "ClusterIP",
        clusterIP: ip,
        clusterIPs: [ip],
        ipFamilies: [allocator.families[0]!],
        ipFamilyPolicy: "SingleStack",
        internalTrafficPolicy: "Cluster",
        sessionAffinity: "None",
        ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: 6443 }],
      },
      status: { loadBalancer: {} },
    } as never);
  } catch (error) {
    if (!StorageError.is(error, "KeyExists")) throw error;
  }
}
