import { ReconcileError } from "./errors.js";

const selectorParseMarker = Symbol.for("reconcile.selector-parse-error");
const invalidLabelSelectorMarker = Symbol.for("reconcile.invalid-label-selector-error");

/**
 * A label or field selector string that cannot be parsed. The message names
 * the offending term and its position (0-based, in UTF-16 code units) in the
 * selector; `reason` is the bare explanation, worded as apimachinery words it.
 */
export class SelectorParseError extends ReconcileError {
  readonly [selectorParseMarker] = true;
  readonly selector: string;
  /** The token or term that could not be understood ("" at the end of the string). */
  readonly term: string;
  readonly position: number;
  readonly reason: string;

  constructor(kind: "label" | "field", selector: string, term: string, position: number, reason: string) {
    super(
      "api.selector-parse",
      `invalid ${kind} selector ${JSON.stringify(selector)}: ${reason} (at position ${position})`,
      { legacyCode: "selector.parse" },
    );
    this.name = "SelectorParseError";
    this.selector = selector;
    this.term = term;
    this.position = position;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is SelectorParseError {
    return ReconcileError.hasMarker(error, selectorParseMarker);
  }
}

/**
 * A `LabelSelector` object (`matchLabels` / `matchExpressions`) that is not
 * valid. The message is apimachinery's field error list, e.g.
 * `key: Invalid value: "a b": name part must consist of ...`.
 */
export class InvalidLabelSelectorError extends ReconcileError {
  readonly [invalidLabelSelectorMarker] = true;
  /** One entry per problem found. */
  readonly errors: readonly string[];

  constructor(errors: readonly string[]) {
    super("api.invalid-label-selector", errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`, {
      legacyCode: "selector.invalid",
    });
    this.name = "InvalidLabelSelectorError";
    this.errors = errors;
  }

  static override isInstance(error: unknown): error is InvalidLabelSelectorError {
    return ReconcileError.hasMarker(error, invalidLabelSelectorMarker);
  }
}
