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
  ApplyConflictError,
  type ApplyOptions,
  applyConfiguration,
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  type FieldManager,
  fieldManagerMaxLength,
  forceNotAllowed,
  identity,
  type ManagedFieldsEntry,
  managerFromUserAgent,
  maxUpdateManagers,
  newApplyConflict,
  trackUpdate,
  type UpdateOptions,
  validateFieldManager,
} from "./managed-fields.js";
export { merge } from "./merge.js";
export {
  builtinTypes,
  type OpenAPISchema,
  objectMeta,
  type StructType,
  type TypeNode,
  typeFor,
  typeFromOpenAPI,
} from "./schema.js";
export { type Comparison, compare, removeFields, TypedValueError, toFieldSet } from "./typed.js";
