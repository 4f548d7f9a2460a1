export type { Static, TSchema } from "@sinclair/typebox";
export { builderFor, buildersForDefinitions } from "./builder.js";
export { type CommandIO, definitionsIn, runCrdCommand } from "./command.js";
export {
  type CustomObject,
  type CustomResource,
  type CustomResourceColumnDefinition,
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  type CustomResourceOf,
  type CustomResourceOptions,
  defineCustomResource,
  type PrinterColumn,
  pluralize,
  type ScaleSubresource,
  type VersionDefinition,
} from "./define.js";
export {
  type EmbeddedObject,
  type JSONSchemaProps,
  type KubernetesOptions,
  k,
  NonStructuralSchemaError,
  toStructuralSchema,
  type ValidationRule,
} from "./schema.js";
export { typeOf, typesForDefinitions } from "./typegen.js";
