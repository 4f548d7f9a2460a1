import type { Environment } from "@marcbachmann/cel-js";

// The `url()` library: Go's url.ParseRequestURI and the URL accessors.

/** A URL as the `url()` library holds it: Go's url.URL fields that its accessors read. */
export class KubernetesURL {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly escapedPath: string,
    readonly rawQuery: string,
  ) {}
}

export function registerURLs(env: Environment): void {
  env.registerType("kubernetes.URL", KubernetesURL);
  env.registerFunction("url(string): kubernetes.URL", (text: string) => {
    const parsed = parseRequestURI(text);
    if (typeof parsed === "string")
      throw new Error(`URL parse error during conversion from string: ${parsed}`);
    return parsed;
  });
  env.registerFunction("isURL(string): bool", (text: string) => typeof parseRequestURI(text) !== "string");
  env.registerFunction("kubernetes.URL.getScheme(): string", (url: KubernetesURL) => url.scheme);
  env.registerFunction("kubernetes.URL.getHost(): string", (url: KubernetesURL) => url.host);
  env.registerFunction("kubernetes.URL.getHostname(): string", (url: KubernetesURL) => hostname(url.host));
  env.registerFunction("kubernetes.URL.getPort(): string", (url: KubernetesURL) => port(url.host));
  env.registerFunction("kubernetes.URL.getEscapedPath(): string", (url: KubernetesURL) => url.escapedPath);
  env.registerFunction("kubernetes.URL.getQuery(): map<string, list<string>>", (url: KubernetesURL) => {
    const query = new Map<string, string[]>();
    for (const pair of url.rawQuery.split("&")) {
      if (pair === "") continue;
      const at = pair.indexOf("=");
      const key = decodeQuery(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? "" : decodeQuery(pair.slice(at + 1));
      if (key === undefined || value === undefined) continue; // Go's ParseQuery skips undecodable pairs
      const values = query.get(key) ?? [];
      values.push(value);
      query.set(key, values);
    }
    return query;
  });
  env.registerOperator(
    "kubernetes.URL == kubernetes.URL",
    (a: KubernetesURL, b: KubernetesURL) =>
      a.scheme === b.scheme &&
      a.host === b.host &&
      a.escapedPath === b.escapedPath &&
      a.rawQuery === b.rawQuery,
  );
}

/**
 * Go's url.ParseRequestURI: an absolute URI (`scheme://host/path?query`, `scheme:opaque`) or an absolute
 * path; no fragment is split off. Returns the error text on failure.
 */
export function parseRequestURI(text: string): KubernetesURL | string {
  if ([...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return `parse ${JSON.stringify(text)}: net/url: invalid control character in URL`;
  if (text === "") return 'parse "": empty url';
  const queryAt = text.indexOf("?");
  const rest = queryAt < 0 ? text : text.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? "" : text.slice(queryAt + 1);
  if (rest.startsWith("/")) return new KubernetesURL("", "", escapePath(rest), rawQuery);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (!scheme?.[1]) return `parse ${JSON.stringify(text)}: invalid URI for request`;
  const afterScheme = rest.slice(scheme[0].length);
  if (!afterScheme.startsWith("//")) {
    if (afterScheme.startsWith("/"))
      return new KubernetesURL(scheme[1].toLowerCase(), "", escapePath(afterScheme), rawQuery);
    return new KubernetesURL(scheme[1].toLowerCase(), "", "", rawQuery); // opaque
  }
  const authorityEnd = afterScheme.indexOf("/", 2);
  let authority = authorityEnd < 0 ? afterScheme.slice(2) : afterScheme.slice(2, authorityEnd);
  const path = authorityEnd < 0 ? "" : afterScheme.slice(authorityEnd);
  const userAt = authority.lastIndexOf("@");
  if (userAt >= 0) authority = authority.slice(userAt + 1);
  const hostError = checkHost(authority);
  if (hostError) return `parse ${JSON.stringify(text)}: ${hostError}`;
  return new KubernetesURL(scheme[1].toLowerCase(), authority, escapePath(path), rawQuery);
}

function checkHost(host: string): string | undefined {
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    if (close < 0) return "missing ']' in host";
    const after = host.slice(close + 1);
    if (after !== "" && !/^:\d*$/.test(after)) return `invalid port ${JSON.stringify(after)} after host`;
    return undefined;
  }
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1)))
    return `invalid port ${JSON.stringify(host.slice(colon))} after host`;
  return undefined;
}

function hostname(host: string): string {
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  const colon = host.lastIndexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}

function port(host: string): string {
  const start = host.startsWith("[") ? host.indexOf("]") + 1 : 0;
  const colon = host.indexOf(":", start);
  return colon < 0 ? "" : host.slice(colon + 1);
}

/** Go's EscapedPath: the path as written when it is a valid encoding, else percent-encoded. */
function escapePath(path: string): string {
  if (/^([A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/.test(path)) return path;
  return path
    .split("/")
    .map((segment) => encodeURIComponent(safeDecode(segment)).replace(/[!'()*]/g, (c) => c))
    .join("/")
    .replaceAll("%3A", ":")
    .replaceAll("%40", "@")
    .replaceAll("%24", "$")
    .replaceAll("%26", "&")
    .replaceAll("%2B", "+")
    .replaceAll("%2C", ",")
    .replaceAll("%3B", ";")
    .replaceAll("%3D", "=");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function decodeQuery(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}
