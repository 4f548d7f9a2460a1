import { maxNestingDepth } from "./limits.js";

/** A JSON value as objects on the wire carry them. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A private copy of a plain JSON value, and a bound on its JSON text's length
 * (never below the length; up to six times it for text that is all escapes).
 * Three times faster than a `JSON.parse(JSON.stringify(value))` round trip, and
 * what it returns is the same, with one exception: frozen members `keep`
 * accepts stay shared, with the length it gives (it is asked about no other).
 * Returns undefined for a value JSON would change (an instance of a class, a
 * function, a non-finite number, a hole or an undefined element): for those,
 * the round trip is the definition. Objects and
 * arrays nested past `maxDepth` levels (the value itself is level 1) are not
 * copied: the walk stops there and answers {@link nestedTooDeep}.
 */
export function copyPlainJson(
  value: unknown,
  keep?: (value: object) => number | undefined,
  maxDepth = maxNestingDepth,
): PlainCopy | undefined | typeof nestedTooDeep {
  const walk: PlainWalk = { length: 0, plain: true, keep, maxDepth, tooDeep: false, oddMembers: false };
  const copy = copyPlain(value, walk, 1);
  if (walk.tooDeep) return nestedTooDeep;
  return walk.plain ? { copy, maxLength: walk.length, oddMembers: walk.oddMembers } : undefined;
}

export interface PlainCopy {
  readonly copy: unknown;
  readonly maxLength: number;
  /** Whether some object member is null or named `__proto__`: what a decoder drops. */
  readonly oddMembers: boolean;
}

/** What {@link copyPlainJson} answers for a value nested too deep to copy. */
export const nestedTooDeep = Symbol("nested too deep");

interface PlainWalk {
  length: number;
  plain: boolean;
  keep: ((value: object) => number | undefined) | undefined;
  readonly maxDepth: number;
  tooDeep: boolean;
  oddMembers: boolean;
}

/** The longest JSON a finite number prints as (`-1.7976931348623157e+308` is 24). */
const maxNumberLength = 25;

function copyPlain(value: unknown, walk: PlainWalk, depth: number): unknown {
  switch (typeof value) {
    case "string":
      walk.length += 6 * value.length + 2;
      return value;
    case "number":
      if (!Number.isFinite(value)) walk.plain = false;
      walk.length += maxNumberLength;
      return value === 0 ? 0 : value; // -0 prints as 0
    case "boolean":
      walk.length += 5;
      return value;
    case "object":
      break;
    default:
      walk.plain = false;
      return value;
  }
  if (value === null) {
    walk.length += 4;
    return value;
  }
  if (depth > walk.maxDepth) {
    walk.tooDeep = true;
    return value;
  }
  if (walk.keep !== undefined && Object.isFrozen(value)) {
    const kept = walk.keep(value);
    if (kept !== undefined) {
      walk.length += kept;
      return value;
    }
  }
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    walk.length += value.length + 2;
    for (let i = 0; i < value.length; i++) {
      const element = value[i];
      if (element === undefined) walk.plain = false;
      out[i] = copyPlain(element, walk, depth + 1);
    }
    return out;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    walk.plain = false;
    return value;
  }
  const out: Record<string, unknown> = {};
  walk.length += 2;
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    walk.length += 6 * key.length + 4;
    if (member === null) walk.oddMembers = true;
    // JSON.parse makes "__proto__" an own member; an assignment would set the prototype instead.
    if (key === "__proto__") {
      walk.oddMembers = true;
      Object.defineProperty(out, key, {
        value: copyPlain(member, walk, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = copyPlain(member, walk, depth + 1);
  }
  return out;
}

/**
 * `JSON.stringify(value).length`, remembered for frozen values (which cannot
 * change): stored objects share their FieldsV1 trees, so each is serialized once.
 */
export function jsonLength(value: unknown): number {
  if (typeof value !== "object" || value === null || !Object.isFrozen(value))
    return JSON.stringify(value)?.length ?? 0;
  let length = frozenLengths.get(value);
  if (length === undefined) {
    length = JSON.stringify(value).length;
    frozenLengths.set(value, length);
  }
  return length;
}

const frozenLengths = new WeakMap<object, number>();

/**
 * Bounds on the length of a JSON value's text in UTF-16 code units, found
 * without writing it: `lower` counts each string as if nothing in it needed
 * escaping (exact for nearly every object), `upper` as if every character did.
 * Frozen values (stored objects' shared FieldsV1 trees) count through
 * {@link jsonLength}, each serialized once.
 */
export function jsonLengthBounds(value: unknown): { lower: number; upper: number } {
  const count: LengthCount = { length: 0, stringChars: 0 };
  countLength(value, count);
  return { lower: count.length, upper: count.length + 5 * count.stringChars };
}

interface LengthCount {
  length: number;
  /** Characters in strings and keys, each of which could take up to six as an escape. */
  stringChars: number;
}

function countLength(value: unknown, count: LengthCount): void {
  switch (typeof value) {
    case "string":
      count.length += value.length + 2;
      count.stringChars += value.length;
      return;
    case "number":
      count.length += numberLength(value);
      return;
    case "boolean":
      count.length += value ? 4 : 5;
      return;
    case "object":
      break;
    default:
      count.length += 4; // undefined as an element is null; as a member it is skipped before here
      return;
  }
  if (value === null) {
    count.length += 4;
    return;
  }
  if (Object.isFrozen(value)) {
    count.length += jsonLength(value);
    return;
  }
  if (Array.isArray(value)) {
    count.length += value.length > 0 ? value.length + 1 : 2;
    for (let i = 0; i < value.length; i++) countLength(value[i], count);
    return;
  }
  let members = 0;
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    members++;
    count.length += key.length + 3;
    count.stringChars += key.length;
    countLength(member, count);
  }
  count.length += members > 0 ? members + 1 : 2;
}

/** The length of a number's JSON (non-finite numbers are written as null). */
function numberLength(value: number): number {
  if (Number.isInteger(value) && value >= 0 && value < 1e15) {
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    return digits;
  }
  return Number.isFinite(value) ? String(value).length : 4;
}

// Deep copies and equality of JSON values are @reconcile/api's; re-exported for the modules that import them from here.
export { copyJson, jsonEqual } from "@reconcile/api";

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A shallow copy of `object` with `member` set to `value`, where it was or
 * else last, or without it when `value` is undefined: what
 * `{ ...object, [member]: value }` and a `delete` give, without either's cost.
 * On Node 20 a member added to a spread's copy (`{ ...a, b }` where `a` has no
 * `b`) takes a new hidden class each time, about 1.5 µs; this copy is built
 * member by member and shares its class with all such copies. An own
 * `__proto__` member stays an own member.
 */
export function withMember(object: object, member: string, value: unknown): Record<string, unknown> {
  const source = object as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let found = false;
  for (const key in source) {
    if (key === member) {
      found = true;
      if (value !== undefined) out[key] = value;
    } else if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = source[key];
  }
  if (!found && value !== undefined) out[member] = value;
  return out;
}

/** Whether `object` has no enumerable member: `Object.keys(object).length === 0` without the array. */
export function hasNoMembers(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

/** `T` with its read-only members writable: the server sets the system fields clients may not. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * An object's own keys in code-unit order, as `Object.keys(value).sort()`
 * gives them: by insertion for the few keys most objects have (several times
 * quicker than the generic sort), by the generic sort past that.
 */
export function sortedKeys(value: object): string[] {
  return sortNames(Object.keys(value));
}

/** `keys` sorted in place (insertion sort for the few keys most objects have), and returned. */
export function sortNames(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}
