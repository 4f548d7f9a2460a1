import { configMaps, type DeepReadonly, isNotFound, secrets } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { ConfigMap, Container, Pod, Secret } from "kubernetes-types/core/v1.js";
import { podFieldValue, resourceFieldValue } from "./downward-api.js";

type ReadonlyPod = DeepReadonly<Pod>;
type ReadonlyContainer = DeepReadonly<Container>;

// A container's environment as the kubelet's makeEnvironmentVariables builds
// it: `envFrom` sources first, then `env` in order, each value with `$(VAR)`
// references to the variables before it expanded; then the command and args
// expanded against the result. A missing source or key is the
// CreateContainerConfigError the kubelet reports (unless `optional`).

export interface EnvironmentSources {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /** The node's allocatable resources: what `resourceFieldRef` reads for an unset limit. */
  allocatable(): { milliCpu: number; memory: number };
  /** The pod's address, once its sandbox has one (asked only when a variable needs it). */
  podIP?: (() => string | undefined) | undefined;
  hostIP?: string | undefined;
}

/** The container could not be configured: the kubelet's CreateContainerConfigError. */
export class ContainerConfigError extends Error {}

export interface ContainerEnvironment {
  envs: { name: string; value: string }[];
  command: string[] | undefined;
  args: string[] | undefined;
}

const envVarName = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** See the file comment. */
export async function containerEnvironment(
  pod: ReadonlyPod,
  container: ReadonlyContainer,
  sources: EnvironmentSources,
): Promise<ContainerEnvironment> {
  const namespace = pod.metadata?.namespace ?? "default";
  const vars = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const data = await envFromData(namespace, from, sources);
    for (const [key, value] of Object.entries(data)) {
      const name = `${from.prefix ?? ""}${key}`;
      if (envVarName.test(name)) vars.set(name, value);
    }
  }
  for (const env of container.env ?? []) {
    let value: string | undefined;
    if (env.valueFrom === undefined) value = expandReferences(env.value ?? "", vars);
    else value = await valueFrom(pod, container, env.valueFrom, sources);
    if (value !== undefined) vars.set(env.name, value);
  }
  const expand = (list: readonly string[] | undefined) => list?.map((text) => expandReferences(text, vars));
  return {
    envs: [...vars].map(([name, value]) => ({ name, value })),
    command: expand(container.command),
    args: expand(container.args),
  };
}

async function envFromData(
  namespace: string,
  from: NonNullable<ReadonlyContainer["envFrom"]>[number],
  sources: EnvironmentSources,
): Promise<Record<string, string>> {
  if (from.configMapRef !== undefined) {
    const name = from.configMapRef.name ?? "";
    const configMap = await sources.configMap(namespace, name);
    if (configMap === undefined) {
      if (from.configMapRef.optional === true) return {};
      throw new ContainerConfigError(`configmap "${name}" not found`);
    }
    return { ...configMap.data };
  }
  if (from.secretRef !== undefined) {
    const name = from.secretRef.name ?? "";
    const secret = await sources.secret(namespace, name);
    if (secret === undefined) {
      if (from.secretRef.optional === true) return {};
      throw new ContainerConfigError(`secret "${name}" not found`);
    }
    return decodeSecret(secret);
  }
  return {};
}

function decodeSecret(secret: Secret): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {}))
    data[key] = Buffer.from(value, "base64").toString("utf8");
  for (const [key, value] of Object.entries(secret.stringData ?? {})) data[key] = value;
  return data;
}

type ValueFrom = NonNullable<NonNullable<ReadonlyContainer["env"]>[number]["valueFrom"]>;

async function valueFrom(
  pod: ReadonlyPod,
  container: ReadonlyContainer,
  source: ValueFrom,
  sources: EnvironmentSources,
): Promise<string | undefined> {
  const namespace = pod.metadata?.namespace ?? "default";
  if (source.fieldRef !== undefined) return fieldValue(pod, source.fieldRef.fieldPath, sources);
  if (source.resourceFieldRef !== undefined)
    return resourceFieldValue(pod, source.resourceFieldRef, sources.allocatable(), container.name);
  if (source.configMapKeyRef !== undefined) {
    const { name = "", key, optional } = source.configMapKeyRef;
    const configMap = await sources.configMap(namespace, name);
    if (configMap === undefined) {
      if (optional === true) return undefined;
      throw new ContainerConfigError(`configmap "${name}" not found`);
    }
    const value = configMap.data?.[key];
    if (value === undefined && optional !== true)
      throw new ContainerConfigError(`couldn't find key ${key} in ConfigMap ${namespace}/${name}`);
    return value;
  }
  if (source.secretKeyRef !== undefined) {
    const { name = "", key, optional } = source.secretKeyRef;
    const secret = await sources.secret(namespace, name);
    if (secret === undefined) {
      if (optional === true) return undefined;
      throw new ContainerConfigError(`secret "${name}" not found`);
    }
    const value = decodeSecret(secret)[key];
    if (value === undefined && optional !== true)
      throw new ContainerConfigError(`couldn't find key ${key} in Secret ${namespace}/${name}`);
    return value;
  }
  return undefined;
}

/** An environment variable's pod field: the runtime's addresses, else the downward API's fields. */
export function fieldValue(pod: ReadonlyPod, path: string, sources: EnvironmentSources): string {
  if (path === "status.podIP" || path === "status.podIPs")
    return sources.podIP?.() ?? pod.status?.podIP ?? "";
  if (path === "status.hostIP" || path === "status.hostIPs")
    return sources.hostIP ?? pod.status?.hostIP ?? "";
  const value = podFieldValue(pod, path);
  if (value === undefined) throw new ContainerConfigError(`unsupported fieldPath: ${path}`);
  return value;
}

/**
 * `$(VAR)` replaced by VAR's value where defined, `$$` by `$`, anything else
 * as written (upstream's third_party/forked/golang/expansion).
 */
export function expandReferences(text: string, vars: ReadonlyMap<string, string>): string {
  if (!text.includes("$")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char !== "$" || i + 1 >= text.length) {
      out += char;
      continue;
    }
    const next = text[i + 1];
    if (next === "$") {
      out += "$";
      i++;
    } else if (next === "(") {
      const end = text.indexOf(")", i + 2);
      if (end === -1) {
        out += text.slice(i);
        break;
      }
      const name = text.slice(i + 2, end);
      out += vars.get(name) ?? `$(${name})`;
      i = end;
    } else out += char;
  }
  return out;
}

/** The hostname a pod's containers see: `spec.hostname`, else its name, cut to 63 characters as the kubelet cuts it. */
export function podHostname(pod: ReadonlyPod): string {
  const name = pod.spec?.hostname || pod.metadata?.name || "";
  return name.length <= 63 ? name : name.slice(0, 63).replace(/[-.]+$/, "");
}

/** The kubelet's `environmentFor`: config maps and secrets read through `client`. */
export function clientEnvironment(
  client: Client,
  allocatable: () => { milliCpu: number; memory: number },
  hostIP: string | undefined,
): (
  pod: ReadonlyPod,
  container: ReadonlyContainer,
  podIP: () => string | undefined,
) => Promise<ContainerEnvironment> {
  const orUndefined = <T>(read: Promise<T>) =>
    read.catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
  const sources = {
    configMap: (namespace: string, name: string) =>
      orUndefined(client.resource(configMaps, namespace).get(name)),
    secret: (namespace: string, name: string) => orUndefined(client.resource(secrets, namespace).get(name)),
    allocatable,
    hostIP,
  };
  return (pod, container, podIP) => containerEnvironment(pod, container, { ...sources, podIP });
}
