/** One RFC 6902 operation, as a mutating webhook answers them. */
export type PatchOperation =
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A JSON pointer segment: `~` as `~0`, `/` as `~1`. */
function segment(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => equal(item, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key]));
  }
  return false;
}

/**
 * The JSON patch that turns `original` into `modified` (what
 * controller-runtime's defaulting webhook answers, `jsonpatch.CreatePatch`):
 * objects compared key by key, lists of equal length item by item, other
 * lists replaced whole.
 */
export function createPatch(original: unknown, modified: unknown, path = ""): PatchOperation[] {
  if (equal(original, modified)) return [];
  if (isObject(original) && isObject(modified)) {
    const operations: PatchOperation[] = [];
    for (const key of Object.keys(original))
      if (!Object.hasOwn(modified, key)) operations.push({ op: "remove", path: `${path}/${segment(key)}` });
    for (const [key, value] of Object.entries(modified)) {
      const at = `${path}/${segment(key)}`;
      if (!Object.hasOwn(original, key)) operations.push({ op: "add", path: at, value });
      else operations.push(...createPatch(original[key], value, at));
    }
    return operations;
  }
  if (Array.isArray(original) && Array.isArray(modified) && original.length === modified.length)
    return original.flatMap((item, i) => createPatch(item, modified[i], `${path}/${i}`));
  return [{ op: "replace", path, value: modified }];
}
