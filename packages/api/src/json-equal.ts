/**
 * Deep equality of two JSON values: object member order is ignored, and a
 * member whose value is `undefined` counts as absent (JSON drops it). The one
 * structural comparison of objects in the project: the API server (updates
 * that change nothing, apply), the kubelet (status it need not write) and
 * controllers use it.
 */
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
  // Nearly always: the same number of members, none undefined. Then every member of `a` having
  // its equal in `b` means `b` has no other.
  const keys = Object.keys(ra);
  if (keys.length === Object.keys(rb).length) {
    let i = 0;
    for (; i < keys.length; i++) {
      const mine = ra[keys[i]!];
      if (mine === undefined) break;
      if (!jsonEqual(mine, rb[keys[i]!])) return false;
    }
    if (i === keys.length) return true;
  }
  let count = 0;
  for (const key in ra) {
    if (ra[key] === undefined) continue;
    count++;
    if (!jsonEqual(ra[key], rb[key])) return false;
  }
  for (const key in rb) if (rb[key] !== undefined) count--;
  return count === 0;
}
