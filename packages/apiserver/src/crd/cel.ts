import { Environment, Optional } from "@marcbachmann/cel-js";
import { errorMessage } from "@reconcile/api";
import type { GoSyntax } from "../registry/field-errors.js";
import { goPointer, goStruct } from "../registry/go-syntax.js";
import {
  CostBudget,
  chargeCost,
  estimateCost,
  exceedsBudgetMessage,
  PER_CALL_LIMIT,
  STATIC_COST_LIMIT,
  withCost,
} from "./cel-cost.js";
import { celGoIssue } from "./cel-issues.js";
import { linearMatches, registerKubernetesLibraries } from "./cel-library.js";
import { fieldPathResolves, joinFieldPath } from "./cel-paths.js";
import type { RuleChecker } from "./cel-types.js";
import { toCEL } from "./cel-values.js";
import { type SchemaErrors, showValue } from "./errors.js";
import {
  additionalSchema,
  isObject,
  itemSchema,
  type JSONSchemaProps,
  subtreeHas,
  type ValidationRule,
} from "./schema.js";

export { escapeProperty } from "./cel-values.js";

/**
 * Evaluates the `x-kubernetes-validations` rules of a schema over an object (and its previous version on
 * update), adding failures in apiextensions-apiserver's format:
 * `spec: Invalid value: "object": replicas must be <= maxReplicas`, or `failed rule: <rule>` without a message.
 *
 * Rules never run on `null`. A rule that reads `oldSelf` (a transition rule) runs only on update, where the old
 * value is correlatable (object fields, map values, items of `x-kubernetes-list-type: map` lists matched by
 * key), unless `optionalOldSelf` makes `oldSelf` an optional that is empty on create.
 */
export function validateCEL(
  value: unknown,
  old: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path = "",
  budget: CostBudget = new CostBudget(),
): void {
  walk(value, old, schema, errors, path, true, budget);
}

/** Where a schema node's rules are compiled. */
export interface RuleContext {
  /** Checks them against the schema's declared types (without it, `self` is `dyn`). */
  checker?: RuleChecker | undefined;
  /** The items path of the outermost atomic or set list above the node, where `oldSelf` cannot be used. */
  uncorrelatable?: string | undefined;
}

/** A compiled rule's estimated cost (times its node's cardinality), for the schema-wide total. */
export interface RuleCost {
  path: string;
  cost: number;
}

/**
 * Compiles every rule of a schema, as CRD validation does; each failure names the rule's path. A rule whose
 * estimated cost times `cardinality` (how often its node may occur in one object) passes
 * {@link STATIC_COST_LIMIT} is forbidden, as is such a messageExpression. Returns the rules' costs.
 */
