import { isIPv6 } from "node:net";
import { endpointSlices, endpoints, services } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { upsert, writeWith } from "./upsert.js";

// kube-apiserver's endpoint reconciler for `default/kubernetes`: the Service's
// Endpoints name the API server's address and port (skipped by the mirroring
// controller), an EndpointSlice of the same name carries them too, and the
// Service's target port is the port served.

/** The address a listener is reached at: a wildcard or `localhost` as loopback. */
function advertisedAddress(host: string): string {
  if (host === "0.0.0.0" || host === "localhost" || host === "") return "127.0.0.1";
  if (host === "::") return "::1";
  return host;
}

/**
 * Points `default/kubernetes` at the API server listening on `host:port`, as
 * kube-apiserver's reconciler does for its advertise address and secure
 * port: its Endpoints and EndpointSlice, and the Service's target port.
 */
export async function publishKubernetesEndpoints(client: Client, host: string, port: number): Promise<void> {
  const ip = advertisedAddress(host);
  const ports = [{ name: "https", port, protocol: "TCP" }];
  await upsert(client, endpoints, {
    metadata: {
      name: "kubernetes",
      namespace: "default",
      labels: { "endpointslice.kubernetes.io/skip-mirror": "true" },
    },
    subsets: [{ addresses: [{ ip }], ports }],
  } as Endpoints);
  await upsert(client, endpointSlices, {
    metadata: {
      name: "kubernetes",
      namespace: "default",
      labels: { "kubernetes.io/service-name": "kubernetes" },
    },
    addressType: isIPv6(ip) ? "IPv6" : "IPv4",
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports,
  } as EndpointSlice);
  // The Service's first port targets the port served; a missing Service is left missing.
  await writeWith(client, services, "default", "kubernetes", (service) => {
    const [first, ...rest] = service?.spec?.ports ?? [];
    if (service === undefined || first === undefined || first.targetPort === port) return undefined;
    return { ...service, spec: { ...service.spec, ports: [{ ...first, targetPort: port }, ...rest] } };
  });
}
