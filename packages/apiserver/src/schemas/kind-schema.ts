import {
  builtinDefinitionsJSON,
  builtinGoEnums,
  builtinKindDefinitionNames,
  supplementaryDefinitions,
} from "./builtin-tables.js";

/**
 * An OpenAPI schema object as the documents carry it: `type`, `properties`,
 * `items`, `additionalProperties`, `$ref` (`#/definitions/<name>`),
 * `description`, `required` and the `x-kubernetes-*` extensions.
 */
export type OpenAPIDefinition = Readonly<Record<string, unknown>>;

/**
 * What the server knows of one kind's OpenAPI schema: the definitions that
 * `/openapi/v3` publishes (so `kubectl explain` can walk them) and the fields
 * a body may hold (so unknown ones are found, pruned and reported as
 * `fieldValidation` says).
 */
export interface KindSchema {
  /** The name of the kind's own definition (`io.k8s.api.apps.v1.Deployment`, `com.example.stable.v1.CronTab`). */
  readonly name: string;
  /** The kind's definition and every definition it references, by name; refs read `#/definitions/<name>`. */
  definitions(): Readonly<Record<string, OpenAPIDefinition>>;
  /**
   * Removes, in place, every field of `object` its schema does not declare
   * and returns their paths (`spec.replicass`, `spec.template.spec.containers[0].imagee`),
   * in the order kube-apiserver's decoder reports them.
   */
  pruneUnknownFields(object: Record<string, unknown>): string[];
}

/**
 * The schema of a built-in kind at the minor the server advertises (1.32),
 * from Kubernetes' own OpenAPI document (see `builtin-openapi.generated.ts`),
 * or undefined for a kind Kubernetes does not define. Nothing is parsed until
 * a schema is first used.
 */
export function builtinKindSchema(group: string, version: string, kind: string): KindSchema | undefined {
  const name = builtinDefinitionName(group, version, kind);
  if (name === undefined) return undefined;
  let schema = builtinSchemas.get(name);
  if (schema === undefined) {
    schema = new DefinitionSchema(name, builtinDefinitions);
    builtinSchemas.set(name, schema);
  }
  return schema;
}

/** Every built-in definition by name, parsed on first call, with the enums of its fields. */
export function builtinDefinitions(): Readonly<Record<string, OpenAPIDefinition>> {
  if (parsedDefinitions === undefined) {
    parsedDefinitions = {
      ...(JSON.parse(builtinDefinitionsJSON) as Record<string, OpenAPIDefinition>),
      ...(supplementaryDefinitions() as Record<string, OpenAPIDefinition>),
    };
    addEnums(parsedDefinitions);
  }
  return parsedDefinitions;
}

/**
 * What kube-openapi adds to a field whose Go type is marked `+enum`: the
 * values as `enum`, and a "Possible enum values" list, each value with its
 * constant's doc, at the end of the description (`kubectl explain` shows both).
 */
function addEnums(definitions: Record<string, OpenAPIDefinition>): void {
  for (const [name, fields] of Object.entries(builtinGoEnums)) {
    const properties = definitions[name]?.properties as Record<string, Record<string, unknown>> | undefined;
    if (properties === undefined) continue;
    for (const [field, values] of Object.entries(fields)) {
      const property = properties[field];
      if (property === undefined || property.type !== "string") continue;
      const lines = values.map(
        ([value, doc]) => ` - \`${JSON.stringify(value)}\`${doc === "" ? "" : ` ${doc}`}`,
      );
      const description = typeof property.description === "string" ? `${property.description}\n\n` : "";
      properties[field] = {
        ...property,
        description: `${description}Possible enum values:\n${lines.join("\n")}`,
        enum: values.map(([value]) => value),
      };
    }
  }
}

let parsedDefinitions: Record<string, OpenAPIDefinition> | undefined;
const builtinSchemas = new Map<string, KindSchema>();

/** A kind's schema over a set of definitions where every `$ref` resolves. */
export class DefinitionSchema implements KindSchema {
  readonly name: string;
  readonly #all: () => Readonly<Record<string, OpenAPIDefinition>>;
  #closure: Readonly<Record<string, OpenAPIDefinition>> | undefined;
  #fields: FieldNode | undefined;

  constructor(name: string, definitions: () => Readonly<Record<string, OpenAPIDefinition>>) {
    this.name = name;
    this.#all = definitions;
  }

  definitions(): Readonly<Record<string, OpenAPIDefinition>> {
    this.#closure ??= referencedDefinitions(this.#all(), this.name);
    return this.#closure;
  }

