import {
  apiVersionOf,
  errorMessage,
  groupKindOf,
  type KubeObject,
  newBadRequest,
  newInvalid,
  newRequestEntityTooLarge,
  type ResourceDescriptor,
  StatusError,
} from "@reconcile/api";
import { isSharedFieldsV1 } from "../../apply/index.js";
import { copyJson, copyPlainJson, isJsonObject, jsonLength, nestedTooDeep } from "../../json.js";
import { largeWriteBytes, maxNestingDepth } from "../../limits.js";
import { FieldErrors } from "../field-errors.js";
import { type FieldValidation, reportFieldProblems } from "../field-validation.js";
import { validateLabels } from "../meta-validation.js";
import type { ResourceDefinition } from "../resource-definition.js";
import { declaresMetadata, objectMetaSchema, typeProblem } from "../schema.js";

/** How a body came: written whole, the result of a patch, or an apply configuration. */
export type DecodeVerb = "write" | "patch" | "apply";

/**
 * The body as an object of this kind: a private copy (as a JSON round trip makes
 * it, and measured against the size limit), kind and apiVersion checked and
 * filled, field types checked, fields the schema does not declare dropped and
 * reported as `fieldValidation` says.
 */
export function decodeObject(
  definition: ResourceDefinition,
  maxObjectBytes: number,
  body: unknown,
  fieldValidation?: FieldValidation,
  verb: DecodeVerb = "write",
  /** `namespace/name` (or `name`), for an apply's error. */
  qualifiedName = "",
): KubeObject {
  const resource: ResourceDescriptor = definition.descriptor;
  const what = `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}`;
  if (!isJsonObject(body))
    throw newBadRequest(`${what}: the body must be a JSON object, got ${jsonTypeOf(body)}`);
  let object: KubeObject;
  let oddMembers: boolean;
  try {
    // The copy stops at the nesting limit, before anything else recurses into the body:
    // nothing accepted may be too deep for a later request.
    ({ object, oddMembers } = privateCopy(body, maxObjectBytes, what));
  } catch (error) {
    // Reading the body failed (an in-process body's getter that throws, say): it is no JSON.
    if (StatusError.isInstance(error)) throw error;
    throw newBadRequest(`${what}: the body is not JSON: ${errorMessage(error)}`);
  }
  const apiVersion = apiVersionOf(resource);
  if (object.apiVersion !== undefined && object.apiVersion !== "" && object.apiVersion !== apiVersion)
    throw newBadRequest(
      `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  if (object.kind !== undefined && object.kind !== "" && object.kind !== resource.kind)
    throw newBadRequest(
      `${what}: the kind in the data (${String(object.kind)}) does not match the expected kind (${resource.kind})`,
    );
  // A built-in kind's schema reads metadata in document order with the rest; a custom kind's
  // metadata is read on its own, as ObjectMeta.
  const schema = definition.schema;
  const problem =
    (declaresMetadata(schema) ? undefined : typeProblem(object.metadata, objectMetaSchema(), "metadata")) ??
    typeProblem(object, schema, "");
  if (problem) throw newBadRequest(`${what}: ${problem}`);
  // A strict patch's 422 shows the patched object as it was before pruning.
  const patchedBeforePruning =
    verb === "patch" && fieldValidation?.directive === "Strict" ? copyJson(object) : undefined;
  const unknown = definition.openAPI?.pruneUnknownFields(object as Record<string, unknown>) ?? [];
  if (verb === "apply" && unknown.length > 0) {
    // Server-side apply types the configuration by the schema whatever the directive (SMD's typed patch).
    // A plain error in kube-apiserver, so its Status has no reason.
    throw new StatusError({
      code: 500,
      message: `failed to create typed patch object (${qualifiedName}; ${apiVersion}, Kind=${resource.kind}): ${unknown.map((path) => `.${path}: field not declared in schema`).join(", ")}`,
    });
  }
  reportFieldProblems(
    fieldValidation,
    unknown,
    verb === "patch" ? { what, patched: () => JSON.stringify(patchedBeforePruning) } : { what },
  );
  // A "__proto__" key is dropped below (it would become a prototype); in labels and annotations,
  // where it is no valid key, it is answered as kube-apiserver answers any invalid key.
  const protoKeys = new FieldErrors();
  for (const field of ["labels", "annotations"] as const) {
    const map = object.metadata?.[field];
    if (isJsonObject(map) && Object.hasOwn(map, "__proto__"))
      validateLabels(Object.fromEntries([["__proto__", ""]]), `metadata.${field}`, protoKeys);
  }
  if (!protoKeys.empty)
    throw newInvalid(groupKindOf(resource), String(object.metadata?.name ?? ""), protoKeys.list);
  // Kubernetes reads a JSON null as "absent"; so do we, everywhere below.
  const filled = { apiVersion, kind: resource.kind, ...object, metadata: object.metadata ?? {} };
  const decoded = (oddMembers ? withoutNulls(filled, definition.rawFields) : filled) as KubeObject;
  if (largeObjects.has(object)) largeObjects.add(decoded);
  return decoded;
}

/**
 * Objects decoded from a large body (past {@link largeWriteBytes}, by the copy's bound): their
 * write yields the event loop between its phases.
 */
export const largeObjects = new WeakSet<object>();

/** The 413 of a body or patch over the object size limit. */
export function requestTooLarge(limit: number): StatusError {
  return newRequestEntityTooLarge(`limit is ${limit}`);
}

/** A patch's JSON length, measured before it is applied; a patch that is no JSON is a 400. */
export function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch (error) {
    throw newBadRequest(`the patch is not JSON: ${(error as Error).message}`);
  }
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}

/**
 * The body as this server's own JSON: a copy that shares nothing with the
 * caller but the FieldsV1 trees this server shared with it (they come back as
 * they went out). Throws what JSON.stringify throws for what is no JSON, a 413
 * past the size limit.
 */
function privateCopy(
  body: Record<string, unknown>,
  maxObjectBytes: number,
  what: string,
): { object: KubeObject; oddMembers: boolean } {
  const plain = copyPlainJson(body, sharedLength, maxNestingDepth);
  if (plain === nestedTooDeep)
    throw newBadRequest(`${what}: the object is nested more than ${maxNestingDepth} levels deep`);
  // The bound is past the length (about twice it for a typical object, up to six times).
  if (plain !== undefined && plain.maxLength > largeWriteBytes) largeObjects.add(plain.copy as object);
  if (plain !== undefined && plain.maxLength <= maxObjectBytes)
    return { object: plain.copy as KubeObject, oddMembers: plain.oddMembers };
  // A plain copy that may be over the limit is measured, not copied again; anything JSON would
  // convert is copied as JSON says, the shared trees put back.
  const text = JSON.stringify(plain?.copy ?? body, (_key, value) =>
    isSharedFieldsV1(value) ? sharedPlaceholder : value,
  );
  const object = (plain?.copy ?? JSON.parse(text)) as KubeObject;
  if (plain === undefined) restoreShared(object, body);
  // The shared trees were written as their placeholder: counted at their own length instead.
  let length = text.length;
  for (const entry of managedFieldsOf(object))
    if (isSharedFieldsV1(entry.fieldsV1)) length += jsonLength(entry.fieldsV1) - 1;
  if (length > maxObjectBytes) throw requestTooLarge(maxObjectBytes);
  return { object, oddMembers: plain?.oddMembers ?? true };
}

const sharedPlaceholder = 0;

/** Puts the shared FieldsV1 trees `sent` held back into `object`, a JSON copy of it. */
function restoreShared(object: KubeObject, sent: Record<string, unknown>): void {
  const entries = object.metadata?.managedFields as unknown;
  const sentEntries = isJsonObject(sent.metadata) ? sent.metadata.managedFields : undefined;
  if (!Array.isArray(entries) || !Array.isArray(sentEntries)) return;
  entries.forEach((entry, i) => {
    const tree = isJsonObject(sentEntries[i]) ? sentEntries[i].fieldsV1 : undefined;
    if (isJsonObject(entry) && isSharedFieldsV1(tree)) entry.fieldsV1 = tree;
  });
}

function managedFieldsOf(object: KubeObject): Array<Record<string, unknown>> {
  const entries = object.metadata?.managedFields as unknown;
  return Array.isArray(entries) ? entries.filter(isJsonObject) : [];
}

/** The JSON length of a FieldsV1 tree this server shared, which a copy keeps as it is. */
function sharedLength(value: object): number | undefined {
  return isSharedFieldsV1(value) ? jsonLength(value) : undefined;
}

/**
 * Drops null members in place: `value` is the decoder's private copy, so
 * nothing is copied again. The top-level `rawFields` (Go's RawExtension) keep
 * their nulls, as Go keeps their bytes.
 */
export function withoutNulls(value: unknown, rawFields: readonly string[] = []): unknown {
  return dropMembers(value, true, rawFields);
}

function dropMembers(value: unknown, nulls: boolean, rawFields: readonly string[]): unknown {
  // Frozen values are the shared FieldsV1 trees, which hold no null.
  if (typeof value === "object" && value !== null && Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = dropMembers(value[i], nulls, noFields);
    return value;
  }
  if (isJsonObject(value)) {
    for (const key in value) {
      // A "__proto__" member (JSON.parse makes it an own key) would become a prototype in any copy.
      if (key === "__proto__" || (nulls && value[key] === null)) delete value[key];
      else value[key] = dropMembers(value[key], nulls && !rawFields.includes(key), noFields);
    }
  }
  return value;
}

const noFields: readonly string[] = [];
