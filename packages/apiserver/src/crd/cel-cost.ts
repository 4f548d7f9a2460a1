import { ReconcileError } from "@reconcile/api";
/**
 * CEL cost accounting for CRD validation rules, with apiextensions-apiserver's limits.
 *
 * cel-go counts cost units as it evaluates; the CEL library used here has no such hook, so the runtime cost is
 * one unit per evaluated expression node (comprehension bodies count once per iteration) plus the elements
 * that library functions traverse. The numbers approximate cel-go's, not reproduce them; the limits are
 * upstream's.
 */

/** Cost one rule evaluation may spend (apiextensions' PerCallLimit). */
export const PER_CALL_LIMIT = 1_000_000;
/** Cost all rules of one custom object validation share (RuntimeCELCostBudget). */
export const RUNTIME_COST_BUDGET = 10_000_000;

/** The remaining runtime budget of one object's validation. */
export class CostBudget {
  remaining: number;
  /** Set once a rule ran out of budget: no further rules run. */
  exhausted = false;
  constructor(total = RUNTIME_COST_BUDGET) {
    this.remaining = total;
  }
}

const costLimitMarker = Symbol.for("reconcile.apiserver.cel-cost-limit-exceeded");

/** Thrown inside an evaluation that passed its per-call limit; cel-go's interrupt text. `code` is `"apiserver.cel-cost-limit-exceeded"`. */
export class CostLimitExceeded extends ReconcileError<"apiserver.cel-cost-limit-exceeded"> {
  readonly [costLimitMarker] = true;
  constructor() {
    super("apiserver.cel-cost-limit-exceeded", "operation cancelled: actual cost limit exceeded");
    this.name = "CostLimitExceeded";
  }

  static override isInstance(error: unknown): error is CostLimitExceeded {
    return ReconcileError.hasMarker(error, costLimitMarker);
  }
}

/** The cost of one evaluation in progress. */
export class CallCost {
  actual = 0;
  exceeded = false;
  constructor(readonly limit: number) {}
}

let current: CallCost | undefined;

/**
 * Runs `evaluate` while counting its cost. Evaluation is synchronous, so one counter at a time suffices. The
 * limit is checked as cost accrues; a comprehension that swallows the thrown error still leaves `exceeded`
 * set, so the caller must look at it rather than at the result alone.
 */
export function withCost<T>(
  limit: number,
  evaluate: () => T,
): { result?: T; error?: unknown; cost: CallCost } {
  const cost = new CallCost(limit);
  const previous = current;
  current = cost;
  try {
    return { result: evaluate(), cost };
  } catch (error) {
    return { error, cost };
  } finally {
    current = previous;
  }
}

/** Adds cost to the evaluation in progress (library functions charge the elements they traverse). */
export function chargeCost(units: number): void {
  if (!current) return;
  current.actual += Math.ceil(units);
  if (current.actual > current.limit) {
    current.exceeded = true;
    throw new CostLimitExceeded();
  }
}

/** Estimated cost one rule may have, its cost times its node's cardinality (StaticEstimatedCostLimit). */
export const STATIC_COST_LIMIT = 10_000_000;
/** Estimated cost all rules of one version's schema may have together (StaticEstimatedCRDCostLimit). */
export const STATIC_CRD_COST_LIMIT = 100_000_000;
/** The request size bound that caps unbounded lists, maps and strings (3 MiB, as apiextensions assumes). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** The schema shape the estimator needs (a subset of JSONSchemaProps, to keep this file standalone). */
export interface CostSchema {
  type?: string;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  items?: CostSchema | CostSchema[];
  properties?: Record<string, CostSchema>;
  additionalProperties?: boolean | CostSchema;
  "x-kubernetes-int-or-string"?: boolean;
}

/** A parsed expression node as the CEL library shapes it. */
interface Node {
  op: string;
  args: unknown;
}

/**
 * A conservative worst-case cost of one expression over a value of `schema`: one unit per node, each
 * comprehension's body once per element the schema allows (`maxItems`, `maxProperties`, `maxLength`, or the
 * count that fits in a 3 MiB request when unset), and string and list functions by the size they traverse.
 * cel-go's estimator is finer; this one has the same inputs and errs high.
 */
export function estimateCost(ast: unknown, schema: CostSchema): number {
  return estimate(
    ast as Node,
    new Map([
      ["self", schema],
      ["oldSelf", schema],
    ]),
  ).cost;
}

/** How many times a rule at a node may run: the product of the sizes of the lists and maps around it. */
export function childCardinality(parent: CostSchema): number {
  if (parent.type === "array") return maxSize(parent);
  if (parent.type === "object" && typeof parent.additionalProperties === "object") return maxSize(parent);
  return 1;
}

/**
 * upstream's getCostErrorMessage: "estimated rule cost exceeds budget by factor of …", the factor as `%f`
 * below 1.5, `more than 100x` above 100, else with one decimal.
 */
export function exceedsBudgetMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown =
    factor > 100 ? "more than 100x" : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

interface Estimate {
  cost: number;
  schema?: CostSchema | undefined;
  /** Largest size (elements or characters) the value may have. */
  size?: number;
}

