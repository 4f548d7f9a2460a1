import { InvalidLabelSelectorError, SelectorParseError } from "./selector-errors.js";
import type { DeepReadonly, LabelSelector } from "./types.js";
import { isQualifiedName, isValidLabelValue } from "./validation.js";

/** apimachinery's `selection.Operator` values, as they are spelled there. */
export type SelectorOperator = "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One term of a label selector: `key operator values`. `values` are sorted and distinct. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

/** A parsed, validated label selector (apimachinery's `labels.Selector`). */
export interface Selector {
  /** Whether an object with these labels is selected. Missing labels count as no labels. */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True for the selector that selects everything (no requirements). */
  empty(): boolean;
  /** The canonical string form: requirements sorted by key, values sorted. */
  toString(): string;
  requirements(): readonly Requirement[];
  /**
   * The value `key` must have for an object to be selected, when the selector
   * pins it (`key=v`, `key==v`, `key in (v)`); undefined otherwise.
   */
  requiresExactMatch(key: string): string | undefined;
}

/** Parses the string syntax `kubectl -l` and `?labelSelector=` use. "" selects everything. */
export function parseSelector(text: string): Selector {
  if (typeof text !== "string") throw new TypeError(`a label selector must be a string, got ${typeof text}`);
  const requirements = new SelectorParser(text).parse();
  return requirements.length === 0 ? everythingSelector : new RequirementsSelector(requirements);
}

/**
 * Converts a `LabelSelector` object, as apimachinery's `LabelSelectorAsSelector`:
 * null or undefined selects nothing, `{}` selects everything. Throws
 * {@link InvalidLabelSelectorError} for an unknown operator or invalid keys/values.
 */
export function labelSelectorAsSelector(
  ls: LabelSelector | DeepReadonly<LabelSelector> | null | undefined,
): Selector {
  if (ls === null || ls === undefined) return nothingSelector;
  const matchLabels = ls.matchLabels ? Object.entries(ls.matchLabels) : [];
  const matchExpressions = ls.matchExpressions ?? [];
  if (matchLabels.length + matchExpressions.length === 0) return everythingSelector;
  const requirements: Requirement[] = [];
  for (const [key, value] of matchLabels) requirements.push(newRequirement(key, "=", [asString(value)]));
  for (const expression of matchExpressions) {
    const operator = operatorOfExpression[expression.operator as string];
    if (operator === undefined) {
      throw new InvalidLabelSelectorError([
        `${JSON.stringify(expression.operator)} is not a valid label selector operator`,
      ]);
    }
    const values = Array.isArray(expression.values) ? expression.values.map(asString) : [];
    requirements.push(newRequirement(asString(expression.key), operator, values));
  }
  return new RequirementsSelector(requirements);
}

/** The selector that selects every object. Its string form is "". */
export function everything(): Selector {
  return everythingSelector;
}

/**
 * The selector that selects no object (what a missing `LabelSelector` means).
 * Its string form is "" too, as upstream's: it does not survive a round trip.
 */
export function nothing(): Selector {
  return nothingSelector;
}

/**
 * A selector matching exactly these labels (`key=value` for each); no labels
 * select everything. Throws {@link InvalidLabelSelectorError} for an invalid key or value.
 */
export function selectorFromSet(labels: Readonly<Record<string, string>> | null | undefined): Selector {
  if (!labels) return everythingSelector;
  const requirements: Requirement[] = [];
  for (const key of Object.keys(labels)) requirements.push(newRequirement(key, "=", [labels[key]!]));
  return requirements.length === 0 ? everythingSelector : new RequirementsSelector(requirements);
}

/**
 * Whether two label maps hold the same keys with the same values (upstream
 * `labels.Equals`); a missing map equals an empty one.
 */
export function labelsEqual(
  a: Readonly<Record<string, string>> | null | undefined,
  b: Readonly<Record<string, string>> | null | undefined,
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) if (!Object.hasOwn(right, key) || left[key] !== right[key]) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Selectors

const operatorOfExpression: Record<string, SelectorOperator | undefined> = Object.assign(
  Object.create(null) as Record<string, SelectorOperator | undefined>,
  { In: "in", NotIn: "notin", Exists: "exists", DoesNotExist: "!" },
);

// Matching dispatches on a small integer per requirement, precomputed at parse time.
const IN = 0; // also = and ==
const NOT_IN = 1; // also !=
const EXISTS = 2;
const DOES_NOT_EXIST = 3;
const GREATER_THAN = 4;
const LESS_THAN = 5;

