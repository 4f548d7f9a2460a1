// The tables of the built-in kinds' schemas and Go types: the generated ones, and those they do not
// hold (storage.k8s.io/v1's CSI kinds, kube-aggregator's APIService), each a module of the same shape.

import * as apiServices from "./api-services.generated.js";
import * as generatedGo from "./builtin-go-types.generated.js";
import * as generatedOpenAPI from "./builtin-openapi.generated.js";
import * as storageCSI from "./storage-csi.generated.js";

export { builtinGoEnums } from "./builtin-go-types.generated.js";
export { builtinDefinitionsJSON } from "./builtin-openapi.generated.js";

const supplements = [storageCSI, apiServices];

type Table<T> = Readonly<Record<string, T>>;

/** The generated table with every supplement's entries over it. */
function merged<T>(
  generated: Table<T>,
  of: (supplement: (typeof supplements)[number]) => Table<T>,
): Table<T> {
  return Object.assign({}, generated, ...supplements.map(of));
}

/** group/version/Kind (group "" for core) → the name of its definition. */
export const builtinKindDefinitionNames = merged(
  generatedOpenAPI.builtinKindDefinitionNames,
  (s) => s.kindDefinitionNames,
);

/** Definition name → JSON field → the field's Go type, as reflect prints it. */
export const builtinGoFieldTypes = merged(generatedGo.builtinGoFieldTypes, (s) => s.goFieldTypes);

/** Named Go type → its underlying type. */
export const builtinGoNamedTypes = merged(generatedGo.builtinGoNamedTypes, (s) => s.goNamedTypes);

/** Definition name → JSON field → what Go's encoding/json writes when the field is unset. */
export const builtinGoEmptyValues = merged(generatedGo.builtinGoEmptyValues, (s) => s.goEmptyValues);

/** The definitions the generated document lacks, to add to it once parsed (a fresh copy each call). */
export function supplementaryDefinitions(): Record<string, unknown> {
  return structuredClone(Object.assign({}, ...supplements.map((s) => s.definitions))) as Record<
    string,
    unknown
  >;
}
