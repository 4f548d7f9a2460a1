import type { Environment } from "@marcbachmann/cel-js";
import { chargeCost } from "./cel-cost.js";
import { registerFormats } from "./cel-format.js";
import { registerNetworkLibraries } from "./cel-net.js";
import { registerQuantities } from "./cel-quantity.js";
import { registerURLs } from "./cel-url.js";
import { re2Find, re2FindAll, re2Matches } from "./re2.js";

export { FormatLibrary, NamedFormat } from "./cel-format.js";
export { KubernetesQuantity } from "./cel-quantity.js";
export { KubernetesURL, parseRequestURI } from "./cel-url.js";

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
    return re2Find(text, pattern) ?? "";
  });
  const findAll = (text: string, pattern: string, limit = -1n): string[] => {
    chargeCost(text.length / 4);
    if (limit === 0n) return [];
    return re2FindAll(text, pattern, limit < 0n ? -1 : Number(limit));
  };
  env.registerFunction("string.findAll(string): list<string>", (text: string, pattern: string) =>
    findAll(text, pattern),
  );
  env.registerFunction(
    "string.findAll(string, int): list<string>",
    (text: string, pattern: string, limit: bigint) => findAll(text, pattern, limit),
  );
  // The library's own matches() runs JavaScript's backtracking RegExp; compile() renames every call to this.
  const matches = (text: string, pattern: string): boolean => {
    chargeCost(text.length / 4);
    return re2Matches(text, pattern);
  };
  env.registerFunction(`string.${linearMatches}(string): bool`, matches);
  env.registerFunction(`${linearMatches}(string, string): bool`, matches);
  // cel-go has the global form too; the library only the method.
  env.registerFunction("matches(string, string): bool", matches);
}

/** The name `matches` calls are renamed to in a parsed rule, so that they run on RE2. */
export const linearMatches = "re2Matches";

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
