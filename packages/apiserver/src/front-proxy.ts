import { configMaps } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  extensionAuthenticationConfigMap,
  extensionAuthenticationData,
  frontProxyClientName,
} from "./http/auth/request-header.js";
import { type FrontProxyCertificates, generateFrontProxyCertificates } from "./http/tls.js";
import { upsert } from "./upsert.js";

/** The front proxy an `ApiServer`'s `frontProxy` option asks for: generated, given, or none. */
export function frontProxyOf(
  option: boolean | FrontProxyCertificates | undefined,
): Promise<FrontProxyCertificates> | undefined {
  if (option === undefined || option === false) return undefined;
  const credentials = option === true ? generateFrontProxyCertificates() : Promise.resolve(option);
  // Not awaited here: a failure shows where a listener or the aggregator needs them.
  credentials.catch(() => {});
  return credentials;
}

/**
 * Writes `kube-system/extension-apiserver-authentication` as kube-apiserver's
 * ClusterAuthenticationTrustController does: the client CA and the front
 * proxy's request-header settings, which aggregated servers read to trust the
 * requests the aggregator passes on.
 */
export async function publishExtensionAuthentication(
  client: Client,
  frontProxy: FrontProxyCertificates,
  clientCA: string | undefined,
): Promise<void> {
  const data = extensionAuthenticationData(clientCA, {
    clientCA: frontProxy.ca.cert,
    allowedNames: [frontProxyClientName],
  });
  const { namespace, name } = extensionAuthenticationConfigMap;
  await upsert(client, configMaps, { metadata: { name, namespace }, data });
}
