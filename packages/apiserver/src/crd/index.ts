export { compileRules, escapeProperty, validateCEL } from "./cel.js";
export {
  CustomResourceDefinitionController,
  type CustomResourceDefinitionControllerOptions,
  customResourceDefinitionKind,
  customResourceDefinitions,
} from "./controller.js";
export { definitionForCustomResource, servedVersion, structuralSchemaOf } from "./custom-kind.js";
export {
  type DecodeResult,
  decodeCustomResource,
  type FieldValidation,
  unknownFieldsMessage,
  unknownFieldWarning,
  validateCustomResource,
  validateCustomResourceStatus,
} from "./custom-resource.js";
export { applyDefaults } from "./defaulting.js";
export {
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
  type CustomResourceDefinitionNames,
  type CustomResourceDefinitionSpec,
  type CustomResourceDefinitionStatus,
  type CustomResourceDefinitionVersion,
  defaultCustomResourceDefinition,
  type PrinterColumn,
  validateCustomResourceDefinition,
} from "./definition-validation.js";
export { SchemaErrors, showValue } from "./errors.js";
export { acceptNames, isServable } from "./naming.js";
export { dropNulls, prune } from "./pruning.js";
export type { JSONSchemaProps, ValidationRule } from "./schema.js";
export { validateStructuralSchema } from "./structural.js";
export { validateEmbeddedResources, validateListTypes, validateOpenAPI } from "./validation.js";
export { type CustomResourceValidator, customResourceValidator } from "./validator.js";
