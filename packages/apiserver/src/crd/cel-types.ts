import { Environment } from "@marcbachmann/cel-js";
import { celGoIssue } from "./cel-issues.js";
import { registerKubernetesLibraries } from "./cel-library.js";
import { type FieldsOf, presenceIssue } from "./cel-presence.js";
import { escapeProperty } from "./cel-values.js";
import { additionalSchema, isObject, itemSchema, type JSONSchemaProps } from "./schema.js";

// The CEL types of a structural schema's nodes, as apiextensions declares
// them (`SchemaDeclType`), for type-checking rules and policies:
// integer → int, number → double, boolean → bool, string → string (bytes,
// duration or timestamp by format), arrays → list(T), additionalProperties →
// map(string, T), objects → an object type with their exposed properties
// (escaped names; a resource root also shows apiVersion, kind, metadata.name
// and metadata.generateName), int-or-string → dyn. A node with no type is not
// exposed: a property of that kind is no field, and a list or map of it none.

const scalarTypes: Readonly<Record<string, string>> = {
  integer: "int",
  number: "double",
  boolean: "bool",
};

const stringFormats: Readonly<Record<string, string>> = {
  byte: "bytes",
  duration: "google.protobuf.Duration",
  date: "google.protobuf.Timestamp",
  "date-time": "google.protobuf.Timestamp",
};

/** The fields a resource root always shows to CEL, declared or not. */
const resourceMeta: JSONSchemaProps = {
  type: "object",
  properties: { name: { type: "string" }, generateName: { type: "string" } },
};

/**
 * The declared types of one schema, registered into a CEL environment: each
 * object node an object type named by its path (`Self_spec_template`: a
 * dotted name would read as a field of `Self`), with
 * `==` (and `!=`) between two values of it and with null, as CEL compares
 * messages.
 */
export class SchemaCelTypes {
  readonly #types = new Map<JSONSchemaProps, string | null>();
  readonly #objects: { name: string; fields: Record<string, string> }[] = [];
  readonly #fieldsByName = new Map<string, Record<string, string>>();
  readonly #names = new Set<string>();
  readonly #declaring = new Set<string>();
  readonly #root: JSONSchemaProps;

  /** `root`: a resource's schema (its root shows apiVersion, kind and metadata), or any other node. */
  constructor(
    root: JSONSchemaProps,
    readonly rootName = "Self",
    resourceRoot = true,
  ) {
    this.#root = root;
    this.#declare(root, rootName, resourceRoot);
  }

  /** The CEL type of a node of this schema (`dyn` where upstream exposes none). */
  typeOf(node: JSONSchemaProps): string {
    return this.#types.get(node) ?? "dyn";
  }

  /** The fields of one of this schema's object types, by its name; undefined for any other type. */
  fieldsOf(type: string): Readonly<Record<string, string>> | undefined {
    return this.#fieldsByName.get(type);
  }

  /** The root's type. */
  get rootType(): string {
    return this.typeOf(this.#root);
  }

  /** Registers every object type of the schema into `environment` (not yet frozen by a clone). */
  register(environment: Environment): Environment {
    for (const { name, fields } of this.#objects) environment.registerType(name, { fields });
    // For checking only: programs of a checking environment never run.
    // Each also compares with null, as a message does (`oldObject == null`); one direction registers both.
    for (const { name } of this.#objects) {
      environment.registerOperator(`${name} == ${name}`, () => false);
      environment.registerOperator(`${name} == null`, () => false);
    }
    return environment;
  }

  #declare(node: JSONSchemaProps, name: string, resource: boolean): string | null {
    const known = this.#types.get(node);
    if (known !== undefined) return known;
    const type = this.#typeOf(node, name, resource);
    this.#types.set(node, type);
    return type;
  }

  #typeOf(node: JSONSchemaProps, name: string, resource: boolean): string | null {
    if (node["x-kubernetes-int-or-string"] === true) return "dyn";
    switch (node.type) {
      case "integer":
      case "number":
      case "boolean":
        return scalarTypes[node.type]!;
      case "string":
        return stringFormats[node.format ?? ""] ?? "string";
      case "array": {
        const items = itemSchema(node);
        if (items === undefined) return null;
        const item = this.#declare(items, `${name}_items`, items["x-kubernetes-embedded-resource"] === true);
        return item === null ? null : `list<${item}>`;
      }
      case "object":
        return this.#objectType(node, name, resource);
      default:
        return null;
    }
  }

