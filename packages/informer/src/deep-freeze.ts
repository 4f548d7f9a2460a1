/**
 * Freezes `value` and everything reachable from it, so that mutating a cached
 * object throws at the mutation (the informer's mutation detector; client-go
 * compares deep copies once a second instead). Returns `value`.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
