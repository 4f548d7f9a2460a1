import {
  apiVersionOf,
  groupKindOf,
  type KubeObject,
  newBadRequest,
  newInvalid,
  newRequestEntityTooLarge,
  type ResourceDescriptor,
  StatusError,
} from "@reconcile/api";
import { type FieldsV1, isSharedFieldsV1 } from "../../apply/index.js";
import { isJsonObject, jsonLength } from "../../json.js";
import type { ResourceDefinition } from "../../kinds/definition.js";
import { checkNesting } from "../../limits.js";
import { FieldErrors } from "../field-errors.js";
import { type FieldValidation, reportFieldProblems } from "../field-validation.js";
import { validateLabels } from "../meta-validation.js";
import { objectMetaSchema, typeProblem } from "../schema.js";

/** How a body came: written whole, the result of a patch, or an apply configuration. */
export type DecodeVerb = "write" | "patch" | "apply";

/**
 * The body as an object of this kind: a private copy (JSON round trip, which also
 * measures it), kind and apiVersion checked and filled, field types checked, fields
 * the schema does not declare dropped and reported as `fieldValidation` says.
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
  // Before anything recurses into it: nothing accepted may be too deep for a later request.
  checkNesting(body, `${what}: the object`);
  // FieldsV1 trees this server shared with the reader come back as they went out: they stay shared.
  const { copyable, sharedTrees, sharedLength } = withSharedFieldsApart(body);
  let text: string;
  try {
    text = JSON.stringify(copyable);
  } catch (error) {
    throw newBadRequest(`${what}: the body is not JSON: ${(error as Error).message}`);
  }
  if (text.length + sharedLength > maxObjectBytes) throw requestTooLarge(maxObjectBytes);
  const object = JSON.parse(text) as KubeObject;
  if (sharedTrees !== undefined) {
    const entries = object.metadata!.managedFields as Array<Record<string, unknown>>;
    for (const [index, tree] of sharedTrees) entries[index]!.fieldsV1 = tree;
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
  const problem =
    typeProblem(object.metadata, objectMetaSchema, "metadata") ?? typeProblem(object, definition.schema, "");
  if (problem) throw newBadRequest(`${what}: ${problem}`);
  const unknown = definition.openAPI?.pruneUnknownFields(object as Record<string, unknown>) ?? [];
  if (verb === "apply" && unknown.length > 0) {
    // Server-side apply types the configuration by the schema whatever the directive (SMD's typed patch).
    // A plain error in kube-apiserver, so its Status has no reason.
    throw new StatusError({
      code: 500,
      message: `failed to create typed patch object (${qualifiedName}; ${apiVersion}, Kind=${resource.kind}): ${unknown.map((path) => `.${path}: field not declared in schema`).join(", ")}`,
    });
  }
  reportFieldProblems(fieldValidation, unknown, verb === "patch" ? { what, patched: text } : { what });
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
  return withoutNulls({
    apiVersion,
    kind: resource.kind,
    ...object,
    metadata: object.metadata ?? {},
  }) as KubeObject;
}

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
 * The body to copy, with the shared FieldsV1 trees of its managedFields left
 * out (by entry index), and their JSON length.
 */
function withSharedFieldsApart(body: Record<string, unknown>): {
  copyable: Record<string, unknown>;
  sharedTrees: Map<number, FieldsV1> | undefined;
  sharedLength: number;
} {
  const metadata = body.metadata;
  if (!isJsonObject(metadata) || !Array.isArray(metadata.managedFields))
    return { copyable: body, sharedTrees: undefined, sharedLength: 0 };
  let sharedTrees: Map<number, FieldsV1> | undefined;
  let sharedLength = 0;
  const entries = (metadata.managedFields as unknown[]).map((entry, index) => {
    if (!isJsonObject(entry) || !isSharedFieldsV1(entry.fieldsV1)) return entry;
    sharedTrees ??= new Map();
    sharedTrees.set(index, entry.fieldsV1);
    sharedLength += jsonLength(entry.fieldsV1);
    return { ...entry, fieldsV1: {} };
  });
  if (sharedTrees === undefined) return { copyable: body, sharedTrees, sharedLength };
  return {
    copyable: { ...body, metadata: { ...metadata, managedFields: entries } },
    sharedTrees,
    sharedLength,
  };
}

/** Drops null members in place: `value` is the decoder's private copy, so nothing is copied again. */
function withoutNulls(value: unknown): unknown {
  // Frozen values are the shared FieldsV1 trees, which hold no null.
  if (typeof value === "object" && value !== null && Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = withoutNulls(value[i]);
    return value;
  }
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      // A "__proto__" member (JSON.parse makes it an own key) would become a prototype in any copy.
      if (value[key] === null || key === "__proto__") delete value[key];
      else value[key] = withoutNulls(value[key]);
    }
  }
  return value;
}