export function compileRules(
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path: string,
  cardinality = 1,
  context: RuleContext = {},
): RuleCost[] {
  const costs: RuleCost[] = [];
  const { checker, uncorrelatable } = context;
  (schema["x-kubernetes-validations"] ?? []).forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (typeof rule.rule !== "string" || rule.rule.trim() === "") {
      errors.required(`${at}.rule`);
      return;
    }
    const checked = outcome(rule.rule, schema, rule.optionalOldSelf === true, checker);
    if ("issue" in checked) {
      errors.invalid(`${at}.rule`, goValidationRule(rule), `compilation failed: ${checked.issue}`);
    } else if (checked.type !== "bool" && !isDynamic(checked.type)) {
      errors.invalid(`${at}.rule`, goValidationRule(rule), "cel expression must evaluate to a bool");
    } else {
      const cost = estimateCost(checked.program.ast, schema) * cardinality;
      if (cost > STATIC_COST_LIMIT) {
        errors.forbidden(`${at}.rule`, exceedsBudgetMessage("estimated rule cost", cost, STATIC_COST_LIMIT));
      }
      costs.push({ path: `${at}.rule`, cost });
    }
    if (rule.rule.includes("\n") && !rule.message) {
      errors.required(`${at}.rule`, "message must be specified if rule contains line breaks");
    }
    if (rule.message !== undefined && (rule.message.trim() === "" || rule.message.includes("\n"))) {
      errors.invalid(
        `${at}.message`,
        rule.message,
        rule.message.trim() === ""
          ? "message must be non-empty if specified"
          : "message must not contain line breaks",
      );
    }
    if (uncorrelatable !== undefined && usesOldSelf(rule.rule)) {
      errors.invalid(
        `${at}.rule`,
        rule.rule,
        `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`,
      );
    }
    if (rule.messageExpression !== undefined) {
      const checkedMessage = outcome(rule.messageExpression, schema, rule.optionalOldSelf === true, checker);
      if ("issue" in checkedMessage) {
        errors.invalid(
          `${at}.messageExpression`,
          rule.messageExpression,
          `messageExpression compilation failed: ${checkedMessage.issue}`,
        );
      } else if (checkedMessage.type !== "string" && !isDynamic(checkedMessage.type)) {
        errors.invalid(
          `${at}.messageExpression`,
          rule.messageExpression,
          "messageExpression must evaluate to a string",
        );
      } else {
        const cost = estimateCost(checkedMessage.program.ast, schema) * cardinality;
        if (cost > STATIC_COST_LIMIT) {
          errors.forbidden(
            `${at}.messageExpression`,
            exceedsBudgetMessage("estimated messageExpression cost", cost, STATIC_COST_LIMIT),
          );
        }
      }
    }
    if (rule.reason !== undefined && !reasons.has(rule.reason)) {
      errors.notSupported(`${at}.reason`, rule.reason, [...reasons].sort());
    }
    if (rule.optionalOldSelf && !usesOldSelf(rule.rule)) {
      errors.invalid(`${at}.optionalOldSelf`, true, "may not be set if oldSelf is not used in rule");
    }
    if (rule.fieldPath !== undefined && !fieldPathResolves(schema, rule.fieldPath)) {
      errors.invalid(`${at}.fieldPath`, rule.fieldPath, "fieldPath must be a valid path");
    }
  });
  return costs;
}

/**
 * What compiling an expression at a node found: the checker's verdict with
 * the schema's types first (its words are upstream's), then whether the
 * program that runs it compiled; with the program, and the type the
 * checker gave (the program's own without a checker).
 */
function outcome(
  expression: string,
  node: JSONSchemaProps,
  optionalOldSelf: boolean,
  checker: RuleChecker | undefined,
): { issue: string } | { type: string; program: Compiled } {
  const typed = checker?.check(expression, node, optionalOldSelf);
  if (typed !== undefined && "issue" in typed) return typed;
  const program = compile(expression, optionalOldSelf);
  if (program instanceof Error) return { issue: celGoIssue(program, expression) };
  return { type: typed?.type ?? program.type, program };
}

const reasons = new Set([
  "FieldValueInvalid",
  "FieldValueForbidden",
  "FieldValueRequired",
  "FieldValueDuplicate",
]);

const libraries = registerKubernetesLibraries(
  new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true }),
);
/** Where rules run: `self` and `oldSelf` are dyn, or with `optionalOldSelf` `oldSelf` an optional. */
const environments = {
  plain: countEvaluatedNodes(
    libraries.clone().registerVariable("self", "dyn").registerVariable("oldSelf", "dyn"),
  ),
  optional: countEvaluatedNodes(
    libraries.clone().registerVariable("self", "dyn").registerVariable("oldSelf", "optional<dyn>"),
  ),
};

/**
 * Makes every expression node the environment evaluates charge one cost unit. The library offers no cost
 * hook, so this wraps its evaluator's `run`, through which each child node is evaluated; the evaluator is
 * reached through the first evaluation of a probe expression.
 */
function countEvaluatedNodes(environment: Environment): Environment {
  const probe = environment.parse("true");
  const node = probe.ast as unknown as {
    evaluate: (evaluator: unknown, ast: unknown, context: unknown) => unknown;
  };
  const original = Object.getPrototypeOf(node).evaluate as typeof node.evaluate;
  node.evaluate = function (this: unknown, evaluator, ast, context) {
    const target = evaluator as { run: (ast: unknown, context: unknown) => unknown };
    const run = target.run;
    target.run = function (this: unknown, child, childContext) {
      chargeCost(1);
      return run.call(this, child, childContext);
    };
    return original.call(this, evaluator, ast, context);
  };
  probe({});
  return environment;
}

