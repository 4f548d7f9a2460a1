import { ReconcileError } from "./errors.js";

/**
 * How a quantity is written back out (apimachinery's `resource.Format`): the
 * kind of suffix it was parsed with. `1Gi` stays binary, `1G` decimal, `1e9`
 * an exponent.
 */
export type QuantityFormat = "DecimalExponent" | "BinarySI" | "DecimalSI";

/** Anything that reads as a quantity: its string form, a JSON number, or a parsed one. */
export type QuantityLike = string | number | Quantity;

const quantityErrorMarker = Symbol.for("reconcile.quantity-error");

/** A string that is not a quantity. `code` is `"api.invalid-quantity"`; the message is apimachinery's. */
export class QuantityError extends ReconcileError<"api.invalid-quantity"> {
  readonly [quantityErrorMarker] = true;
  /** What was given to parse. */
  readonly input: unknown;
  /** The problem alone, as apimachinery's `ParseQuantity` words it (`unable to parse quantity's suffix`). */
  readonly problem: string;

  constructor(input: unknown, problem: string) {
    super("api.invalid-quantity", `${problem}, got ${JSON.stringify(input) ?? String(input)}`);
    this.name = "QuantityError";
    this.input = input;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is QuantityError {
    return ReconcileError.hasMarker(error, quantityErrorMarker);
  }
}

/**
 * A Kubernetes resource quantity (`"100m"`, `"1.5Gi"`, `"2e3"`), with
 * apimachinery's `resource.Quantity` semantics: the value is exact (a decimal,
 * never a float), anything finer than a nano-unit is rounded up to one
 * (`0.1n` is `1n`), a binary quantity is capped at 2^63−1, and `toString()`
 * writes the canonical form in the format it was parsed with (`1024Mi` →
 * `1Gi`, `0.5` → `500m`, `1000M` → `1G`). Immutable: `add`, `sub` and `neg`
 * return new quantities.
 */
export class Quantity {
  readonly format: QuantityFormat;
  // The value is #unscaled × 10^-#scale, kept with no trailing zeros in #unscaled.
  readonly #unscaled: bigint;
  readonly #scale: number;

  /**
   * `value × 10^exponent` in `format` (apimachinery's `NewScaledQuantity`;
   * `exponent` -3 is milli, 3 is kilo). Rounded up to a nano-unit, as parsing is.
   */
  constructor(value: bigint | number, exponent = 0, format: QuantityFormat = "DecimalSI") {
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      throw new RangeError(`Quantity: value must be an integer, got ${value}`);
    }
    if (!Number.isInteger(exponent))
      throw new RangeError(`Quantity: exponent must be an integer, got ${exponent}`);
    const [unscaled, scale] = normalize(...roundUpToNano(BigInt(value), -exponent));
    this.#unscaled = unscaled;
    this.#scale = scale;
    this.format = format;
  }

  /**
   * Parses a quantity as apimachinery's `ParseQuantity` does: `<sign><number><suffix>`
   * where the suffix is binary (`Ki`…`Ei`), decimal (`n u m "" k M G T P E`)
   * or an exponent (`e3`, `E-6`). No white space anywhere. A JSON number is
   * read as its decimal text. Throws {@link QuantityError}.
   */
  static parse(input: string | number): Quantity {
    if (typeof input === "number") {
      if (!Number.isFinite(input)) throw new QuantityError(input, "a quantity must be a finite number");
      return parseText(String(input), input);
    }
    if (typeof input !== "string") throw new QuantityError(input, formatWrong);
    // Quantities are immutable, and the same few texts ("100m", "64Mi") recur on every write.
    let parsed = parsedTexts.get(input);
    if (parsed === undefined) {
      parsed = parseText(input, input);
      if (parsedTexts.size >= 10_000) parsedTexts.clear();
      parsedTexts.set(input, parsed);
    }
    return parsed;
  }

  /** True for a zero quantity of any format. */
  isZero(): boolean {
    return this.#unscaled === 0n;
  }

