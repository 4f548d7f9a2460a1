import type { ResourceDescriptor } from "@reconcile/api";
import { builtinGoFieldOrder } from "../schemas/go-field-order.generated.js";
import {
  builtinDefinitionName,
  builtinDefinitions,
  definitionRefOf,
  isRecord,
  type OpenAPIDefinition,
} from "../schemas/kind-schema.js";

// The order kube-apiserver writes an object's members in: it decodes every
// body into Go structs and encodes them with encoding/json, which writes a
// struct's fields in their declaration order and a map's keys sorted. The
// HTTP layer puts each built-in object it sends in that order (a GET, a
// write's answer, a list's items, a watch's events), so a client reading the
// bytes sees what a real server sends; objects are stored, and handed to
// in-process clients, as they were written, which costs writes nothing.
// Parts already in order are kept as they are (not copied); a part out of
// order is rebuilt, never changed in place (stored objects are shared). A
// custom resource is kept as unstructured JSON and encoded from Go maps, so
// its members at every level go out with their keys sorted.

/** A member holding a struct (directly, or as list items) or a Go map (keys sorted, values ordered by `plan`). */
interface Child {
  readonly shape: "object" | "array" | "map";
  readonly plan: OrderPlan | undefined;
}

/** A declared member: its place in the Go struct, and what it holds when that is ordered too. */
interface Member {
  readonly at: number;
  child: Child | undefined;
}

/** How the members of one definition's objects are ordered, and which members hold ordered parts. */
interface OrderPlan {
  readonly members: Map<string, Member>;
}

const plans = new Map<string, OrderPlan | null>();
const byKind = new Map<string, ((object: object) => object) | null>();

/**
 * `body` in Go's member order when it is an object (or a list) of a built-in
 * kind, told by its `kind` and `apiVersion`; anything else as it is.
 */
export function inGoOrder<T>(body: T): T {
  if (!isRecord(body)) return body;
  const { kind, apiVersion } = body;
  if (typeof kind !== "string" || typeof apiVersion !== "string") return body;
  const key = `${apiVersion}/${kind}`;
  let order = byKind.get(key);
  if (order === undefined) {
    const slash = apiVersion.indexOf("/");
    const group = slash < 0 ? "" : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    const definition = builtinDefinitionName(group, version, kind);
    order = (definition === undefined ? undefined : goOrderer(definition)) ?? null;
    if (byKind.size < 10_000) byKind.set(key, order);
  }
  return order === null ? body : (order(body) as T);
}

/** {@link goOrderer} of a served resource's kind, when Kubernetes defines it. */
export function resourceGoOrderer(
  resource: Pick<ResourceDescriptor, "group" | "version" | "kind">,
): ((object: object) => object) | undefined {
  const definition = builtinDefinitionName(resource.group, resource.version, resource.kind);
  return definition === undefined ? undefined : goOrderer(definition);
}

/**
 * Objects already put in order, and what they came out as: a stored object is
 * never changed once stored, so a version read many times (a list, each
 * watcher of a watch) is ordered once. Entries go with their objects.
 */
const ordered = new WeakMap<object, object>();

/** A function that returns a built-in kind's object in Go's member order, or undefined without a plan for it. */
export function goOrderer(definitionName: string): ((object: object) => object) | undefined {
  const plan = planOf(definitionName);
  if (plan === undefined) return undefined;
  return (object) => {
    let result = ordered.get(object);
    if (result === undefined) {
      result = orderStruct(plan, object as Record<string, unknown>);
      ordered.set(object, result);
    }
    return result;
  };
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
  const plan: OrderPlan = { members: new Map(fields.map((f, at) => [f, { at, child: undefined }])) };
  // Registered before its children: a definition that holds itself (JSONSchemaProps) meets its own plan.
  plans.set(definitionName, plan);
  for (const [field, property] of Object.entries(properties)) {
    const member = plan.members.get(field);
    if (member !== undefined) member.child = childOf(property as OpenAPIDefinition);
  }
  return plan;
}