const comprehensions = new Set(["all", "exists", "exists_one", "map", "filter"]);
const stringFunctions = new Set([
  "contains",
  "startsWith",
  "endsWith",
  "matches",
  // What a parsed rule's `matches` calls are renamed to (cel-library's linearMatches): RE2.
  "re2Matches",
  "find",
  "findAll",
  "indexOf",
  "lastIndexOf",
  "lowerAscii",
  "upperAscii",
  "replace",
  "split",
  "trim",
  "substring",
  "charAt",
]);
const listFunctions = new Set(["isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "join"]);

function estimate(node: Node, scope: Map<string, CostSchema | undefined>): Estimate {
  if (!node || typeof node !== "object" || !("op" in node)) return { cost: 0 };
  const args = node.args;
  switch (node.op) {
    case "value":
      return { cost: 0, ...(typeof args === "string" ? { size: args.length } : {}) };
    case "id": {
      const schema = scope.get(args as string);
      return { cost: 1, schema, ...sizeOf(schema) };
    }
    case ".":
    case ".?": {
      const [target, name] = args as [Node, string];
      const inner = estimate(target, scope);
      const schema = fieldSchema(inner.schema, name);
      return { cost: inner.cost + 1, schema, ...sizeOf(schema) };
    }
    case "[]":
    case "[?]": {
      const [target, index] = args as [Node, Node];
      const inner = estimate(target, scope);
      const key = estimate(index, scope);
      const schema = elementSchema(inner.schema);
      return { cost: inner.cost + key.cost + 1, schema, ...sizeOf(schema) };
    }
    case "list": {
      const items = (args as Node[]).map((item) => estimate(item, scope));
      return { cost: 1 + sum(items), size: items.length };
    }
    case "map": {
      const entries = (args as [Node, Node][]).flatMap(([k, v]) => [estimate(k, scope), estimate(v, scope)]);
      return { cost: 1 + sum(entries), size: entries.length / 2 };
    }
    case "call": {
      const [, callArgs] = args as [string, Node[]];
      const estimates = callArgs.map((a) => estimate(a, scope));
      return { cost: 1 + sum(estimates) };
    }
    case "rcall": {
      const [name, receiver, callArgs] = args as [string, Node, Node[]];
      const target = estimate(receiver, scope);
      if (comprehensions.has(name) && callArgs[0]?.op === "id") {
        const iterations = target.size ?? maxRequestElements(1);
        const inner = new Map(scope).set(callArgs[0].args as string, elementSchema(target.schema));
        const body = sum(callArgs.slice(1).map((a) => estimate(a, inner)));
        const out: Estimate = { cost: target.cost + 1 + iterations * (body + 1) };
        if (name === "map" || name === "filter") out.size = iterations;
        return out;
      }
      const estimates = callArgs.map((a) => estimate(a, scope));
      let cost = target.cost + 1 + sum(estimates);
      const size = target.size ?? 0;
      if (listFunctions.has(name) && target.schema?.type !== "string") cost += size;
      if (stringFunctions.has(name) && (target.schema?.type === "string" || target.schema === undefined))
        cost += Math.ceil(size * 0.1);
      return { cost };
    }
    default: {
      const children = Array.isArray(args) ? (args as Node[]) : [args as Node];
      const estimates = children.map((c) => estimate(c, scope));
      let cost = 1 + sum(estimates);
      // `in` over a list and equality over strings or lists traverse them
      if (node.op === "in") cost += estimates[1]?.size ?? 0;
      if (node.op === "==" || node.op === "!=") cost += Math.ceil((estimates[0]?.size ?? 0) * 0.1);
      return { cost };
    }
  }
}

function sum(estimates: Estimate[]): number {
  let total = 0;
  for (const e of estimates) total += e.cost;
  return total;
}

function fieldSchema(schema: CostSchema | undefined, name: string): CostSchema | undefined {
  if (!schema) return undefined;
  const declared = schema.properties?.[name] ?? schema.properties?.[unescapeProperty(name)];
  if (declared) return declared;
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

function elementSchema(schema: CostSchema | undefined): CostSchema | undefined {
  if (!schema) return undefined;
  if (schema.type === "array") return Array.isArray(schema.items) ? undefined : schema.items;
  if (typeof schema.additionalProperties === "object") return schema.additionalProperties;
  return undefined;
}

function unescapeProperty(name: string): string {
  const keyword = /^__(.+)__$/.exec(name);
  if (keyword?.[1] && !keyword[1].includes("__")) return keyword[1];
  return name
    .replaceAll("__dot__", ".")
    .replaceAll("__dash__", "-")
    .replaceAll("__slash__", "/")
    .replaceAll("__underscores__", "__");
}

function sizeOf(schema: CostSchema | undefined): { size?: number } {
  if (!schema) return {};
  if (schema.type === "string" || schema.type === "array") return { size: maxSize(schema) };
  if (schema.type === "object" && typeof schema.additionalProperties === "object")
    return { size: maxSize(schema) };
  return {};
}

/** The declared bound, or how many of the smallest element fit in one request. */
function maxSize(schema: CostSchema): number {
  if (schema.type === "string") return schema.maxLength ?? MAX_REQUEST_SIZE_BYTES - 2;
  if (schema.type === "array") {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    return schema.maxItems ?? maxRequestElements(minSerializedSize(items));
  }
  const values = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  // each entry is at least `"":` plus its value and a separator
  return schema.maxProperties ?? maxRequestElements(minSerializedSize(values) + 3);
}

function maxRequestElements(minSize: number): number {
  return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSize + 1));
}

/** The fewest bytes a value of the schema takes in JSON (`""`, `0`, `true`, `{}`, `[]`). */
function minSerializedSize(schema: CostSchema | undefined): number {
  if (!schema || schema["x-kubernetes-int-or-string"]) return 1;
  switch (schema.type) {
    case "string":
      return 2;
    case "boolean":
      return 4;
    case "integer":
    case "number":
      return 1;
    default:
      return 2;
  }
}
