import { Environment } from "@marcbachmann/cel-js";
import { errorMessage } from "@reconcile/api";
import { renameMatches } from "../crd/cel.js";
import { PER_CALL_LIMIT, withCost } from "../crd/cel-cost.js";
import { registerKubernetesLibraries } from "../crd/cel-library.js";
import type { AdmissionAttributes } from "../registry/admission.js";
import { admissionRequest } from "./webhook/review.js";

/**
 * The CEL environment of admission (ValidatingAdmissionPolicy expressions and
 * webhooks' matchConditions): the Kubernetes libraries of CRD validation,
 * with the variables upstream's admission gives.
 */
const environment = registerKubernetesLibraries(
  new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true }),
)
  .registerVariable("object", "dyn")
  .registerVariable("oldObject", "dyn")
  .registerVariable("request", "dyn")
  .registerVariable("params", "dyn")
  .registerVariable("namespaceObject", "dyn")
  .registerVariable("variables", "dyn")
  .registerVariable("authorizer", "dyn");

/** A compiled admission expression. */
export interface AdmissionProgram {
  /** The type the checker gave it (`bool`, `string`, `dyn`…). */
  readonly type: string;
  /** The parsed expression (cel-js's AST), for what it reads. */
  readonly ast: unknown;
  run(context: Record<string, unknown>): unknown;
}

const programs = new Map<string, AdmissionProgram | Error>();

/** Compiles (once per text) an admission expression; an Error says why it does not compile. */
export function compileAdmissionExpression(expression: string): AdmissionProgram | Error {
  let program = programs.get(expression);
  if (program !== undefined) return program;
  try {
    const parsed = environment.parse(expression);
    renameMatches(parsed.ast);
    const checked = parsed.check();
    program = checked.valid
      ? { type: checked.type ?? "dyn", ast: parsed.ast, run: (context) => parsed(context) }
      : (checked.error ?? new Error("type check failed"));
  } catch (error) {
    program = error instanceof Error ? error : new Error(String(error));
  }
  if (programs.size > 10_000) programs.clear();
  programs.set(expression, program);
  return program;
}

/** Runs a program within upstream's per-call cost limit: its value, or the error it ended with. */
export function runAdmissionExpression(
  program: AdmissionProgram,
  context: Record<string, unknown>,
): { value: unknown } | { error: string } {
  const { result, error, cost } = withCost(PER_CALL_LIMIT, () => program.run(context));
  if (cost.exceeded) return { error: "operation cancelled: actual cost limit exceeded" };
  if (error !== undefined) return { error: errorMessage(error) };
  return { value: result };
}

/**
 * A JSON value as CEL sees it without a schema: whole numbers are ints,
 * others doubles, objects maps, arrays lists. Only what differs is copied:
 * an object or array with no whole number (and no undefined member) inside
 * is the value itself, which evaluation only reads.
 */
export function celValueOf(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      const converted = celValueOf(child);
      if (out === undefined && converted !== child) out = value.slice(0, i);
      out?.push(converted);
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const child = (value as Record<string, unknown>)[key];
    const converted = celValueOf(child);
    if (out === undefined && converted !== child) {
      out = {};
      for (let j = 0; j < i; j++) setOwn(out, keys[j]!, (value as Record<string, unknown>)[keys[j]!]);
    }
    if (out !== undefined) setOwn(out, key, converted);
  }
  return out ?? value;
}

/** `out[key] = value` as an own member even for `__proto__` (which would otherwise set the prototype). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * The parts of a value some expressions can read: `true` for all of it, or
 * the fields they read, each with the parts of it they read.
 */
export type ReadParts = true | Map<string, ReadParts>;

/** What a set of admission expressions reads of `object` and `oldObject`, and whether it reads `request`. */
export interface RequestReads {
  object: ReadParts;
  oldObject: ReadParts;
  request: boolean;
  /** Whether any expression names `namespaceObject` (which is then looked up). */
  namespaceObject: boolean;
}

/** Everything: what an expression that does not compile (or a caller that does not say) may read. */
export const readsEverything: RequestReads = {
  object: true,
  oldObject: true,
  request: true,
  namespaceObject: true,
};

interface AstNode {
  op?: unknown;
  args?: unknown;
}

