// The tables of the built-in kinds' schemas and Go types: the generated ones, and those they do not
// hold (storage.k8s.io/v1's CSI kinds, kube-aggregator's APIService).

import {
  apiServiceDefinitions,
  apiServiceGoEmptyValues,
  apiServiceGoFieldTypes,
  apiServiceGoNamedTypes,
  apiServiceKindDefinitionNames,
} from "./api-services.generated.js";
import {
  builtinGoEmptyValues as generatedEmptyValues,
  builtinGoFieldTypes as generatedFieldTypes,
  builtinGoNamedTypes as generatedNamedTypes,
} from "./builtin-go-types.generated.js";
import { builtinKindDefinitionNames as generatedKindNames } from "./builtin-openapi.generated.js";
import {
  csiDefinitions,
  csiGoEmptyValues,
  csiGoFieldTypes,
  csiGoNamedTypes,
  csiKindDefinitionNames,
} from "./storage-csi.generated.js";

export { builtinGoEnums } from "./builtin-go-types.generated.js";
export { builtinDefinitionsJSON } from "./builtin-openapi.generated.js";

/** group/version/Kind (group "" for core) → the name of its definition. */
export const builtinKindDefinitionNames: Readonly<Record<string, string>> = {
  ...generatedKindNames,
  ...csiKindDefinitionNames,
  ...apiServiceKindDefinitionNames,
};

/** Definition name → JSON field → the field's Go type, as reflect prints it. */
export const builtinGoFieldTypes: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  ...generatedFieldTypes,
  ...csiGoFieldTypes,
  ...apiServiceGoFieldTypes,
};

/** Named Go type → its underlying type. */
export const builtinGoNamedTypes: Readonly<Record<string, string>> = {
  ...generatedNamedTypes,
  ...csiGoNamedTypes,
  ...apiServiceGoNamedTypes,
};

/** Definition name → JSON field → what Go's encoding/json writes when the field is unset. */
export const builtinGoEmptyValues: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  ...generatedEmptyValues,
  ...csiGoEmptyValues,
  ...apiServiceGoEmptyValues,
};

/** The definitions the generated document lacks, to add to it once parsed (a fresh copy each call). */
export function supplementaryDefinitions(): Record<string, unknown> {
  return structuredClone({ ...csiDefinitions, ...apiServiceDefinitions }) as Record<string, unknown>;
}