interface Compiled {
  type: string;
  ast: unknown;
  run: (context: Record<string, unknown>) => unknown;
}
const programs = {
  plain: new Map<string, Compiled | Error>(),
  optional: new Map<string, Compiled | Error>(),
};

/** A rule or message expression compiled once (per text and kind of `oldSelf`) for running. */
function compile(expression: string, optionalOldSelf = false): Compiled | Error {
  const kind = optionalOldSelf ? "optional" : "plain";
  let program = programs[kind].get(expression);
  if (program) return program;
  try {
    const parsed = environments[kind].parse(expression);
    renameMatches(parsed.ast);
    const checked = parsed.check();
    if (!checked.valid) program = checked.error ?? new Error("type check failed");
    else program = { type: checked.type ?? "dyn", ast: parsed.ast, run: (context) => parsed(context) };
  } catch (error) {
    program = error instanceof Error ? error : new Error(String(error));
  }
  // Rule texts come from CRD writes: the cache stays bounded whatever they hold.
  if (programs[kind].size >= 10_000) programs[kind].clear();
  programs[kind].set(expression, program);
  return program;
}

/** Points every `matches` call of a parsed rule at the RE2 implementation (see cel-library's `linearMatches`). */
export function renameMatches(ast: unknown): void {
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop() as { op?: unknown; args?: unknown } | null;
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const args = node.args;
    // A unary operator's operand is a node, not a list.
    if (!Array.isArray(args)) {
      if (typeof args === "object") stack.push(args);
      continue;
    }
    if ((node.op === "rcall" || node.op === "call") && args[0] === "matches") args[0] = linearMatches;
    stack.push(...args);
  }
}

function walk(
  value: unknown,
  old: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path: string,
  resource: boolean,
  budget: CostBudget,
): void {
  if (value === null || value === undefined || budget.exhausted || !subtreeHas(schema, "rules")) return;
  const rules = schema["x-kubernetes-validations"];
  if (rules?.length) {
    const self = toCEL(value, schema, resource);
    const oldSelf = old === undefined || old === null ? undefined : toCEL(old, schema, resource);
    for (const rule of rules) {
      evaluate(rule, self, oldSelf, schema, errors, path, budget);
      if (budget.exhausted) return;
    }
  }
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return;
    const keys =
      schema["x-kubernetes-list-type"] === "map" ? (schema["x-kubernetes-list-map-keys"] ?? []) : undefined;
    value.forEach((item, i) => {
      const correlated = keys && Array.isArray(old) ? old.find((o) => sameKeys(o, item, keys)) : undefined;
      walk(
        item,
        correlated,
        items,
        errors,
        `${path}[${i}]`,
        items["x-kubernetes-embedded-resource"] === true,
        budget,
      );
    });
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key in value) {
    const child = value[key];
    if (resource && key === "metadata") continue;
    const childSchema = schema.properties?.[key] ?? additional;
    // Most fields have no rule anywhere below them: skip them before building their path.
    if (!childSchema || !subtreeHas(childSchema, "rules")) continue;
    const oldChild = isObject(old) ? old[key] : undefined;
    const childPath = path === "" ? key : `${path}.${key}`;
    walk(
      child,
      oldChild,
      childSchema,
      errors,
      childPath,
      childSchema["x-kubernetes-embedded-resource"] === true,
      budget,
    );
  }
}

