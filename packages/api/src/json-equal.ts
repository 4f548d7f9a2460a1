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
  // Members are walked with for…in, which allocates nothing (Object.keys makes an array per object).
  let count = 0;
  for (const key in ra) {
    const mine = ra[key];
    if (mine === undefined) continue;
    count++;
    if (!jsonEqual(mine, rb[key])) return false;
  }
  // Every member of `a` has its equal in `b`: `b` is equal if it has no other.
  for (const key in rb) if (rb[key] !== undefined && --count < 0) return false;
  return count === 0;
}
