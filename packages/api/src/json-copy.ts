/**
 * A deep copy of a JSON value, as a JSON round trip would make it for the
 * values objects hold: `undefined` members are dropped, and a `__proto__`
 * member (which `JSON.parse` makes an own member) stays an own member. A plain
 * recursive walk, several times faster than `structuredClone` or a round trip
 * for wire-format objects. A frozen value is immutable and is shared as it is,
 * not copied (the API server's stored FieldsV1 trees are frozen and shared).
 */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value))
    return (value === 0 ? 0 : value) as T; // -0 is written as 0
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    if (key === "__proto__")
      Object.defineProperty(out, key, {
        value: copyJson(member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = copyJson(member);
  }
  return out as T;
}

/**
 * Freezes `value` and everything reachable from it, and returns it. A value
 * already frozen is taken to be frozen through, as {@link copyJson} takes it,
 * and is not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
