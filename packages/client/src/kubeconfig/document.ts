import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "yaml";

/** A cluster entry of a kubeconfig (`clusters[].cluster`), in the file's own spelling. */
export interface KubeConfigCluster {
  server: string;
  "certificate-authority"?: string | undefined;
  "certificate-authority-data"?: string | undefined;
  "insecure-skip-tls-verify"?: boolean | undefined;
  "tls-server-name"?: string | undefined;
  "proxy-url"?: string | undefined;
}

/** An exec credential plugin (`users[].user.exec`), as client-go's `ExecConfig`. */
export interface ExecConfig {
  apiVersion: string;
  command: string;
  args?: string[] | undefined;
  env?: { name: string; value: string }[] | undefined;
  installHint?: string | undefined;
  provideClusterInfo?: boolean | undefined;
  /** `Never`, `IfAvailable` or `Always`. Default: `IfAvailable`. */
  interactiveMode?: "Never" | "IfAvailable" | "Always" | undefined;
}

/** A user entry of a kubeconfig (`users[].user`). */
export interface KubeConfigUser {
  token?: string | undefined;
  tokenFile?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  "client-certificate"?: string | undefined;
  "client-certificate-data"?: string | undefined;
  "client-key"?: string | undefined;
  "client-key-data"?: string | undefined;
  exec?: ExecConfig | undefined;
  "auth-provider"?: { name: string; config?: Record<string, string> } | undefined;
  as?: string | undefined;
  "as-groups"?: string[] | undefined;
}

export interface KubeConfigContext {
  cluster: string;
  user?: string | undefined;
  namespace?: string | undefined;
}

export interface Named<T> {
  name: string;
  value: T;
}

/** A kubeconfig after loading: every relative path made absolute, every file merged. */
export interface KubeConfigDocument {
  clusters: Named<KubeConfigCluster>[];
  users: Named<KubeConfigUser>[];
  contexts: Named<KubeConfigContext>[];
  currentContext: string;
}

export const emptyDocument = (): KubeConfigDocument => ({
  clusters: [],
  users: [],
  contexts: [],
  currentContext: "",
});

/** Reads one kubeconfig file; its relative paths are resolved against its directory, as client-go's. */
export function readKubeConfigFile(path: string): KubeConfigDocument {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new TypeError(`cannot read the kubeconfig ${path}: ${(error as Error).message}`);
  }
  return parseKubeConfig(text, dirname(resolve(path)), path);
}

/**
 * Parses a kubeconfig document (YAML or JSON). `baseDir` resolves relative
 * file paths; `source` names the document in errors.
 */
export function parseKubeConfig(
  text: string,
  baseDir: string,
  source = "the kubeconfig",
): KubeConfigDocument {
  let raw: unknown;
  try {
    raw = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new TypeError(`${source} is not valid YAML: ${(error as Error).message}`);
  }
  if (raw === null || raw === undefined) return emptyDocument();
  if (typeof raw !== "object" || Array.isArray(raw)) throw new TypeError(`${source} is not a mapping`);
  const doc = raw as Record<string, unknown>;
  const clusters = namedList(doc.clusters, "cluster", source).map(({ name, value }) => ({
    name,
    value: resolveCluster(value as unknown as KubeConfigCluster, baseDir),
  }));
  const users = namedList(doc.users, "user", source).map(({ name, value }) => ({
    name,
    value: resolveUser(value as unknown as KubeConfigUser, baseDir),
  }));
  const contexts = namedList(doc.contexts, "context", source) as unknown as Named<KubeConfigContext>[];
  const current = doc["current-context"];
  return { clusters, users, contexts, currentContext: typeof current === "string" ? current : "" };
}

/**
 * Merges kubeconfigs as client-go's loading rules merge `KUBECONFIG`'s files:
 * the first file to name a cluster, user or context wins it, and the first
 * non-empty `current-context` is the current one.
 */
export function mergeKubeConfigs(documents: readonly KubeConfigDocument[]): KubeConfigDocument {
  const merged = emptyDocument();
  for (const doc of documents) {
    for (const key of ["clusters", "users", "contexts"] as const) {
      const list = merged[key] as Named<unknown>[];
      for (const entry of doc[key] as Named<unknown>[]) {
        if (!list.some((existing) => existing.name === entry.name)) list.push(entry);
      }
    }
    if (merged.currentContext === "" && doc.currentContext !== "") merged.currentContext = doc.currentContext;
  }
  return merged;
}

function namedList(value: unknown, field: string, source: string): Named<Record<string, unknown>>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError(`${source}: ${field}s must be a list`);
  return value.map((item, index) => {
    const entry = item as { name?: unknown } & Record<string, unknown>;
    if (typeof entry?.name !== "string" || entry.name === "") {
      throw new TypeError(`${source}: ${field}s[${index}] has no name`);
    }
    const body = entry[field] ?? {};
    if (typeof body !== "object" || Array.isArray(body)) {
      throw new TypeError(`${source}: ${field}s[${index}].${field} must be a mapping`);
    }
    return { name: entry.name, value: body as Record<string, unknown> };
  });
}

function resolveCluster(cluster: KubeConfigCluster, baseDir: string): KubeConfigCluster {
  const ca = cluster["certificate-authority"];
  return ca ? { ...cluster, "certificate-authority": resolvePath(ca, baseDir) } : cluster;
}

function resolveUser(user: KubeConfigUser, baseDir: string): KubeConfigUser {
  const out: KubeConfigUser = { ...user };
  for (const key of ["client-certificate", "client-key", "tokenFile"] as const) {
    const path = out[key];
    if (path) out[key] = resolvePath(path, baseDir);
  }
  // A command given as a relative path with a separator is relative to the file, as client-go's; a bare name is looked up on PATH.
  const command = out.exec?.command;
  if (command !== undefined && !isAbsolute(command) && command.includes("/")) {
    out.exec = { ...out.exec!, command: resolve(baseDir, command) };
  }
  return out;
}

function resolvePath(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}
