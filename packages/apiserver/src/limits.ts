import { newBadRequest } from "@reconcile/api";

/**
 * The largest object stored, in bytes of JSON: etcd's default request limit
 * (`--max-request-bytes`, 1.5 MiB), which is what bounds an object in
 * kube-apiserver.
 */
export const defaultMaxObjectBytes = 1.5 * 1024 * 1024;

/**
 * How deep a body may nest (objects and arrays). Go's JSON, YAML and
 * protobuf decoders stop at 10,000 levels; every code path here (decode,
 * validation, merges, patches, copies, encoding, watch, and a client's
 * `structuredClone`) recurses, and the shallowest of them runs out of stack
 * near 2,000 levels, so the limit leaves it a wide margin. Real objects,
 * CRD schemas included, nest a few dozen levels.
 */
export const maxNestingDepth = 512;

/** kube-apiserver's `maxJSONPatchOperations`. */
export const maxJsonPatchOperations = 10_000;

/**
 * How much the `copy` operations of one JSON patch may add, in bytes of JSON:
 * kube-apiserver's `JSONPatchMaxCopyBytes` (twice etcd's request limit).
 */
export const maxJsonPatchCopyBytes = 3 * 1024 * 1024;

/**
 * Whether `value` nests deeper than `limit` levels of objects and arrays. An
 * explicit stack instead of recursion, so that any depth is measured without
 * running out of stack; a value that contains itself counts as too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number = maxNestingDepth): boolean {
  if (value === null || typeof value !== "object") return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(current)) {
      for (const member of current) {
        if (member !== null && typeof member === "object") {
          values.push(member);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in current) {
        const member = (current as Record<string, unknown>)[key];
        if (member !== null && typeof member === "object") {
          values.push(member);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** Rejects `value` if it nests deeper than {@link maxNestingDepth}, with a 400 naming the limit. */
export function checkNesting(value: unknown, what: string): void {
  if (nestsDeeperThan(value))
    throw newBadRequest(`${what} is nested more than ${maxNestingDepth} levels deep`);
}

/**
 * A write whose body is past this many bytes yields the event loop between
 * its phases (reading the body, decoding, validating, storing), so one large
 * write does not hold every other request for its whole duration.
 */
export const largeWriteBytes = 256 * 1024;

/**
 * Resolves on a later turn of the event loop, once timers and waiting I/O have
 * run: a timer, then an immediate (an immediate alone, queued from an I/O
 * callback, runs before the loop reaches its timers).
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
}
