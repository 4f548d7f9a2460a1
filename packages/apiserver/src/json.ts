/** A JSON value as objects on the wire carry them. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A deep copy of a JSON value. A plain recursive walk: faster than
 * `structuredClone` for wire-format objects, and it drops `undefined`
 * members the way a JSON round trip would. A frozen value is immutable and
 * shared as it is (stored objects' FieldsV1 trees are: see `apply/fields-v1.ts`).
 */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) out[key] = copyJson(member);
  }
  return out as T;
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
 * The length of an object's JSON in UTF-16 code units, counting its
 * `metadata.managedFields` entries through {@link jsonLength} (exact up to the
 * separators around them). Returns undefined for an object without managedFields.
 */
export function objectJsonLength(object: { metadata?: unknown }): number | undefined {
  const metadata = object.metadata;
  if (!isJsonObject(metadata) || !Array.isArray(metadata.managedFields)) return undefined;
  const { managedFields, ...rest } = metadata;
  let length = JSON.stringify({ ...object, metadata: rest }).length + '"managedFields":[],'.length;
  for (const entry of managedFields as unknown[]) {
    if (!isJsonObject(entry) || entry.fieldsV1 === undefined) length += jsonLength(entry) + 1;
    else length += JSON.stringify({ ...entry, fieldsV1: 0 }).length + jsonLength(entry.fieldsV1);
  }
  return length;
}

/** Deep equality of two JSON values (object member order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    if (ra[key] === undefined) continue;
    count++;
    if (!jsonEqual(ra[key], rb[key])) return false;
  }
  for (const key in rb) if (rb[key] !== undefined) count--;
  return count === 0;
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `T` with its read-only members writable: the server sets the system fields clients may not. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