  /** -1, 0 or 1. */
  sign(): -1 | 0 | 1 {
    return this.#unscaled < 0n ? -1 : this.#unscaled > 0n ? 1 : 0;
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other` (`Cmp`). */
  cmp(other: QuantityLike): -1 | 0 | 1 {
    const that = toQuantity(other);
    const scale = Math.max(this.#scale, that.#scale);
    const a = rescale(this.#unscaled, this.#scale, scale);
    const b = rescale(that.#unscaled, that.#scale, scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** Whether both are the same amount, whatever their formats (`Equal`). */
  equal(other: QuantityLike): boolean {
    return this.cmp(other) === 0;
  }

  /** The sum, in this format; a zero quantity takes the other's format (`Add`). */
  add(other: QuantityLike): Quantity {
    const that = toQuantity(other);
    const scale = Math.max(this.#scale, that.#scale);
    const sum = rescale(this.#unscaled, this.#scale, scale) + rescale(that.#unscaled, that.#scale, scale);
    return new Quantity(sum, -scale, this.isZero() ? that.format : this.format);
  }

  /** The difference, in this format; a zero quantity takes the other's format (`Sub`). */
  sub(other: QuantityLike): Quantity {
    return this.add(toQuantity(other).neg());
  }

  /** The negated quantity, same format (`Neg`). */
  neg(): Quantity {
    return new Quantity(-this.#unscaled, -this.#scale, this.format);
  }

  /** The value rounded up to an integer (`Value()`): `"500Mi"` → 524288000, `"100m"` → 1. */
  value(): number {
    return this.scaledValue(0);
  }

  /** Thousandths of the value, rounded up (`MilliValue()`): cpu `"100m"` → 100, `"1.5"` → 1500. */
  milliValue(): number {
    return this.scaledValue(-3);
  }

  /** The value in units of 10^`exponent`, rounded up (`ScaledValue`): `scaledValue(-9)` is nano-units. */
  scaledValue(exponent: number): number {
    return Number(ceilDivide(this.#unscaled, this.#scale + exponent));
  }

  /** The nearest float (`AsApproximateFloat64`). */
  asApproximateFloat64(): number {
    return Number(`${this.#unscaled}e${-this.#scale}`);
  }

  /**
   * The canonical form (`String()`): no fractional digits, the largest suffix
   * that loses nothing, in the quantity's format — except that a binary
   * quantity under 1024 in magnitude, or not a whole number, is written decimal.
   */
  toString(): string {
    if (this.#unscaled === 0n) return "0";
    const negative = this.#unscaled < 0n;
    const magnitude = negative ? -this.#unscaled : this.#unscaled;
    const sign = negative ? "-" : "";
    if (this.#scale <= 0) {
      const whole = magnitude * 10n ** BigInt(-this.#scale);
      // A whole number below 1000 is written as it is in every format (a count, most often).
      if (whole < 1000n) return sign + whole.toString();
      if (this.format === "BinarySI" && whole >= 1024n) return sign + binaryString(whole);
    }
    return sign + decimalString(magnitude, -this.#scale, this.format);
  }

  /** Quantities are strings in JSON. */
  toJSON(): string {
    return this.toString();
  }
}

/** Texts already parsed, each to its (immutable) quantity. */
const parsedTexts = new Map<string, Quantity>();

/** Parses `quantity` (or returns it, if it is one already). Throws {@link QuantityError}. */
export function parseQuantity(quantity: QuantityLike): Quantity {
  return toQuantity(quantity);
}

/** Thousandths of a quantity, rounded up: cpu `"100m"` → 100, `"1.5"` → 1500. Throws {@link QuantityError}. */
export function milliValue(quantity: QuantityLike): number {
  return toQuantity(quantity).milliValue();
}

/** A quantity rounded up to an integer: `"500Mi"` → 524288000, `"1k"` → 1000. Throws {@link QuantityError}. */
export function quantityValue(quantity: QuantityLike): number {
  return toQuantity(quantity).value();
}

const formatWrong =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// apimachinery's grammar: sign, digits, an optional fraction, then suffix letters, an optional sign and digits.
const quantityPattern = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/;

const decimalSuffixes: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const binarySuffixes: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const decimalSuffixOf = new Map(
  Object.entries(decimalSuffixes).map(([suffix, exponent]) => [exponent, suffix]),
);
const binarySuffixOf = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
// An exponent beyond this is not a resource amount; refusing it keeps 10^exponent cheap to compute.
const maxExponent = 1000;
// A binary quantity is capped at the largest int64, as apimachinery's maxAllowed.
const maxBinary = 2n ** 63n - 1n;

function toQuantity(quantity: QuantityLike): Quantity {
  return typeof quantity === "object" ? quantity : Quantity.parse(quantity);
}

function parseText(text: string, input: unknown): Quantity {
  const match = quantityPattern.exec(text);
  if (text === "" || match === null) throw new QuantityError(input, formatWrong);
  const [, sign = "", whole = "", fraction, suffix = ""] = match;
  if (whole === "" && fraction === undefined) throw new QuantityError(input, formatWrong);
  let format: QuantityFormat;
  let exponent: number;
  let binaryExponent = 0;
  if (suffix in decimalSuffixes) {
    format = "DecimalSI";
    exponent = decimalSuffixes[suffix]!;
  } else if (suffix in binarySuffixes) {
    format = "BinarySI";
    exponent = 0;
    binaryExponent = binarySuffixes[suffix]!;
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    format = "DecimalExponent";
    exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > maxExponent) {
      throw new QuantityError(input, `the exponent of a quantity must be within ±${maxExponent}`);
    }
  } else {
    throw new QuantityError(input, "unable to parse quantity's suffix");
  }
  const digits = `${whole}${fraction ?? ""}` || "0";
  const magnitude = BigInt(digits) << BigInt(binaryExponent);
  let [rounded, scale] = roundUpToNano(magnitude, (fraction?.length ?? 0) - exponent);
  if (format === "BinarySI") {
    // Capped at 2^63−1; between 0 and 1 (after rounding up to a nano-unit) it is decimal, as apimachinery has it.
    // (A binary quantity has no exponent, so its scale is the fraction's length: never negative.)
    if (rounded > maxBinary * 10n ** BigInt(scale)) [rounded, scale] = [maxBinary, 0];
    if (rounded > 0n && scale > 0 && rounded < 10n ** BigInt(scale)) format = "DecimalSI";
  }
  return new Quantity(sign === "-" ? -rounded : rounded, -scale, format);
}

// `unscaled × 10^-scale` rounded away from zero to at most nine decimal places (a nano-unit).
function roundUpToNano(unscaled: bigint, scale: number): [bigint, number] {
  if (scale <= 9) return [unscaled, scale];
  const divisor = 10n ** BigInt(scale - 9);
  const negative = unscaled < 0n;
  const magnitude = negative ? -unscaled : unscaled;
  let rounded = magnitude / divisor;
  if (rounded * divisor !== magnitude) rounded += 1n;
  return [negative ? -rounded : rounded, 9];
}

// Moves trailing zeros of `unscaled` into the scale, so equal amounts have one representation.
function normalize(unscaled: bigint, scale: number): [bigint, number] {
  if (unscaled === 0n) return [0n, 0];
  while (unscaled % 10n === 0n) {
    unscaled /= 10n;
    scale -= 1;
  }
  return [unscaled, scale];
}

function rescale(unscaled: bigint, scale: number, to: number): bigint {
  return unscaled * 10n ** BigInt(to - scale);
}

// ⌈unscaled × 10^-shift⌉: rounds towards +∞, as apimachinery's scaledValue does.
function ceilDivide(unscaled: bigint, shift: number): bigint {
  if (shift <= 0) return unscaled * 10n ** BigInt(-shift);
  const divisor = 10n ** BigInt(shift);
  const quotient = unscaled / divisor; // truncates towards zero
  return quotient * divisor < unscaled ? quotient + 1n : quotient;
}

// A positive whole number as mantissa × 1024^n with the largest n.
function binaryString(whole: bigint): string {
  let mantissa = whole;
  let power = 0;
  while (mantissa % 1024n === 0n && power < binarySuffixOf.length - 1) {
    mantissa /= 1024n;
    power += 1;
  }
  return `${mantissa}${binarySuffixOf[power]}`;
}

// A positive magnitude × 10^exponent as an integer mantissa and an exponent that is a multiple of 3.
function decimalString(magnitude: bigint, exponent: number, format: QuantityFormat): string {
  let mantissa = magnitude;
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent -= 1;
  }
  if (format === "DecimalExponent") return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
  // E is the largest decimal suffix; a larger amount is written as a multiple of it.
  if (exponent > 18) {
    mantissa *= 10n ** BigInt(exponent - 18);
    exponent = 18;
  }
  return `${mantissa}${decimalSuffixOf.get(exponent)}`;
}
