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
  /** The fields filled in every phase but "afterValidation", and what each gets when unset. */
  readonly early: readonly Empties[];
  /** The nil slices, maps and pointers, filled in every phase but "beforeValidation". */
  readonly late: readonly Empties[];
  /** The set fields to descend into: the plan of what they hold, directly, as array items or as map values. */
  readonly children: ReadonlyMap<string, readonly [plan: Plan, shape: "object" | "array" | "map"]>;
}

/** A field and what it gets when unset: a zero scalar, null, or `struct` (an object filled in turn). */
type Empties = readonly [field: string, empty: Empty];

const plans = new Map<string, Plan | null>();
const struct = Symbol("struct");
type Empty = string | number | boolean | null | typeof struct;

/**
 * The function that fills the unset parts of a built-in kind's objects in
 * place, or undefined when the kind has none (or is not built in).
 */
export function emptyValueFiller(definitionName: string): EmptyValueFiller | undefined {
  const plan = planOf(definitionName, new Map());
  if (plan === null) return undefined;
  return (value, phase = "all") => fill(plan, value, phase);
}

function fill(plan: Plan, value: Record<string, unknown>, phase: FillPhase): void {
  if (phase !== "afterValidation") fillEmpties(plan.early, value);
  if (phase !== "beforeValidation") fillEmpties(plan.late, value);
  // Objects set fewer fields than their schema declares: walk the set ones.
  for (const field in value) {
    const child = plan.children.get(field);
    if (child === undefined) continue;
    const item = value[field];
    if (typeof item !== "object" || item === null) continue;
    const [childPlan, shape] = child;
    if (shape === "array") {
      if (Array.isArray(item))
        for (const element of item) if (isRecord(element)) fill(childPlan, element, phase);
    } else if (Array.isArray(item)) {
      // A value of the wrong shape was refused by the decoder; nothing to fill.
    } else if (shape === "object") {
      fill(childPlan, item as Record<string, unknown>, phase);
    } else {
      for (const key in item) {
        const entry = (item as Record<string, unknown>)[key];
        if (isRecord(entry)) fill(childPlan, entry, phase);
      }
    }
  }
}

function fillEmpties(empties: readonly Empties[], value: Record<string, unknown>): void {
  for (let i = 0; i < empties.length; i++) {
    const [field, empty] = empties[i]!;
    const current = value[field];
    if (current === undefined || (current === null && empty !== null))
      value[field] = empty === struct ? {} : empty;
  }
}

/**
 * The plan of a definition, made once; null when neither it nor anything it
 * holds has an unset part to fill. `visiting` breaks reference cycles
 * (JSONSchemaProps holds itself): a definition being planned counts as
 * having something (its plan, filled in once made), which at worst costs a
 * descent that adds nothing.
 */
function planOf(definitionName: string, visiting: Map<string, Plan>): Plan | null {
  const known = plans.get(definitionName);
  if (known !== undefined) return known;
  const pending = visiting.get(definitionName);
  if (pending !== undefined) return pending;
  const definition = builtinDefinitions()[definitionName];
  const properties = definition?.properties;
  if (!isRecord(properties)) {
    plans.set(definitionName, null);
    return null;
  }
  const emptyFields = builtinGoEmptyValues[definitionName] ?? {};
  const goTypes = builtinGoFieldTypes[definitionName] ?? {};
  const early: Empties[] = [];
  const late: Empties[] = [];
  const children = new Map<string, readonly [Plan, "object" | "array" | "map"]>();
  const plan: Plan = { early, late, children };
  visiting.set(definitionName, plan);
  for (const [field, property] of Object.entries(properties)) {
    const empty = emptyFields[field];
    if (empty !== undefined) {
      const value: Empty = empty.startsWith("#") ? struct : JSON.parse(empty);
      const time = goTypes[field] === "v1.Time" || goTypes[field] === "v1.MicroTime";
      (value === null && !time ? late : early).push([field, value]);
    }
    const child = childOf(property as OpenAPIDefinition);
    const childPlan = child === undefined ? null : planOf(child.definition, visiting);
    if (child !== undefined && childPlan !== null) children.set(field, [childPlan, child.shape]);
  }
  // A struct added where unset is filled in turn, so its own plan is a child too.
  for (const [field, empty] of Object.entries(emptyFields)) {
    if (!empty.startsWith("#") || children.has(field)) continue;
    const childPlan = planOf(empty.slice(1), visiting);
    if (childPlan !== null) children.set(field, [childPlan, "object"]);
  }
  visiting.delete(definitionName);
  const made = early.length === 0 && late.length === 0 && children.size === 0 ? null : plan;
  plans.set(definitionName, made);
  return made;
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
