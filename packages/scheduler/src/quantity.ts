/**
 * Kubernetes resource quantities ("100m", "1.5", "500Mi", "2Gi", "1e3"), as
 * apimachinery's `resource.Quantity` reads them for scheduling: `milliValue`
 * for cpu, `value` for everything else, both rounded up to an integer as
 * upstream's `MilliValue()` and `Value()` do.
 */
export class QuantityError extends RangeError {
  constructor(quantity: unknown) {
    super(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got ${JSON.stringify(quantity)}`,
    );
    this.name = "QuantityError";
  }
}

const binarySuffixes: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const decimalSuffixes: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const quantityPattern = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][-+]?[0-9]+|[KMGTPE]i|[numkMGTPE]?)$/;

/** The quantity as a real number of base units (bytes, cores, …). Throws {@link QuantityError} for a malformed one. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === "number") {
    if (!Number.isFinite(quantity)) throw new QuantityError(quantity);
    return quantity;
  }
  const match = typeof quantity === "string" ? quantityPattern.exec(quantity.trim()) : null;
  if (match === null) throw new QuantityError(quantity);
  const number = Number(match[1]);
  const suffix = match[2] ?? "";
  const isExponent = suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E") && suffix !== "Ei";
  if (isExponent) return number * 10 ** Number(suffix.slice(1));
  const multiplier = binarySuffixes[suffix] ?? decimalSuffixes[suffix];
  if (multiplier === undefined) throw new QuantityError(quantity);
  return number * multiplier;
}

/** Thousandths of the quantity, rounded up (`Quantity.MilliValue()`): "100m" → 100, "1.5" → 1500. */
export function milliValue(quantity: string | number): number {
  return ceilInteger(parseQuantity(quantity) * 1000);
}

/** The quantity rounded up to an integer (`Quantity.Value()`): "500Mi" → 524288000, "1k" → 1000. */
export function value(quantity: string | number): number {
  return ceilInteger(parseQuantity(quantity));
}

// Float products such as 0.1 * 1000 = 100.00000000000001 must not round up to 101.
function ceilInteger(x: number): number {
  const rounded = Math.round(x);
  return Math.abs(x - rounded) < 1e-9 * Math.max(1, Math.abs(x)) ? rounded : Math.ceil(x);
}
