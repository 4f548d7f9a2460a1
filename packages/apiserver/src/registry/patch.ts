import { newBadRequest } from "@reconcile/api";
import { copyJson, isJsonObject } from "../json.js";
import { jsonPatch } from "./json-patch.js";
import { defaultPatchMeta, type PatchMeta, setMember, strategicMergePatch } from "./strategic-merge-patch.js";

export { jsonPatch } from "./json-patch.js";
export {
  atomicPatchMeta,
  defaultMergeKeys,
  defaultPatchMeta,
  type MergeKeys,
  type PatchMeta,
  patchMetaByFieldName,
  strategicMergePatch,
} from "./strategic-merge-patch.js";

export type PatchType = "merge" | "json" | "strategic-merge" | "apply";

/**
 * Applies a patch to a copy of `original` and returns the result; `original`
 * is left untouched. Malformed patches are 400 BadRequest, JSON Patch
 * operations that cannot apply (a failed `test`, a missing path) are 422, as
 * kube-apiserver answers them.
 */
export function applyPatch(
  type: Exclude<PatchType, "apply">,
  original: unknown,
  patch: unknown,
  meta: PatchMeta = defaultPatchMeta,
): unknown {
  switch (type) {
    case "merge":
      if (!isJsonObject(patch)) throw newBadRequest("a merge patch must be a JSON object");
      return mergePatch(original, patch);
    case "json":
      return jsonPatch(original, patch);
    case "strategic-merge":
      if (!isJsonObject(patch)) throw newBadRequest("a strategic merge patch must be a JSON object");
      return strategicMergePatch(original, patch, meta);
    default:
      throw newBadRequest(`unknown patch type ${JSON.stringify(type)}`);
  }
}

/**
 * JSON Merge Patch (RFC 7386): objects merge recursively, null deletes,
 * anything else replaces. The result is a copy of its own; the work is
 * linear in the sizes of the two, however deep.
 */
export function mergePatch(original: unknown, patch: unknown): unknown {
  return copyJson(isJsonObject(patch) ? mergePatchShared(original, patch) : patch);
}

/**
 * {@link mergePatch} for a caller that copies the result before it changes
 * anything (the store decodes it into a private copy at once): the result
 * shares with `original` what the patch leaves alone, and with `patch` the
 * values it sets, instead of copying either. Only the objects along the
 * patch's paths are new; neither argument is changed.
 */
export function mergePatchShared(original: unknown, patch: Record<string, unknown>): Record<string, unknown> {
  const base = isJsonObject(original) ? original : {};
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete out[key];
      continue;
    }
    // Own members only, as in the strategic merge below: "__proto__" is an ordinary key.
    const current = Object.hasOwn(base, key) ? base[key] : undefined;
    setMember(out, key, isJsonObject(value) ? mergePatchShared(current, value) : value);
  }
  return out;
}
