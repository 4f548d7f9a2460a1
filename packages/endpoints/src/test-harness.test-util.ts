// Shared by the controller tests: an embedded API server serving Endpoints and EndpointSlices,
// informers on it, and builders for Services, pods and nodes.
import { builtinResources, type Node, nodes, type Pod, pods, services } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { SharedInformerFactory } from "@reconcile/informer";
import type { Service } from "kubernetes-types/core/v1.js";
import { endpointsResources } from "./resources.js";

export const namespace = "default";

export interface Harness {
  server: ApiServer;
  client: Client;
  factory: SharedInformerFactory;
  /** Starts the informers and waits for their caches. */
  start(): Promise<void>;
  /** Resolves once `condition` holds, yielding to the event loop between tries (no timers). */
  until(condition: () => boolean, what?: string): Promise<void>;
  stop(): Promise<void>;
}

/** A server (dual-stack when given two service ranges), a client and an informer factory. */
export function harness(serviceClusterIPRange?: string): Harness {
  const server = new ApiServer({
    resources: [...builtinResources, ...endpointsResources],
    serviceClusterIPRange,
  });
  const client = server.client();
  const factory = new SharedInformerFactory({ client, detectMutations: true });
  const abort = new AbortController();
  return {
    server,
    client,
    factory,
    async start() {
      factory.start(abort.signal);
      await factory.waitForCacheSync(abort.signal, { timeoutMs: 5_000 });
    },
    async until(condition, what = "condition") {
      for (let i = 0; i < 10_000; i++) {
        if (condition()) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error(`${what} did not hold`);
    },
    async stop() {
      abort.abort();
      await factory.shutdown();
      await server.close();
    },
  };
}

export function service(name: string, spec: Service["spec"], labels?: Record<string, string>): Service {
  return {
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { ...spec },
  };
}

export function pod(
  name: string,
  options: {
    labels?: Record<string, string>;
    ip?: string;
    /** Every IP of the pod (a dual-stack pod has one per family); `ip` is the first. */
    ips?: string[];
    ready?: boolean;
    node?: string;
    phase?: string;
    ports?: { name: string; containerPort: number; protocol?: string }[];
    hostname?: string;
    subdomain?: string;
  } = {},
): Pod {
  return {
    metadata: { name, namespace, labels: options.labels ?? { app: "web" } },
    spec: {
      ...(options.node === undefined
        ? { nodeName: "node-1" }
        : options.node
          ? { nodeName: options.node }
          : {}),
      ...(options.hostname ? { hostname: options.hostname } : {}),
      ...(options.subdomain ? { subdomain: options.subdomain } : {}),
      containers: [{ name: "c", image: "nginx", ...(options.ports ? { ports: options.ports } : {}) }],
    },
    status: {
      phase: options.phase ?? "Running",
      ...(options.ip === undefined
        ? {}
        : { podIP: options.ip, podIPs: (options.ips ?? [options.ip]).map((ip) => ({ ip })) }),
      conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }],
    },
  };
}

export async function createPod(client: Client, p: Pod): Promise<Pod> {
  const created = await client.resource(pods, namespace).create(p);
  return client.resource(pods, namespace).updateStatus({ ...created, status: p.status! });
}

export async function createNode(client: Client, name: string, zone?: string): Promise<Node> {
  return client
    .resource(nodes)
    .create({ metadata: { name, ...(zone ? { labels: { "topology.kubernetes.io/zone": zone } } : {}) } });
}

export async function createService(client: Client, s: Service): Promise<Service> {
  return client.resource(services, namespace).create(s);
}
