import { type FieldError, newInvalid, type StatusError } from "@reconcile/api";

/** The longest manager name, in bytes (apimachinery's `FieldManagerMaxLength`). */
export const fieldManagerMaxLength = 128;

/**
 * The manager of a write without `fieldManager`: the User-Agent up to its first
 * `/`, printable characters only, at most 128 bytes, else `unknown` (kube-apiserver's
 * `prefixFromUserAgent`).
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const key = userAgent ?? "";
  let manager = managersOfAgents.get(key);
  if (manager === undefined) {
    manager = prefixOf(key);
    // A client sends one User-Agent on every request: a few distinct ones are kept.
    if (managersOfAgents.size >= 1_000) managersOfAgents.clear();
    managersOfAgents.set(key, manager);
  }
  return manager;
}

const managersOfAgents = new Map<string, string>();

function prefixOf(userAgent: string): string {
  let out = "";
  let bytes = 0;
  for (const char of userAgent.split("/", 1)[0] ?? "") {
    if (!isPrintable(char)) continue;
    const size = Buffer.byteLength(char);
    if (bytes + size > fieldManagerMaxLength) break;
    out += char;
    bytes += size;
  }
  return out === "" ? "unknown" : out;
}

/**
 * Checks the `fieldManager` parameter as kube-apiserver's `ValidateFieldManager`
 * does; `optionsKind` is `CreateOptions`, `UpdateOptions` or `PatchOptions`.
 * Returns the 422 to answer, or undefined.
 */
export function validateFieldManager(
  manager: string | undefined,
  optionsKind: "CreateOptions" | "UpdateOptions" | "PatchOptions",
  apply = false,
): StatusError | undefined {
  const invalid = (error: FieldError) => newInvalid({ group: "meta.k8s.io", kind: optionsKind }, "", [error]);
  if (manager === undefined || manager === "") {
    if (!apply) return undefined;
    return invalid({
      type: "FieldValueRequired",
      field: "fieldManager",
      message: "fieldManager: Required value: is required for apply patch",
    });
  }
  if (Buffer.byteLength(manager) > fieldManagerMaxLength) {
    return invalid({
      type: "FieldValueTooLong",
      field: "fieldManager",
      message: `fieldManager: Too long: may not be more than ${fieldManagerMaxLength} bytes`,
    });
  }
  let position = 0;
  for (const char of manager) {
    if (!isPrintable(char)) {
      const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      return invalid({
        type: "FieldValueInvalid",
        field: "fieldManager",
        message: `fieldManager: Invalid value: ${goQuote(manager)}: invalid character U+${code} (at position ${position})`,
      });
    }
    position += Buffer.byteLength(char);
  }
  return undefined;
}

/** The 409 for `force` on a patch that is not an apply. */
export function forceNotAllowed(): StatusError {
  return newInvalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", [
    {
      type: "FieldValueForbidden",
      field: "force",
      message: "force: Forbidden: may not be specified for non-apply patch",
    },
  ]);
}

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrintable(char: string): boolean {
  return char === " " || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(char);
}

/** Go's `%q` for the strings these messages quote. */
export function goQuote(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\t") out += "\\t";
    else if (char === "\r") out += "\\r";
    else if (isPrintable(char)) out += char;
    else if (code < 0x80) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}
