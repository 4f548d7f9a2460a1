import { builtinGoFieldOrder } from "../schemas/go-field-order.generated.js";
import { builtinDefinitions, isRecord, type OpenAPIDefinition } from "../schemas/kind-schema.js";

// The order kube-apiserver writes an object's members in: it decodes every
// body into Go structs and encodes them with encoding/json, which writes a
// struct's fields in their declaration order and a map's keys sorted. The
// store puts each built-in object in that order as it writes it, so every
// reader (a GET, a list, a watch, the in-process client) gets the members as
// a real server sends them. Parts already in order are kept as they are (not
// copied); a part out of order is rebuilt, never changed in place (stored
// objects share parts with earlier versions).

/** A member holding a struct (directly, or as list items) or a Go map (keys sorted, values ordered by `plan`). */
interface Child {
  readonly shape: "object" | "array" | "map";
  readonly plan: OrderPlan | undefined;
}

/** How the members of one definition's objects are ordered, and which members hold ordered parts. */
interface OrderPlan {
  /** Each field's place in the Go struct. */
  readonly place: Map<string, number>;
  readonly fields: readonly string[];
  readonly children: Map<string, Child>;
}

const plans = new Map<string, OrderPlan | null>();

/** A function that returns a built-in kind's object in Go's member order, or undefined without a plan for it. */
export function goOrderer(definitionName: string): ((object: object) => object) | undefined {
  const plan = planOf(definitionName);
  if (plan === undefined) return undefined;
  return (object) => orderStruct(plan, object as Record<string, unknown>);
}

function planOf(definitionName: string): OrderPlan | undefined {
  const known = plans.get(definitionName);
  if (known !== undefined) return known ?? undefined;
  const fields = builtinGoFieldOrder[definitionName];
  const properties = builtinDefinitions()[definitionName]?.properties;
  if (fields === undefined || !isRecord(properties)) {
    plans.set(definitionName, null);
    return undefined;
  }
  const plan: OrderPlan = { place: new Map(fields.map((f, i) => [f, i])), fields, children: new Map() };
  // Registered before its children: a definition that holds itself (JSONSchemaProps) meets its own plan.
  plans.set(definitionName, plan);
  for (const [field, property] of Object.entries(properties)) {
    const child = childOf(property as OpenAPIDefinition);
    if (child !== undefined) plan.children.set(field, child);
  }
  return plan;
}

function childOf(property: OpenAPIDefinition): Child | undefined {
  const ref = refOf(property);
  if (ref !== undefined) {
    const plan = planOf(ref);
    return plan === undefined ? undefined : { shape: "object", plan };
  }
  if (isRecord(property.items)) {
    const item = refOf(property.items as OpenAPIDefinition);
    const plan = item === undefined ? undefined : planOf(item);
    return plan === undefined ? undefined : { shape: "array", plan };
  }
  if (property.additionalProperties !== undefined && property.additionalProperties !== false) {
    const values = isRecord(property.additionalProperties)
      ? refOf(property.additionalProperties as OpenAPIDefinition)
      : undefined;
    return { shape: "map", plan: values === undefined ? undefined : planOf(values) };
  }
  return undefined;
}

function refOf(schema: OpenAPIDefinition): string | undefined {
  const direct = schema.$ref;
  if (typeof direct === "string") return direct.replace("#/definitions/", "");
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && isRecord(allOf[0]) && typeof allOf[0].$ref === "string")
    return allOf[0].$ref.replace("#/definitions/", "");
  return undefined;
}

/** `value` with its members in the struct's order and its parts ordered; `value` itself when it already is. */
function orderStruct(plan: OrderPlan, value: Record<string, unknown>): Record<string, unknown> {
  let inOrder = true;
  let last = -1;
  let changed: Map<string, unknown> | undefined;
  for (const key in value) {
    const place = plan.place.get(key) ?? Number.MAX_SAFE_INTEGER;
    if (place < last) inOrder = false;
    last = place;
    const child = plan.children.get(key);
    if (child === undefined) continue;
    const member = value[key];
    const ordered = orderChild(child, member);
    if (ordered !== member) (changed ??= new Map()).set(key, ordered);
  }
  if (inOrder && changed === undefined) return value;
  const out: Record<string, unknown> = {};
  const member = (key: string) => (changed?.has(key) ? changed.get(key) : value[key]);
  for (const field of plan.fields) if (Object.hasOwn(value, field)) setMember(out, field, member(field));
  // Members the struct does not declare (none, once decoded) keep their order, after the rest.
  for (const key in value) if (!plan.place.has(key)) setMember(out, key, member(key));
  return out;
}

function orderChild(child: Child, member: unknown): unknown {
  if (typeof member !== "object" || member === null) return member;
  if (child.shape === "array") {
    if (!Array.isArray(member)) return member;
    let copy: unknown[] | undefined;
    for (let i = 0; i < member.length; i++) {
      const item = member[i];
      const ordered = isRecord(item) ? orderStruct(child.plan!, item) : item;
      if (ordered !== item) (copy ??= [...member])[i] = ordered;
    }
    return copy ?? member;
  }
  if (Array.isArray(member)) return member;
  if (child.shape === "object") return orderStruct(child.plan!, member as Record<string, unknown>);
  return orderMap(child.plan, member as Record<string, unknown>);
}

/** A Go map's members: keys sorted (encoding/json sorts them), values ordered by `plan`. */
function orderMap(plan: OrderPlan | undefined, value: Record<string, unknown>): Record<string, unknown> {
  let inOrder = true;
  let previous: string | undefined;
  let changed: Map<string, unknown> | undefined;
  for (const key in value) {
    if (previous !== undefined && key < previous) inOrder = false;
    previous = key;
    if (plan === undefined) continue;
    const entry = value[key];
    const ordered = isRecord(entry) ? orderStruct(plan, entry) : entry;
    if (ordered !== entry) (changed ??= new Map()).set(key, ordered);
  }
  if (inOrder && changed === undefined) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort())
    setMember(out, key, changed?.has(key) ? changed.get(key) : value[key]);
  return out;
}

/** `out[key] = member`, as an own member even for `__proto__`. */
function setMember(out: Record<string, unknown>, key: string, member: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  else out[key] = member;
}
