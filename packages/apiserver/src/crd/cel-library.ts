import { type Environment, Optional } from "@marcbachmann/cel-js";
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  Quantity,
} from "@reconcile/api";
import { chargeCost } from "./cel-cost.js";
import { registerNetworkLibraries } from "./cel-net.js";

/**
 * Registers Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) that CRD rules use: lists
 * (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), URLs (`url`,
 * `isURL` and the accessors), quantities (`quantity`, `isQuantity` and the methods) and named formats
 * (`format.named(name)`, `format.dns1123Label()`, … each with `validate(string)`); IP and CIDR in cel-net.ts.
 * Each function charges
 * the runtime cost of the elements it traverses, as cel-go's library cost estimators do.
 */
export function registerKubernetesLibraries(environment: Environment): Environment {
  registerLists(environment);
  registerRegex(environment);
  registerURLs(environment);
  registerQuantities(environment);
  registerFormats(environment);
  registerNetworkLibraries(environment);
  return environment;
}

/** A URL as the `url()` library holds it: Go's url.URL fields that its accessors read. */
export class KubernetesURL {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly escapedPath: string,
    readonly rawQuery: string,
  ) {}
}

/** A resource quantity as CEL's `quantity()` returns it. */
export class KubernetesQuantity {
  constructor(readonly quantity: Quantity) {}
}

type Comparable = bigint | number | string | boolean;

function registerLists(env: Environment): void {
  const comparable = [
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
  ];
  for (const type of comparable) {
    env.registerFunction(`list<${type}>.isSorted(): bool`, (list: unknown[]) => {
      chargeCost(list.length);
      for (let i = 1; i < list.length; i++) if (compare(list[i - 1], list[i]) > 0) return false;
      return true;
    });
    env.registerFunction(`list<${type}>.min(): ${type}`, (list: unknown[]) => extreme(list, "min", -1));
    env.registerFunction(`list<${type}>.max(): ${type}`, (list: unknown[]) => extreme(list, "max", 1));
  }
  env.registerFunction("list<int>.sum(): int", (list: bigint[]) => {
    chargeCost(list.length);
    let sum = 0n;
    for (const item of list) sum += item;
    if (sum > 9223372036854775807n || sum < -9223372036854775808n) throw new Error("integer overflow");
    return sum;
  });
  env.registerFunction("list<double>.sum(): double", (list: number[]) => {
    chargeCost(list.length);
    let sum = 0;
    for (const item of list) sum += item;
    return sum;
  });
  env.registerFunction("list<A>.indexOf(A): int", (list: unknown[], item: unknown) => {
    chargeCost(list.length);
    return BigInt(list.findIndex((element) => celEquals(element, item)));
  });
  env.registerFunction("list<A>.lastIndexOf(A): int", (list: unknown[], item: unknown) => {
    chargeCost(list.length);
    return BigInt(list.findLastIndex((element) => celEquals(element, item)));
  });
}

function extreme(list: unknown[], name: string, direction: 1 | -1): unknown {
  chargeCost(list.length);
  if (list.length === 0) throw new Error(`${name} called on empty list`);
  let best = list[0];
  for (const item of list.slice(1)) if (compare(item, best) * direction > 0) best = item;
  return best;
}

function registerRegex(env: Environment): void {
  env.registerFunction("string.find(string): string", (text: string, pattern: string) => {
    chargeCost(text.length / 4);
    return compileRegex(pattern).exec(text)?.[0] ?? "";
  });
  const findAll = (text: string, pattern: string, limit = -1n): string[] => {
    chargeCost(text.length / 4);
    if (limit === 0n) return [];
    const out: string[] = [];
    for (const match of text.matchAll(compileRegex(pattern, "g"))) {
      out.push(match[0]);
      if (limit > 0n && BigInt(out.length) >= limit) break;
    }
    return out;
  };
  env.registerFunction("string.findAll(string): list<string>", (text: string, pattern: string) =>
    findAll(text, pattern),
  );
  env.registerFunction(
    "string.findAll(string, int): list<string>",
    (text: string, pattern: string, limit: bigint) => findAll(text, pattern, limit),
  );
}

const regexCache = new Map<string, RegExp>();