  #objectType(node: JSONSchemaProps, name: string, resource: boolean): string | null {
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) {
      const values = additionalSchema(node);
      if (values === undefined) return null;
      const value = this.#declare(
        values,
        `${name}_values`,
        values["x-kubernetes-embedded-resource"] === true,
      );
      return value === null ? null : `map<string, ${value}>`;
    }
    const properties: Record<string, JSONSchemaProps> = { ...node.properties };
    // A resource's root as declared if it declares all four as strings, else with these four only.
    if (resource && !declaresTypeAndName(properties)) {
      properties.metadata = resourceMeta;
      properties.apiVersion = { type: "string" };
      properties.kind = { type: "string" };
    }
    const typeName = this.#uniqueName(name);
    // Known before its fields are: a schema that holds itself (through a resolved reference) ends here,
    // and the field that leads back to it is dyn (a type is registered after the types of its fields).
    this.#types.set(node, typeName);
    this.#declaring.add(typeName);
    const fields: Record<string, string> = {};
    for (const [property, schema] of Object.entries(properties)) {
      const escaped = escapeProperty(property);
      if (escaped === undefined) continue;
      const type = this.#declare(
        schema,
        `${typeName}_${escaped}`,
        schema === resourceMeta ? false : schema["x-kubernetes-embedded-resource"] === true,
      );
      if (type !== null) fields[escaped] = this.#refersBack(type) ? "dyn" : type;
    }
    this.#declaring.delete(typeName);
    this.#objects.push({ name: typeName, fields });
    this.#fieldsByName.set(typeName, fields);
    return typeName;
  }

  /** Whether `type` names (or holds) an object type whose fields are still being declared. */
  #refersBack(type: string): boolean {
    for (const name of this.#declaring)
      if (type === name || type.includes(`<${name}>`) || type.endsWith(` ${name}>`)) return true;
    return false;
  }

  /** A name for a new object type: its path, numbered if two paths escape alike. */
  #uniqueName(name: string): string {
    let candidate = name;
    for (let n = 2; this.#names.has(candidate); n++) candidate = `${name}${n}`;
    this.#names.add(candidate);
    return candidate;
  }
}

function declaresTypeAndName(properties: Record<string, JSONSchemaProps>): boolean {
  const meta = properties.metadata;
  return (
    properties.kind?.type === "string" &&
    properties.apiVersion?.type === "string" &&
    isObject(meta) &&
    meta.type === "object" &&
    meta.properties?.name?.type === "string" &&
    meta.properties?.generateName?.type === "string"
  );
}

/** What type-checking an expression found: its type, or cel-go's text of why it does not check. */
export type CheckOutcome = { type: string } | { issue: string };

let checkingBase: Environment | undefined;

/**
 * The environment every checking environment is cloned from: the libraries
 * and options rules run with. A clone freezes it, so it is built once.
 */
export function checkingEnvironment(): Environment {
  checkingBase ??= registerKubernetesLibraries(
    new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true }),
  );
  return checkingBase;
}

/** Type-checks `expression` in `environment`; with `fieldsOf`, also the fields its `has()` calls test. */
export function checkExpression(
  environment: Environment,
  expression: string,
  fieldsOf?: FieldsOf,
): CheckOutcome {
  try {
    const parsed = environment.parse(expression);
    const checked = parsed.check();
    if (!checked.valid)
      return { issue: celGoIssue(checked.error ?? new Error("type check failed"), expression) };
    const presence = fieldsOf === undefined ? undefined : presenceIssue(parsed.ast, fieldsOf, expression);
    return presence === undefined ? { type: checked.type ?? "dyn" } : { issue: presence };
  } catch (error) {
    return { issue: celGoIssue(error instanceof Error ? error : new Error(String(error)), expression) };
  }
}

/**
 * Checks a CRD version's rules against its schema, as apiextensions compiles
 * them: at each node, `self` (and `oldSelf`, or `optional(T)` with
 * `optionalOldSelf`) has the node's declared type.
 */
export class RuleChecker {
  readonly #types: SchemaCelTypes;
  readonly #environment: Environment;
  readonly #atNode = new Map<string, Environment>();

  constructor(root: JSONSchemaProps) {
    this.#types = new SchemaCelTypes(root);
    this.#environment = this.#types.register(checkingEnvironment().clone());
  }

  check(expression: string, node: JSONSchemaProps, optionalOldSelf: boolean): CheckOutcome {
    const type = this.#types.typeOf(node);
    const key = `${optionalOldSelf}:${type}`;
    let environment = this.#atNode.get(key);
    if (environment === undefined) {
      try {
        environment = this.#environment
          .clone()
          .registerVariable("self", type)
          .registerVariable("oldSelf", optionalOldSelf ? `optional<${type}>` : type);
      } catch {
        // No verdict of the checker's: the rule is judged as it runs, with `self` dyn.
        return { type: "dyn" };
      }
      this.#atNode.set(key, environment);
    }
    return checkExpression(environment, expression, (name) => this.#types.fieldsOf(name));
  }
}