function childOf(property: OpenAPIDefinition): Child | undefined {
  const ref = definitionRefOf(property);
  if (ref !== undefined) {
    const plan = planOf(ref);
    return plan === undefined ? undefined : { shape: "object", plan };
  }
  if (isRecord(property.items)) {
    const item = definitionRefOf(property.items as OpenAPIDefinition);
    const plan = item === undefined ? undefined : planOf(item);
    return plan === undefined ? undefined : { shape: "array", plan };
  }
  if (property.additionalProperties !== undefined && property.additionalProperties !== false) {
    const values = isRecord(property.additionalProperties)
      ? definitionRefOf(property.additionalProperties as OpenAPIDefinition)
      : undefined;
    return { shape: "map", plan: values === undefined ? undefined : planOf(values) };
  }
  return undefined;
}

/** `value` with its members in the struct's order and its parts ordered; `value` itself when it already is. */
function orderStruct(plan: OrderPlan, value: Record<string, unknown>): Record<string, unknown> {
  const members = plan.members;
  let inOrder = true;
  let last = -1;
  let changed: Map<string, unknown> | undefined;
  for (const key in value) {
    const member = members.get(key);
    const at = member?.at ?? undeclared;
    if (at < last) inOrder = false;
    last = at;
    const child = member?.child;
    if (child === undefined) continue;
    const held = value[key];
    const ordered = orderChild(child, held);
    if (ordered !== held) (changed ??= new Map()).set(key, ordered);
  }
  if (inOrder && changed === undefined) return value;
  // The members present, sorted by their place (a stable sort: undeclared ones keep their order, last).
  const keys = Object.keys(value);
  if (!inOrder) keys.sort((a, b) => (members.get(a)?.at ?? undeclared) - (members.get(b)?.at ?? undeclared));
  const out: Record<string, unknown> = {};
  for (const key of keys) setMember(out, key, changed?.has(key) ? changed.get(key) : value[key]);
  return out;
}

/** Where members a struct does not declare go: after the rest (none are left once a body is decoded). */
const undeclared = Number.MAX_SAFE_INTEGER;

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
  if (plan === undefined) return withKeysSorted(value, unchanged);
  return withKeysSorted(value, (entry) => (isRecord(entry) ? orderStruct(plan, entry) : entry));
}

const unchanged = (member: unknown): unknown => member;

/**
 * `record` with its keys sorted and each member as `change` makes it:
 * `record` itself when its keys are in order already and no member changes.
 */
function withKeysSorted(
  record: Record<string, unknown>,
  change: (member: unknown) => unknown,
): Record<string, unknown> {
  let inOrder = true;
  let previous: string | undefined;
  let changed: Map<string, unknown> | undefined;
  for (const key in record) {
    if (previous !== undefined && key < previous) inOrder = false;
    previous = key;
    const member = record[key];
    const made = change(member);
    if (made !== member) (changed ??= new Map()).set(key, made);
  }
  if (inOrder && changed === undefined) return record;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort())
    setMember(out, key, changed?.has(key) ? changed.get(key) : record[key]);
  return out;
}

/** `out[key] = member`, as an own member even for `__proto__`. */
function setMember(out: Record<string, unknown>, key: string, member: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  else out[key] = member;
}

/** Custom resources already sorted, and what they came out as (stored objects never change). */
const sortedObjects = new WeakMap<object, object>();

/**
 * What an object of `resource` is sent as over HTTP: a custom resource (a
 * kind Kubernetes does not define) with every object's keys sorted, as
 * kube-apiserver encodes unstructured objects; anything else as it is (a
 * built-in kind is put in Go's order by {@link inGoOrder} as it is sent; a
 * Status answering for a custom resource is no custom resource).
 */
export function customForWire<T>(
  resource: Pick<ResourceDescriptor, "group" | "version" | "kind">,
  body: T,
): T {
  if (!isRecord(body) || body.kind !== resource.kind) return body;
  if (builtinDefinitionName(resource.group, resource.version, resource.kind) !== undefined) return body;
  let result = sortedObjects.get(body);
  if (result === undefined) {
    result = allKeysSorted(body) as object;
    sortedObjects.set(body, result);
  }
  return result as T;
}

/** `value` with every object's keys sorted (arrays keep their order); parts already sorted as they are. */
function allKeysSorted(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const sorted = allKeysSorted(value[i]);
      if (sorted !== value[i]) (copy ??= [...value])[i] = sorted;
    }
    return copy ?? value;
  }
  return withKeysSorted(value as Record<string, unknown>, allKeysSorted);
}
