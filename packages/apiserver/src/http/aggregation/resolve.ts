import { type Random, realRandom } from "@reconcile/clock";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";

/** Where an aggregated server is reached: host and port, as a URL's authority takes them. */
export interface ResolvedEndpoint {
  readonly host: string;
  readonly port: number;
}

/** A Service that cannot be resolved to an address; its message is upstream's. */
export class ResolveError extends Error {}

/**
 * The address of a Service's `port`, as kube-apiserver resolves an
 * aggregated server with `--enable-aggregator-routing` (there is no service
 * network to send a ClusterIP to): a random ready address of an Endpoints
 * subset carrying the port's name, with that subset's port. An ExternalName
 * Service is its external name on `port`, as the cluster resolver makes it.
 * `random` picks among subsets and addresses.
 */
export function resolveServiceEndpoint(
  service: Service | undefined,
  endpoints: Endpoints | undefined,
  name: string,
  port: number,
  random: Random = realRandom,
): ResolvedEndpoint {
  if (service === undefined) throw new ResolveError(`service "${name}" not found`);
  const type = service.spec?.type ?? "ClusterIP";
  if (type === "ExternalName") return { host: service.spec?.externalName ?? "", port };
  if (type !== "ClusterIP" && type !== "NodePort" && type !== "LoadBalancer")
    throw new ResolveError(`unsupported service type ${JSON.stringify(type)}`);
  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === port);
  if (servicePort === undefined)
    throw new ResolveError(`no service port ${port} found for service ${JSON.stringify(name)}`);
  if (endpoints === undefined) throw new ResolveError(`endpoints "${name}" not found`);
  const subsets = endpoints.subsets ?? [];
  const noEndpoints = new ResolveError(`no endpoints available for service ${JSON.stringify(name)}`);
  if (subsets.length === 0) throw noEndpoints;
  const seed = Math.floor(random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const subset = subsets[(seed + i) % subsets.length]!;
    const addresses = subset.addresses ?? [];
    if (addresses.length === 0) continue;
    const target = (subset.ports ?? []).find((p) => (p.name ?? "") === (servicePort.name ?? ""));
    if (target === undefined) continue;
    const address = addresses[Math.floor(random() * addresses.length)]!;
    return { host: address.ip, port: target.port };
  }
  throw noEndpoints;
}

/** `https://host:port`, with an IPv6 host in brackets (Go's `net.JoinHostPort`). */
export function endpointURL({ host, port }: ResolvedEndpoint): string {
  return `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