  pruneUnknownFields(object: Record<string, unknown>): string[] {
    this.#fields ??= compileFields(this.#all(), this.name);
    const unknown: string[] = [];
    pruneFields(object, this.#fields, [], unknown);
    return unknown;
  }
}

/** `name`'s definition and all it references, transitively. */
export function referencedDefinitions(
  all: Readonly<Record<string, OpenAPIDefinition>>,
  name: string,
): Readonly<Record<string, OpenAPIDefinition>> {
  const out: Record<string, OpenAPIDefinition> = {};
  const visit = (definitionName: string) => {
    if (Object.hasOwn(out, definitionName)) return;
    const definition = all[definitionName];
    if (definition === undefined) return;
    out[definitionName] = definition;
    forEachRef(definition, visit);
  };
  visit(name);
  return out;
}

/** Calls `found` with the definition name of every `$ref` in a schema. */
export function forEachRef(schema: unknown, found: (name: string) => void): void {
  if (Array.isArray(schema)) for (const item of schema) forEachRef(item, found);
  else if (schema !== null && typeof schema === "object")
    for (const [key, value] of Object.entries(schema)) {
      // JSONSchemaProps declares a property named "$ref": only a string is a reference.
      if (key === "$ref" && typeof value === "string") found(refName(value));
      else forEachRef(value, found);
    }
}

export function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

/** The definition a schema stands for: its `$ref`, or the one `$ref` of an `allOf` (v3's wrapping). */
export function schemaRef(schema: OpenAPIDefinition): string | undefined {
  if (typeof schema.$ref === "string") return refName(schema.$ref);
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isRecord(allOf[0]) && typeof allOf[0].$ref === "string")
    return refName(allOf[0].$ref);
  return undefined;
}

/** Whether an `x-kubernetes-patch-strategy` merges: `merge` or `merge,retainKeys`. */
export function isMergeStrategy(strategy: unknown): boolean {
  return typeof strategy === "string" && strategy.split(",").includes("merge");
}

/** The name of a built-in kind's definition, by group, version and kind; undefined for others. */
export function builtinDefinitionName(group: string, version: string, kind: string): string | undefined {
  return builtinKindDefinitionNames[`${group}/${version}/${kind}`];
}

/**
 * The fields a value may hold: a struct's declared fields (`null` where
 * anything goes below), a map's value, a list's item. A node with none of
 * them takes any value.
 */
interface FieldNode {
  fields?: Map<string, FieldNode | null>;
  values?: FieldNode;
  items?: FieldNode;
}

function compileFields(all: Readonly<Record<string, OpenAPIDefinition>>, root: string): FieldNode {
  const byName = new Map<string, FieldNode | null>();
  const ofDefinition = (name: string): FieldNode | null => {
    const known = byName.get(name);
    if (known !== undefined) return known;
    const definition = all[name];
    if (definition === undefined) return null;
    // Registered before its fields are compiled, so recursive definitions (JSONSchemaProps) end.
    const node: FieldNode = {};
    byName.set(name, node);
    const compiled = ofSchema(definition);
    if (compiled === null) {
      byName.set(name, null);
      return null;
    }
    Object.assign(node, compiled);
    return node;
  };
  const ofSchema = (schema: OpenAPIDefinition): FieldNode | null => {
    if (schema["x-kubernetes-preserve-unknown-fields"] === true) return null;
    const ref = schema.$ref;
    if (typeof ref === "string") return ofDefinition(refName(ref));
    const allOf = schema.allOf;
    if (Array.isArray(allOf) && allOf.length === 1) return ofSchema(allOf[0] as OpenAPIDefinition);
    const items = schema.items;
    if (isRecord(items)) {
      const item = ofSchema(items);
      return item === null ? null : { items: item };
    }
    const properties = schema.properties;
    if (isRecord(properties)) {
      const fields = new Map<string, FieldNode | null>();
      for (const [key, property] of Object.entries(properties))
        fields.set(key, isRecord(property) ? ofSchema(property) : null);
      return { fields };
    }
    const additional = schema.additionalProperties;
    if (isRecord(additional)) {
      const values = ofSchema(additional);
      return values === null ? null : { values };
    }
    return null;
  };
  return ofDefinition(root) ?? {};
}

/**
 * Removes unknown fields below `value`; `path` holds the segments so far (an
 * index as a number), joined only when one is found. Walked with for…in, not
 * Object.keys: no array per object (a body's objects are plain, with no
 * inherited members; deleting the member being visited is safe).
 */
function pruneFields(value: unknown, node: FieldNode, path: (string | number)[], unknown: string[]): void {
  if (value === null || typeof value !== "object") return;
  if (node.items !== undefined) {
    if (!Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      pruneFields(value[i], node.items, path, unknown);
      path.pop();
    }
    return;
  }
  if (Array.isArray(value)) return;
  const record = value as Record<string, unknown>;
  if (node.values !== undefined) {
    for (const key in record) {
      path.push(key);
      pruneFields(record[key], node.values, path, unknown);
      path.pop();
    }
    return;
  }
  const fields = node.fields;
  if (fields === undefined) return;
  for (const key in record) {
    const child = fields.get(key);
    if (child === undefined) {
      unknown.push(joinPath(path, key));
      delete record[key];
    } else if (child !== null) {
      path.push(key);
      pruneFields(record[key], child, path, unknown);
      path.pop();
    }
  }
}

/** `spec`, `template`, `0`, `x` → `spec.template[0].x`. */
function joinPath(path: readonly (string | number)[], last: string): string {
  let out = "";
  for (const segment of path)
    out += typeof segment === "number" ? `[${segment}]` : out === "" ? segment : `.${segment}`;
  return out === "" ? last : `${out}.${last}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The definition a schema names, by `$ref` or as the first of an `allOf`; undefined for an inline schema. */
export function definitionRefOf(schema: OpenAPIDefinition): string | undefined {
  const direct = schema.$ref;
  if (typeof direct === "string") return direct.replace("#/definitions/", "");
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && isRecord(allOf[0]) && typeof allOf[0].$ref === "string")
    return allOf[0].$ref.replace("#/definitions/", "");
  return undefined;
}