function compileRegex(pattern: string, flags = ""): RegExp {
  const key = `${flags}/${pattern}`;
  let regex = regexCache.get(key);
  if (!regex) {
    try {
      regex = new RegExp(pattern, `u${flags}`);
    } catch (error) {
      throw new Error(`error parsing regexp: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(key, regex);
  }
  regex.lastIndex = 0;
  return regex;
}

function registerURLs(env: Environment): void {
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

function registerQuantities(env: Environment): void {
  env.registerType("kubernetes.Quantity", KubernetesQuantity);
  env.registerFunction("quantity(string): kubernetes.Quantity", (text: string) => {
    try {
      return new KubernetesQuantity(Quantity.parse(text));
    } catch {
      throw new Error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      );
    }
  });
  env.registerFunction("isQuantity(string): bool", (text: string) => {
    try {
      Quantity.parse(text);
      return true;
    } catch {
      return false;
    }
  });
  type Q = KubernetesQuantity;
  env.registerFunction("kubernetes.Quantity.sign(): int", (q: Q) => BigInt(q.quantity.sign()));
  env.registerFunction(
    "kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool",
    (a: Q, b: Q) => a.quantity.cmp(b.quantity) > 0,
  );
  env.registerFunction(
    "kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool",
    (a: Q, b: Q) => a.quantity.cmp(b.quantity) < 0,
  );
  env.registerFunction("kubernetes.Quantity.compareTo(kubernetes.Quantity): int", (a: Q, b: Q) =>
    BigInt(a.quantity.cmp(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity",
    (a: Q, b: Q) => new KubernetesQuantity(a.quantity.add(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.add(int): kubernetes.Quantity",
    (a: Q, b: bigint) => new KubernetesQuantity(a.quantity.add(new Quantity(b))),
  );
  env.registerFunction(
    "kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity",
    (a: Q, b: Q) => new KubernetesQuantity(a.quantity.sub(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.sub(int): kubernetes.Quantity",
    (a: Q, b: bigint) => new KubernetesQuantity(a.quantity.sub(new Quantity(b))),
  );
  env.registerFunction(
    "kubernetes.Quantity.isInteger(): bool",
    (q: Q) => integerOf(q.quantity) !== undefined,
  );
  env.registerFunction("kubernetes.Quantity.asInteger(): int", (q: Q) => {
    const value = integerOf(q.quantity);
    if (value === undefined) throw new Error("cannot convert value to integer");
    return value;
  });
  env.registerFunction("kubernetes.Quantity.asApproximateFloat(): double", (q: Q) =>
    q.quantity.asApproximateFloat64(),
  );
  // Quantities compare by amount, as resource.Quantity.Equal does: quantity("1") == quantity("1000m").
  env.registerOperator("kubernetes.Quantity == kubernetes.Quantity", (a: Q, b: Q) =>
    a.quantity.equal(b.quantity),
  );
}

/** The quantity as an int64 when it is a whole number in range (Quantity.AsInt64). */
function integerOf(quantity: Quantity): bigint | undefined {
  const text = quantity.toString();
  const exact = Quantity.parse(text);
  // A whole number's canonical form may carry a suffix ("1k"); compare with its ceiling.
  const ceiling = BigInt(Math.ceil(quantity.asApproximateFloat64()));
  if (!exact.equal(new Quantity(ceiling))) return undefined;
  if (ceiling > 9223372036854775807n || ceiling < -9223372036854775808n) return undefined;
  return ceiling;
}

function compare(a: unknown, b: unknown): number {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  const left = primitiveOf(a);
  const right = primitiveOf(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

function primitiveOf(value: unknown): Comparable {
  if (typeof value === "object" && value !== null && "valueOf" in value) {
    const primitive = (value as { valueOf(): unknown }).valueOf();
    if (typeof primitive !== "object") return primitive as Comparable;
  }
  return value as Comparable;
}

function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a, jsonBigint) === JSON.stringify(b, jsonBigint);
}

function jsonBigint(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? `${value}n` : value instanceof Map ? Object.fromEntries(value) : value;
}

/** The `format` namespace value (`format.named("uuid")`). */
export class FormatLibrary {}

/** A named format: `validate(s)` is an empty optional when `s` conforms, else the list of problems. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly check: (value: string) => string[],
  ) {}
}

// The validators of upstream's format library, keyed by the names format.named accepts.
const formats: Record<string, (value: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (value) => isDNS1123Label(maskTrailingDash(value)),
  dns1123SubdomainPrefix: (value) => isDNS1123Subdomain(maskTrailingDash(value)),
  dns1035LabelPrefix: (value) => isDNS1035Label(maskTrailingDash(value)),
  labelValue: isValidLabelValue,
  uri: (value) => (typeof parseRequestURI(value) === "string" ? ["invalid URI"] : []),
  uuid: (value) =>
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value)
      ? []
      : ["does not match the UUID format"],
  byte: (value) =>
    /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value) ? [] : ["invalid base64"],
  date: (value) => (isDate(value) ? [] : ["invalid date"]),
  datetime: (value) => (isDateTime(value) ? [] : ["invalid datetime"]),
};

function registerFormats(env: Environment): void {
  env.registerType("kubernetes.FormatLibrary", FormatLibrary);
  env.registerType("kubernetes.NamedFormat", NamedFormat);
  env.registerConstant("format", "kubernetes.FormatLibrary", new FormatLibrary());
  env.registerFunction(
    "kubernetes.FormatLibrary.named(string): optional<kubernetes.NamedFormat>",
    (_library: FormatLibrary, name: string) => {
      const check = Object.hasOwn(formats, name) ? formats[name] : undefined;
      return check ? Optional.of(new NamedFormat(name, check)) : Optional.none();
    },
  );
  for (const [name, check] of Object.entries(formats)) {
    env.registerFunction(
      `kubernetes.FormatLibrary.${name}(): kubernetes.NamedFormat`,
      () => new NamedFormat(name, check),
    );
  }
  env.registerFunction(
    "kubernetes.NamedFormat.validate(string): optional<list<string>>",
    (format: NamedFormat, value: string) => {
      chargeCost(value.length / 10);
      const problems = format.check(value);
      return problems.length === 0 ? Optional.none() : Optional.of(problems);
    },
  );
}

const dns1035LabelPattern = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** An RFC 1035 label (IsDNS1035Label). */
function isDNS1035Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push("must be no more than 63 characters");
  if (!dns1035LabelPattern.test(value)) {
    errors.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errors;
}

/** A prefix may end in a dash: apimachinery's maskTrailingDash checks it as if it ended in `a`. */
function maskTrailingDash(value: string): string {
  return value.length > 1 && value.endsWith("-") ? `${value.slice(0, -1)}a` : value;
}

function isDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

function isDateTime(value: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  return match?.[1] !== undefined && isDate(match[1]) && !Number.isNaN(Date.parse(value));
}