/**
 * What `expressions` read of the request: found in their syntax, each
 * `object.a.b` (or `object['a']`) a read of that field alone; `object`
 * anywhere else (passed whole, indexed by a computed key, compared) a read
 * of all of it. A read of `request` reads the objects whole as well.
 */
export function requestReads(expressions: readonly string[]): RequestReads {
  const reads: RequestReads = {
    object: new Map() as ReadParts,
    oldObject: new Map() as ReadParts,
    request: false,
    namespaceObject: false,
  };
  for (const expression of expressions) {
    const program = compileAdmissionExpression(expression);
    if (program instanceof Error) return readsEverything;
    const stack: unknown[] = [program.ast];
    while (stack.length > 0) {
      const node = stack.pop();
      if (node === null || typeof node !== "object") continue;
      if (Array.isArray(node)) {
        stack.push(...node);
        continue;
      }
      const indexes: AstNode[] = [];
      const path = selected(node as AstNode, indexes)?.path;
      if (path === undefined) {
        stack.push((node as AstNode).args);
        continue;
      }
      // A computed index is an expression of its own, which may read more.
      stack.push(...indexes);
      const [variable, ...fields] = path;
      if (variable === "request") reads.request = true;
      else if (variable === "namespaceObject") reads.namespaceObject = true;
      else if (variable === "object") reads.object = addRead(reads.object, fields);
      else if (variable === "oldObject") reads.oldObject = addRead(reads.oldObject, fields);
    }
  }
  return reads.request ? readsEverything : reads;
}

const selections = new Set([".", ".?", "[]", "[?]"]);

/**
 * `object.a['b']` as `["object", "a", "b"]`: a variable and the fields
 * selected from it, the selection's computed indexes added to `indexes`;
 * undefined for anything else. A computed index reads all it is applied to,
 * so the path ends there (`object.a[k].b` reads all of `object.a`).
 */
function selected(node: AstNode, indexes: AstNode[]): { path: string[]; ended: boolean } | undefined {
  if (node.op === "id")
    return typeof node.args === "string" ? { path: [node.args], ended: false } : undefined;
  if (!selections.has(node.op as string)) return undefined;
  const [operand, field] = node.args as [AstNode, unknown];
  const base = selected(operand, indexes);
  if (base === undefined) return undefined;
  const indexed = node.op === "[]" || node.op === "[?]";
  const name = indexed ? literalString(field) : field;
  if (typeof name !== "string") {
    indexes.push(field as AstNode);
    return { path: base.path, ended: true };
  }
  return base.ended ? base : { path: [...base.path, name], ended: false };
}

function literalString(node: unknown): string | undefined {
  const value = (node as AstNode | undefined)?.op === "value" ? (node as AstNode).args : undefined;
  return typeof value === "string" ? value : undefined;
}

function addRead(parts: ReadParts, fields: readonly string[]): ReadParts {
  if (parts === true) return true;
  if (fields.length === 0) return true;
  const [first, ...rest] = fields as [string, ...string[]];
  const below = parts.get(first) ?? new Map();
  parts.set(first, addRead(below, rest));
  return parts;
}

/** The CEL value of the parts of `value` that are read. */
function celValueRead(value: unknown, parts: ReadParts): unknown {
  if (parts === true || value === null || typeof value !== "object" || Array.isArray(value))
    return celValueOf(value);
  const out: Record<string, unknown> = {};
  for (const [field, below] of parts)
    if (Object.hasOwn(value, field))
      setOwn(out, field, celValueRead((value as Record<string, unknown>)[field], below));
  return out;
}

/** `object`, `oldObject` and `request` as CEL values. */
export type CelRequestValues = {
  object: unknown;
  oldObject: unknown;
  request: unknown;
};

/**
 * `object`, `oldObject` and `request` of admission expressions: each
 * converted once, only as far as `reads` says the expressions read them; the
 * request's own object and oldObject are the same values.
 */
export function celRequestValues(
  a: AdmissionAttributes,
  reads: RequestReads = readsEverything,
): CelRequestValues {
  const object = celValueRead(a.object ?? null, reads.object);
  const oldObject = celValueRead(a.oldObject ?? null, reads.oldObject);
  if (!reads.request) return { object, oldObject, request: null };
  const { object: _object, oldObject: _oldObject, ...rest } = admissionRequest(a, "");
  return { object, oldObject, request: { ...(celValueOf(rest) as object), object, oldObject } };
}
