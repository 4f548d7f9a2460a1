import { StatusError } from "@reconcile/api";
import { goQuote } from "./field-manager.js";
import type { FieldSet } from "./fieldpath.js";
import { pathString } from "./fieldpath.js";
import { type FieldManager, identity } from "./managed-fields-entries.js";

/**
 * The 409 of an apply with conflicts, worded as kube-apiserver words it (kubectl
 * prints the message verbatim): one cause per field, the manager named with its
 * subresource and, for Update entries, the apiVersion.
 */
export function newApplyConflict(conflicts: ReadonlyMap<FieldManager, FieldSet>): ApplyConflictError {
  const byManager = [...conflicts].sort(([a], [b]) =>
    identity(a) < identity(b) ? -1 : identity(a) > identity(b) ? 1 : 0,
  );
  const causes: Array<{ reason: string; message: string; field: string }> = [];
  const blocks: string[] = [];
  for (const [manager, fields] of byManager) {
    const who = describeManager(manager);
    const paths = fields.paths().map(pathString);
    for (const field of paths)
      causes.push({ reason: "FieldManagerConflict", message: `conflict with ${who}`, field });
    blocks.push([`conflicts with ${who}:`, ...paths.map((path) => `- ${path}`)].join("\n"));
  }
  const message =
    causes.length === 1
      ? `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`
      : `Apply failed with ${causes.length} conflicts: ${blocks.join("\n")}`;
  return new ApplyConflictError({ code: 409, reason: "Conflict", message, details: { causes } }, conflicts);
}

/** The 409 of a conflicting apply, with the conflicting fields of each manager. */
export class ApplyConflictError extends StatusError {
  constructor(
    status: ConstructorParameters<typeof StatusError>[0],
    readonly conflicts: ReadonlyMap<FieldManager, FieldSet>,
  ) {
    super(status);
  }
}

/** How conflict messages name a manager: `"m"`, `"m" with subresource "status"`, then ` using v1` for Update entries. */
function describeManager(m: FieldManager): string {
  let out = goQuote(m.manager);
  if (m.subresource !== "") out += ` with subresource ${goQuote(m.subresource)}`;
  if (m.operation === "Update") out += ` using ${m.apiVersion}`;
  return out;
}