function evaluate(
  rule: ValidationRule,
  self: unknown,
  oldSelf: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path: string,
  budget: CostBudget,
): void {
  const transition = usesOldSelf(rule.rule);
  if (transition && oldSelf === undefined && !rule.optionalOldSelf) return;
  const program = compile(rule.rule, rule.optionalOldSelf === true);
  if (program instanceof Error) return; // rejected when the CRD was written
  const context: Record<string, unknown> = { self };
  if (transition) context.oldSelf = rule.optionalOldSelf ? optional(oldSelf) : oldSelf;
  const field = rule.fieldPath ? joinFieldPath(path, rule.fieldPath) : path;
  const shown = schemaTypeName(schema);
  // ruleErrorString upstream: the trimmed message, else the trimmed rule.
  const subject = (rule.message ?? rule.rule).trim();
  const { result, error, cost } = withCost(Math.min(PER_CALL_LIMIT, budget.remaining + 1), () =>
    program.run(context),
  );
  // Upstream checks the actual cost against the remaining budget before it looks at the result.
  if (cost.actual > budget.remaining) {
    budget.exhausted = true;
    errors.invalid(
      path,
      shown,
      "validation failed due to running out of cost budget, no further validation rules will be run",
    );
    return;
  }
  budget.remaining -= cost.actual;
  if (cost.exceeded) {
    budget.exhausted = true;
    errors.invalid(
      path,
      shown,
      `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${subject}`,
    );
    return;
  }
  if (error !== undefined) {
    const detail = `${lowerFirst(firstLine(errorMessage(error)))} evaluating rule: ${subject}`;
    errors.invalid(field, shown, detail);
    return;
  }
  if (result === true) return;
  const message = messageFor(rule, context, budget);
  if (message === exhausted) {
    errors.invalid(
      field,
      shown,
      "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run",
    );
    return;
  }
  const detail = message ?? `failed rule: ${rule.rule.trim()}`;
  switch (rule.reason ?? "FieldValueInvalid") {
    case "FieldValueForbidden":
      errors.forbidden(field, detail);
      return;
    case "FieldValueRequired":
      errors.required(field, detail);
      return;
    case "FieldValueDuplicate":
      errors.duplicate(field, shown);
      return;
    default:
      errors.push("FieldValueInvalid", field, `Invalid value: ${showValue(shown)}: ${detail}`);
  }
}

const exhausted = Symbol("budget exhausted");

/**
 * The detail of a failed rule: the messageExpression's result when usable (a non-blank single line of at
 * most 5120 bytes), else the trimmed `message`. Its cost comes out of the same budget; running out stops
 * validation as a rule does.
 */
function messageFor(
  rule: ValidationRule,
  context: Record<string, unknown>,
  budget: CostBudget,
): string | undefined | typeof exhausted {
  if (rule.messageExpression) {
    const program = compile(rule.messageExpression, rule.optionalOldSelf === true);
    if (!(program instanceof Error)) {
      const { result, cost } = withCost(Math.min(PER_CALL_LIMIT, budget.remaining + 1), () =>
        program.run(context),
      );
      if (cost.exceeded || cost.actual > budget.remaining) {
        budget.exhausted = true;
        return exhausted;
      }
      budget.remaining -= cost.actual;
      // A runtime error or an unusable result falls back to message, as upstream does.
      if (
        typeof result === "string" &&
        result.trim() !== "" &&
        !result.includes("\n") &&
        Buffer.byteLength(result) <= 5120
      ) {
        return result.trim();
      }
    }
  }
  return rule.message?.trim();
}

/**
 * Whether a checked type is only known at run time: `dyn`, or a generic parameter left unbound because the
 * receiver is `dyn` (`self.flags.min()` checks as `A`).
 */
function isDynamic(type: string): boolean {
  return type === "dyn" || /^[A-Z]$/.test(type);
}

function optional(value: unknown): Optional<unknown> {
  return value === undefined ? Optional.none() : Optional.of(value);
}

function usesOldSelf(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}

function sameKeys(a: unknown, b: unknown, keys: readonly string[]): boolean {
  return isObject(a) && isObject(b) && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** The value a CEL error shows: the node's schema type, `""` for int-or-string. */
function schemaTypeName(schema: JSONSchemaProps): string {
  return schema["x-kubernetes-int-or-string"] ? "" : (schema.type ?? "");
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

/** cel-js capitalizes messages cel-go writes in lower case ("No such key"); acronyms ("URL") stay. */
function lowerFirst(text: string): string {
  if (/^[A-Z][A-Z]/.test(text)) return text;
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** A rule as Go's `%#v` prints the internal `apiextensions.ValidationRule` upstream reports. */
function goValidationRule(rule: ValidationRule): GoSyntax {
  return goStruct("apiextensions.ValidationRule", [
    ["Rule", rule.rule ?? ""],
    ["Message", rule.message ?? ""],
    ["MessageExpression", rule.messageExpression ?? ""],
    ["Reason", goPointer("*apiextensions.FieldValueErrorReason", rule.reason ?? undefined)],
    ["FieldPath", rule.fieldPath ?? ""],
    ["OptionalOldSelf", goPointer("*bool", rule.optionalOldSelf ?? undefined)],
  ]);
}