const noLabels: Readonly<Record<string, string>> = Object.freeze({});

class RequirementsSelector implements Selector {
  readonly #requirements: readonly Requirement[];
  readonly #keys: string[] = [];
  readonly #kinds: number[] = [];
  /** The single value, for one-value In/NotIn; the bound for Gt/Lt is in #bounds. */
  readonly #single: (string | undefined)[] = [];
  readonly #sets: (ReadonlySet<string> | undefined)[] = [];
  readonly #bounds: number[] = [];

  constructor(requirements: Requirement[]) {
    // Stable sort by key: the canonical order of apimachinery's `internalSelector`.
    const sorted = requirements.slice().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.#requirements = Object.freeze(sorted);
    for (const r of sorted) {
      this.#keys.push(r.key);
      this.#kinds.push(kindOf(r.operator));
      this.#single.push(r.values.length === 1 ? r.values[0] : undefined);
      this.#sets.push(r.values.length > 1 ? new Set(r.values) : undefined);
      this.#bounds.push(r.operator === "gt" || r.operator === "lt" ? parseInteger(r.values[0]!) : 0);
    }
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const ls = labels ?? noLabels;
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) {
      // `typeof` rather than `in`: a label named like an Object.prototype member is absent unless set.
      const value = ls[keys[i]!];
      const present = typeof value === "string";
      switch (this.#kinds[i]) {
        case IN:
          if (!present || !this.#hasValue(i, value)) return false;
          break;
        case NOT_IN:
          if (present && this.#hasValue(i, value)) return false;
          break;
        case EXISTS:
          if (!present) return false;
          break;
        case DOES_NOT_EXIST:
          if (present) return false;
          break;
        case GREATER_THAN:
        case LESS_THAN: {
          if (!present) return false;
          const n = parseInteger(value);
          if (Number.isNaN(n)) return false;
          if (this.#kinds[i] === GREATER_THAN ? !(n > this.#bounds[i]!) : !(n < this.#bounds[i]!))
            return false;
          break;
        }
      }
    }
    return true;
  }

  #hasValue(i: number, value: string): boolean {
    const single = this.#single[i];
    if (single !== undefined) return single === value;
    return this.#sets[i]!.has(value);
  }

  empty(): boolean {
    return this.#requirements.length === 0;
  }

  toString(): string {
    return this.#requirements.map(requirementToString).join(",");
  }

  requirements(): readonly Requirement[] {
    return this.#requirements;
  }

  requiresExactMatch(key: string): string | undefined {
    for (const r of this.#requirements) {
      if (r.key !== key) continue;
      if ((r.operator === "=" || r.operator === "==" || r.operator === "in") && r.values.length === 1)
        return r.values[0];
    }
    return undefined;
  }
}

const everythingSelector: Selector = new RequirementsSelector([]);

const nothingSelector: Selector = Object.freeze({
  matches: () => false,
  empty: () => false,
  toString: () => "",
  requirements: () => [],
  requiresExactMatch: () => undefined,
});

function kindOf(operator: SelectorOperator): number {
  switch (operator) {
    case "=":
    case "==":
    case "in":
      return IN;
    case "!=":
    case "notin":
      return NOT_IN;
    case "exists":
      return EXISTS;
    case "!":
      return DOES_NOT_EXIST;
    case "gt":
      return GREATER_THAN;
    case "lt":
      return LESS_THAN;
  }
}

function requirementToString(r: Requirement): string {
  switch (r.operator) {
    case "exists":
      return r.key;
    case "!":
      return `!${r.key}`;
    case "in":
    case "notin":
      return `${r.key} ${r.operator} (${r.values.join(",")})`;
    case "gt":
      return `${r.key}>${r.values[0]}`;
    case "lt":
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

/** Objects from the wire may hold anything: a missing key or value validates as "", a number as its digits. */
function asString(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
}

/** A base-10 integer as Go's `strconv.ParseInt(s, 10, 64)` accepts it, or NaN. */
function parseInteger(text: string): number {
  let i = 0;
  if (text.charCodeAt(0) === 43 /* + */ || text.charCodeAt(0) === 45 /* - */) i = 1;
  if (i === text.length) return Number.NaN;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return Number.NaN;
  }
  return Number(text);
}

/**
 * Validates a requirement as apimachinery's `NewRequirement` and throws its
 * field errors. Values come out sorted and distinct.
 */
function newRequirement(key: string, operator: SelectorOperator, values: readonly string[]): Requirement {
  const errors: string[] = [];
  const keyErrors = isQualifiedName(key);
  if (keyErrors.length > 0)
    errors.push(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrors.join("; ")}`);
  const shown = `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0)
        errors.push(
          `values: Invalid value: ${shown}: for 'in', 'notin' operators, values set can't be empty`,
        );
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1)
        errors.push(`values: Invalid value: ${shown}: exact-match compatibility requires one single value`);
      break;
    case "exists":
    case "!":
      if (values.length !== 0)
        errors.push(
          `values: Invalid value: ${shown}: values set must be empty for exists and does not exist`,
        );
      break;
    case "gt":
    case "lt":
      if (values.length !== 1)
        errors.push(
          `values: Invalid value: ${shown}: for 'Gt', 'Lt' operators, exactly one value is required`,
        );
      values.forEach((value, i) => {
        if (Number.isNaN(parseInteger(value)))
          errors.push(
            `values[${i}]: Invalid value: ${JSON.stringify(value)}: for 'Gt', 'Lt' operators, the value must be an integer`,
          );
      });
      break;
  }
  values.forEach((value, i) => {
    const valueErrors = isValidLabelValue(value);
    if (valueErrors.length > 0)
      errors.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(value)}: ${valueErrors.join("; ")}`);
  });
  if (errors.length > 0) throw new InvalidLabelSelectorError(errors);
  return freezeRequirement(key, operator, values);
}

function freezeRequirement(key: string, operator: SelectorOperator, values: Iterable<string>): Requirement {
  const list = Array.isArray(values) && values.length <= 1 ? values.slice() : [...new Set(values)].sort();
  return Object.freeze({ key, operator, values: Object.freeze(list) });
}

// ---------------------------------------------------------------------------
// The string syntax: apimachinery's lexer and recursive-descent parser, with positions.

type TokenKind = "id" | "end" | "(" | ")" | "," | "!" | "=" | "==" | "!=" | ">" | "<" | "in" | "notin";

interface Token {
  kind: TokenKind;
  text: string;
  position: number;
}

const binaryOperators = "in, notin, =, ==, !=, gt, lt";

function isWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 10;
}

function isSpecial(c: number): boolean {
  // = ! ( ) , > <
  return c === 61 || c === 33 || c === 40 || c === 41 || c === 44 || c === 62 || c === 60;
}

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
    if (i >= text.length) {
      tokens.push({ kind: "end", text: "", position: text.length });
      return tokens;
    }
    const start = i;
    if (isSpecial(text.charCodeAt(i))) {
      // The longest operator wins: "==" and "!=" are the only two-character ones.
      const pair = text.slice(i, i + 2);
      const kind = (pair === "==" || pair === "!=" ? pair : text[i]) as TokenKind;
      i += kind.length;
      tokens.push({ kind, text: kind, position: start });
      continue;
    }
    while (i < text.length && !isSpecial(text.charCodeAt(i)) && !isWhitespace(text.charCodeAt(i))) i++;
    const word = text.slice(start, i);
    tokens.push({ kind: word === "in" || word === "notin" ? word : "id", text: word, position: start });
  }
}

class SelectorParser {
  readonly #text: string;
  readonly #tokens: Token[];
  #index = 0;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = lex(text);
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const token = this.#peek(true);
      if (token.kind === "end") return requirements;
      if (token.kind !== "id" && token.kind !== "!") {
        this.#fail(token, `found ${show(token)}, expected: !, identifier, or 'end of string'`);
      }
      requirements.push(this.#parseRequirement());
      const after = this.#next(true);
      if (after.kind === "end") return requirements;
      if (after.kind !== ",") this.#fail(after, `found ${show(after)}, expected: ',' or 'end of string'`);
      const nextTerm = this.#peek(true);
      if (nextTerm.kind !== "id" && nextTerm.kind !== "!") {
        this.#fail(nextTerm, `found ${show(nextTerm)}, expected: identifier after ','`);
      }
    }
  }

  #parseRequirement(): Requirement {
    let token = this.#next(true);
    const doesNotExist = token.kind === "!";
    if (doesNotExist) token = this.#next(true);
    if (token.kind !== "id") this.#fail(token, `found ${show(token)}, expected: identifier`);
    const key = token.text;
    const keyErrors = isQualifiedName(key);
    if (keyErrors.length > 0) this.#fail(token, `invalid label key "${key}": ${keyErrors.join("; ")}`);
    const lookahead = this.#peek(true).kind;
    if (doesNotExist) return freezeRequirement(key, "!", []);
    if (lookahead === "end" || lookahead === ",") return freezeRequirement(key, "exists", []);

    const operatorToken = this.#next(false);
    let operator: SelectorOperator;
    switch (operatorToken.kind) {
      case "in":
      case "notin":
      case "=":
      case "==":
      case "!=":
        operator = operatorToken.kind;
        break;
      case ">":
        operator = "gt";
        break;
      case "<":
        operator = "lt";
        break;
      default:
        this.#fail(operatorToken, `found ${show(operatorToken)}, expected: ${binaryOperators}`);
    }

    const values = operator === "in" || operator === "notin" ? this.#parseValues() : this.#parseExactValue();
    for (const value of values) {
      if (operator === "gt" || operator === "lt") {
        if (Number.isNaN(parseInteger(value.text)))
          this.#fail(value, `for 'Gt', 'Lt' operators, the value must be an integer`);
      }
      const valueErrors = isValidLabelValue(value.text);
      if (valueErrors.length > 0) {
        this.#fail(value, `invalid label value "${value.text}" for key "${key}": ${valueErrors.join("; ")}`);
      }
    }
    return freezeRequirement(
      key,
      operator,
      values.map((v) => v.text),
    );
  }

  /** `( v1, v2, ... )`; empty entries are the empty value, as upstream. */
  #parseValues(): Token[] {
    const open = this.#next(true);
    if (open.kind !== "(") this.#fail(open, `found ${show(open)}, expected: '('`);
    const first = this.#peek(true);
    if (first.kind === ")") {
      this.#next(true);
      return [{ kind: "id", text: "", position: first.position }];
    }
    if (first.kind !== "id" && first.kind !== ",") {
      this.#fail(first, `found ${show(first)}, expected: ',', ')' or identifier`);
    }
    const values = this.#parseIdentifiersList();
    const close = this.#next(true);
    if (close.kind !== ")") this.#fail(close, `found ${show(close)}, expected: ')'`);
    return values;
  }

  #parseIdentifiersList(): Token[] {
    const values: Token[] = [];
    const emptyAt = (position: number): Token => ({ kind: "id", text: "", position });
    for (;;) {
      const token = this.#next(true);
      if (token.kind === "id") {
        values.push(token);
        const after = this.#peek(true);
        if (after.kind === ",") continue;
        if (after.kind === ")") return values;
        this.#fail(after, `found ${show(after)}, expected: ',' or ')'`);
      } else if (token.kind === ",") {
        if (values.length === 0) values.push(emptyAt(token.position)); // "(,"
        const after = this.#peek(true);
        if (after.kind === ")") {
          values.push(emptyAt(after.position)); // ",)"
          return values;
        }
        if (after.kind === ",") {
          this.#next(true);
          values.push(emptyAt(after.position)); // ",,"
        }
      } else {
        this.#fail(token, `found ${show(token)}, expected: ',', or identifier`);
      }
    }
  }

  /** The single value after `=`, `==`, `!=`, `>`, `<`; none at all means "". */
  #parseExactValue(): Token[] {
    const lookahead = this.#peek(true);
    if (lookahead.kind === "end" || lookahead.kind === ",") {
      return [{ kind: "id", text: "", position: lookahead.position }];
    }
    const token = this.#next(true);
    if (token.kind !== "id") this.#fail(token, `found ${show(token)}, expected: identifier`);
    return [token];
  }

  /** In value context the keywords `in` and `notin` are plain identifiers, as upstream. */
  #peek(values: boolean): Token {
    return asValue(this.#tokens[this.#index]!, values);
  }

  #next(values: boolean): Token {
    const token = this.#tokens[this.#index]!;
    if (token.kind !== "end") this.#index++;
    return asValue(token, values);
  }

  #fail(token: Token, reason: string): never {
    throw new SelectorParseError("label", this.#text, token.text, token.position, reason);
  }
}

function asValue(token: Token, values: boolean): Token {
  if (values && (token.kind === "in" || token.kind === "notin")) return { ...token, kind: "id" };
  return token;
}

function show(token: Token): string {
  return token.kind === "end" ? "end of string" : `'${token.text}'`;
}

/**
 * Whether a non-empty label selector matches `labels`; an empty, missing or
 * invalid selector matches nothing (how evictions and the disruption
 * controller read a PodDisruptionBudget's selector).
 */
export function nonEmptySelectorMatches(
  selector: LabelSelector | DeepReadonly<LabelSelector> | null | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (selector == null) return false;
  if (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
    return false;
  try {
    return labelSelectorAsSelector(selector).matches(labels ?? {});
  } catch {
    return false;
  }
}
