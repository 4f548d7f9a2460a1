import { builtinGoEmptyValues, builtinGoFieldTypes } from "../schemas/builtin-tables.js";
import {
  builtinDefinitions,
  definitionRefOf,
  isRecord,
  type OpenAPIDefinition,
} from "../schemas/kind-schema.js";

// The parts of a built-in object that kube-apiserver always writes, because
// it decodes every body into Go structs and encodes them again with
// encoding/json: a struct-valued field is written even when unset
// (`status: {}`, `status: {loadBalancer: {}}`), a scalar without `omitempty`
// as its zero value (a ReplicationController's `status.replicas: 0`, an
// Event's `reportingComponent: ""`), and as null a nil slice, map or pointer
// without `omitempty` (an empty EndpointSlice's `endpoints: null`, a Role's
// `rules: null`) and a zero metav1.Time held by value, whose MarshalJSON
// writes null whatever the tag says (a pod template's `creationTimestamp:
// null`, a pod condition's `lastProbeTime: null`). The store fills them in on
// every write, so every reader sees the object kube-apiserver would hand out.
// The nil slices, maps and pointers are filled only after validation, which
// reads them as absent (a Deployment's missing selector is "Required", not a
// null to read through); the rest also before, so that the strategy compares
// a request with the stored object part for part.

/**
 * Which parts a fill adds: all of them, all but the nil slices, maps and pointers (before
 * validation), or only those (after validation, on an object filled before it).
 */
export type FillPhase = "all" | "beforeValidation" | "afterValidation";

/** Fills `value` in place with the parts of `phase`. */
export type EmptyValueFiller = (value: Record<string, unknown>, phase?: FillPhase) => void;

/** One definition's plan: what to add where unset, and which set fields to descend into. */
interface Plan {
  /**
   * A field, what it gets when unset (a zero scalar, null, or `struct`: an object filled in turn),
   * and whether it is a nil slice, map or pointer (filled after validation only).
   */
  readonly empties: readonly (readonly [field: string, empty: Empty, nil: boolean])[];
  /** The set fields to descend into: the definition they hold, directly, as array items or as map values. */
  readonly children: ReadonlyMap<string, readonly [definition: string, shape: "object" | "array" | "map"]>;
}

const plans = new Map<string, Plan | null>();
const struct = Symbol("struct");
type Empty = string | number | boolean | null | typeof struct;

/**
 * The function that fills the unset parts of a built-in kind's objects in
 * place, or undefined when the kind has none (or is not built in).
 */
export function emptyValueFiller(definitionName: string): EmptyValueFiller | undefined {
  if (planOf(definitionName, new Set()) === null) return undefined;
  return (value, phase = "all") => fill(definitionName, value, phase);
}

function fill(definitionName: string, value: Record<string, unknown>, phase: FillPhase): void {
  const plan = plans.get(definitionName);
  if (plan === null || plan === undefined) return;
  for (const [field, empty, nil] of plan.empties) {
    if (nil ? phase === "beforeValidation" : phase === "afterValidation") continue;
    const current = value[field];
    if (current === undefined || (current === null && empty !== null))
      value[field] = empty === struct ? {} : empty;
  }
  // Objects set fewer fields than their schema declares: walk the set ones.
  for (const field in value) {
    const child = plan.children.get(field);
    if (child === undefined) continue;
    const item = value[field];
    if (typeof item !== "object" || item === null) continue;
    const [definition, shape] = child;
    if (shape === "array") {
      if (Array.isArray(item))
        for (const element of item) if (isRecord(element)) fill(definition, element, phase);
    } else if (Array.isArray(item)) {
      // A value of the wrong shape was refused by the decoder; nothing to fill.
    } else if (shape === "object") {
      fill(definition, item as Record<string, unknown>, phase);
    } else {
      for (const key in item) {
        const entry = (item as Record<string, unknown>)[key];
        if (isRecord(entry)) fill(definition, entry, phase);
      }
    }
  }
}

/**
 * The plan of a definition, made once; null when neither it nor anything it
 * holds has an unset part to fill. `visiting` breaks reference cycles
 * (JSONSchemaProps holds itself): a definition being planned counts as
 * having something, which at worst costs a descent that adds nothing.
 */
function planOf(definitionName: string, visiting: Set<string>): Plan | null {
  const known = plans.get(definitionName);
  if (known !== undefined) return known;
  if (visiting.has(definitionName)) return { empties: [], children: new Map() };
  const definition = builtinDefinitions()[definitionName];
  const properties = definition?.properties;
  if (!isRecord(properties)) {
    plans.set(definitionName, null);
    return null;
  }
  visiting.add(definitionName);
  const emptyFields = builtinGoEmptyValues[definitionName] ?? {};
  const goTypes = builtinGoFieldTypes[definitionName] ?? {};
  const empties: [string, Empty, boolean][] = [];
  const children = new Map<string, readonly [string, "object" | "array" | "map"]>();
  for (const [field, property] of Object.entries(properties)) {
    const empty = emptyFields[field];
    if (empty !== undefined) {
      const value: Empty = empty.startsWith("#") ? struct : JSON.parse(empty);
      const time = goTypes[field] === "v1.Time" || goTypes[field] === "v1.MicroTime";
      empties.push([field, value, value === null && !time]);
    }
    const child = childOf(property as OpenAPIDefinition);
    if (child !== undefined && planOf(child.definition, visiting) !== null)
      children.set(field, [child.definition, child.shape]);
  }
  visiting.delete(definitionName);
  // A struct added where unset is filled in turn, so its own plan is a child too.
  for (const [field, empty] of Object.entries(emptyFields))
    if (empty.startsWith("#") && !children.has(field) && planOf(empty.slice(1), visiting) !== null)
      children.set(field, [empty.slice(1), "object"]);
  const plan = empties.length === 0 && children.size === 0 ? null : { empties, children };
  plans.set(definitionName, plan);
  return plan;
}

/** The definition a property holds directly, as array items, or as map values. */
function childOf(
  property: OpenAPIDefinition,
): { definition: string; shape: "object" | "array" | "map" } | undefined {
  const ref = definitionRefOf(property);
  if (ref !== undefined) return { definition: ref, shape: "object" };
  const items = property.items;
  if (isRecord(items)) {
    const item = definitionRefOf(items as OpenAPIDefinition);
    if (item !== undefined) return { definition: item, shape: "array" };
  }
  const values = property.additionalProperties;
  if (isRecord(values)) {
    const value = definitionRefOf(values as OpenAPIDefinition);
    if (value !== undefined) return { definition: value, shape: "map" };
  }
  return undefined;
}
