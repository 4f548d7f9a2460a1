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
      ? { type: checked.type ?? "dyn", run: (context) => parsed(context) }
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
 * others doubles, objects maps, arrays lists.
 */
export function celValueOf(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(celValueOf);
  if (typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = celValueOf(child);
  return out;
}

/**
 * `object`, `oldObject` and `request` of an admission expression: each
 * converted once, the request's own object and oldObject the same values.
 */
export function celRequestValues(a: AdmissionAttributes): {
  object: unknown;
  oldObject: unknown;
  request: unknown;
} {
  const object = celValueOf(a.object ?? null);
  const oldObject = celValueOf(a.oldObject ?? null);
  const { object: _object, oldObject: _oldObject, ...rest } = admissionRequest(a, "");
  return { object, oldObject, request: { ...(celValueOf(rest) as object), object, oldObject } };
}
