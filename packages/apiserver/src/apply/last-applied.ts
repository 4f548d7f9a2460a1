import { typeFor } from "./builtin-types.js";
import { ApplyConflictError, newApplyConflict } from "./conflicts.js";
import type { FieldSet } from "./fieldpath.js";
import { type ApplyOptions, applyConfiguration } from "./managed-fields.js";
import type { FieldManager } from "./managed-fields-entries.js";
import { compare, isObject, toFieldSet } from "./typed.js";

/** The annotation client-side `kubectl apply` keeps its last configuration in. */
export const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration";

/** The limit on all annotations of an object together (apimachinery's `TotalAnnotationSizeLimitB`). */
const totalAnnotationSizeLimit = 256 * 1024;

/**
 * Server-side apply with kube-apiserver's help for objects that client-side
 * apply managed (`lastAppliedManager` and `lastAppliedUpdater`), both only for
 * the manager `kubectl`:
 * - a conflict on a field whose live value still equals the last-applied
 *   configuration is forgiven (the user applied it before, client-side); when
 *   every conflict is forgiven the apply is forced, otherwise the 409 lists only
 *   the others;
 * - after the apply, a non-empty last-applied annotation is rewritten to the
 *   configuration just applied, so a later client-side apply agrees with it.
 */
export function applyWithLastApplied(options: ApplyOptions): Record<string, unknown> {
  if (options.manager !== "kubectl") return applyConfiguration(options);
  let result: Record<string, unknown>;
  try {
    result = applyConfiguration(options);
  } catch (error) {
    if (!(error instanceof ApplyConflictError) || options.live === undefined) throw error;
    const allowed = allowedByLastApplied(options);
    if (allowed === undefined) throw error;
    const remaining = new Map<FieldManager, FieldSet>();
    for (const [manager, fields] of error.conflicts) {
      const rest = fields.difference(allowed);
      if (!rest.empty()) remaining.set(manager, rest);
    }
    if (remaining.size > 0) throw newApplyConflict(remaining);
    result = applyConfiguration({ ...options, force: true });
  }
  return syncLastApplied(result, options.config);
}

/**
 * The fields of the live object's last-applied configuration whose live value
 * still matches it; undefined when there is none, or it is for another apiVersion.
 */
function allowedByLastApplied(options: ApplyOptions): FieldSet | undefined {
  const live = options.live!;
  const annotation = annotationsOf(live)?.[lastAppliedAnnotation];
  if (typeof annotation !== "string" || annotation === "") return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(annotation);
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied.apiVersion !== options.apiVersion) return undefined;
  const type =
    options.type ?? typeFor(String(options.config.apiVersion ?? ""), String(options.config.kind ?? ""));
  try {
    const fields = toFieldSet(lastApplied, type);
    const difference = compare(lastApplied, live, type);
    return fields.difference(difference.modified).difference(difference.added).difference(difference.removed);
  } catch {
    return undefined;
  }
}

function syncLastApplied(
  object: Record<string, unknown>,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const annotations = annotationsOf(object);
  const current = annotations?.[lastAppliedAnnotation];
  if (annotations === undefined || typeof current !== "string" || current === "") return object;
  const applied = structuredClone(config);
  const appliedAnnotations = annotationsOf(applied);
  if (appliedAnnotations !== undefined) {
    delete appliedAnnotations[lastAppliedAnnotation];
    if (Object.keys(appliedAnnotations).length === 0)
      delete (applied.metadata as Record<string, unknown>).annotations;
  }
  const next: Record<string, unknown> = { ...annotations, [lastAppliedAnnotation]: JSON.stringify(applied) };
  let size = 0;
  for (const [key, value] of Object.entries(next)) size += key.length + String(value).length;
  if (size > totalAnnotationSizeLimit) delete next[lastAppliedAnnotation];
  return { ...object, metadata: { ...(object.metadata as Record<string, unknown>), annotations: next } };
}

function annotationsOf(object: Record<string, unknown>): Record<string, unknown> | undefined {
  const metadata = object.metadata;
  if (!isObject(metadata) || !isObject(metadata.annotations)) return undefined;
  return metadata.annotations;
}
