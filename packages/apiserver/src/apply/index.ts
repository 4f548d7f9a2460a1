export { builtinApplyType, typeFor } from "./builtin-types.js";
export { ApplyConflictError, newApplyConflict } from "./conflicts.js";
export {
  fieldManagerMaxLength,
  forceNotAllowed,
  managerFromUserAgent,
  validateFieldManager,
} from "./field-manager.js";
export {
  compareElements,
  FieldSet,
  fieldElement,
  indexElement,
  keyElement,
  type PathElement,
  parseElement,
  pathString,
  type Scalar,
  valueElement,
} from "./fieldpath.js";
export { decodeFieldsV1, encodeFieldSet, type FieldsV1, isSharedFieldsV1 } from "./fields-v1.js";
export { applyWithLastApplied, lastAppliedAnnotation } from "./last-applied.js";
export {
  type ApplyOptions,
  applyConfiguration,
  trackUpdate,
  type UpdateOptions,
  type VersionConverter,
  type VersionedObject,
} from "./managed-fields.js";
export {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  type FieldManager,
  identity,
  type ManagedFieldsEntry,
  maxUpdateManagers,
} from "./managed-fields-entries.js";
export { merge } from "./merge.js";
export {
  type OpenAPISchema,
  objectMeta,
  type StructType,
  type TypeNode,
  typeFromOpenAPI,
} from "./schema.js";
export { type Comparison, compare, removeFields, TypedValueError, toFieldSet } from "./typed.js";
