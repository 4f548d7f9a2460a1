import { endpointSlices, type ResourceDescriptor, services } from "@reconcile/api";
import type { WebhookClientConfig } from "kubernetes-types/admissionregistration/v1.js";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { AdmissionContext } from "../plugin.js";
import { WebhookCallError, type WebhookEndpoint } from "./transport.js";

/** Endpoints of `clientConfig.url` configurations, made once per configuration object the read cache hands out. */
const urlEndpoints = new WeakMap<WebhookClientConfig, WebhookEndpoint>();

/**
 * Where a webhook's clientConfig points: its URL (at once, made once per
 * configuration object), or its Service resolved.
 */
export function endpointOf(
  clientConfig: WebhookClientConfig | undefined,
  context: AdmissionContext,
): WebhookEndpoint | Promise<WebhookEndpoint> {
  const config = clientConfig ?? {};
  if (config.url === undefined) return serviceEndpointOf(config, context);
  let endpoint = urlEndpoints.get(config);
  if (endpoint === undefined) {
    endpoint = { url: config.url, caBundle: caBundleOf(config) };
    urlEndpoints.set(config, endpoint);
  }
  return endpoint;
}

function caBundleOf(config: WebhookClientConfig): string | undefined {
  return config.caBundle ? Buffer.from(config.caBundle, "base64").toString("utf8") : undefined;
}

async function serviceEndpointOf(
  config: WebhookClientConfig,
  context: AdmissionContext,
): Promise<WebhookEndpoint> {
  const caBundle = caBundleOf(config);
  const ref = config.service!;
  const port = ref.port ?? 443;
  const serverName = `${ref.name}.${ref.namespace}.svc`;
  const url = `https://${serverName}:${port}${ref.path ?? ""}`;
  const service = await context.get<Service>(
    services as ResourceDescriptor<Service>,
    ref.namespace,
    ref.name,
  );
  if (service === undefined)
    throw new WebhookCallError(`failed to call webhook: service "${ref.name}" not found`);
  if (service.spec?.type === "ExternalName")
    return { url, caBundle, serverName, address: { host: service.spec.externalName ?? "", port } };
  return { url, caBundle, serverName, address: await serviceEndpoint(service, port, context) };
}

/** A ready endpoint of a Service's port, from its EndpointSlices (upstream resolves to the ClusterIP). */
async function serviceEndpoint(
  service: Service,
  port: number,
  context: AdmissionContext,
): Promise<{ host: string; port: number } | undefined> {
  const name = service.metadata?.name ?? "";
  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === port);
  if (servicePort === undefined)
    throw new WebhookCallError(`failed to call webhook: service "${name}" has no port ${port}`);
  const slices = (
    await context.list(endpointSlices as ResourceDescriptor<EndpointSlice>, service.metadata?.namespace ?? "")
  ).filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === name);
  for (const slice of slices) {
    const target = (slice.ports ?? []).find((p) => (p.name ?? "") === (servicePort.name ?? ""));
    if (target?.port === undefined) continue;
    const endpoint = slice.endpoints.find((e) => e.conditions?.ready !== false && e.addresses.length > 0);
    if (endpoint !== undefined) return { host: endpoint.addresses[0]!, port: target.port };
  }
  throw new WebhookCallError(
    `failed to call webhook: service "${name}" has no ready endpoint for port ${port}`,
  );
}
