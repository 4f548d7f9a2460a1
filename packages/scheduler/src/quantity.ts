import { Quantity, quantityValue } from "@reconcile/api";

// Quantities are read by @reconcile/api's `Quantity` (apimachinery's resource.Quantity);
// these names stay for one release so that existing imports keep working.
export { milliValue, QuantityError } from "@reconcile/api";

/** @deprecated Use `quantityValue` from `@reconcile/api`. */
export const value: (quantity: string | number) => number = quantityValue;

/**
 * The quantity as a number of base units (bytes, cores, …); a number is returned as it is.
 * @deprecated Use `Quantity.parse(quantity)` from `@reconcile/api` (exact), or its `asApproximateFloat64()`.
 */
export function parseQuantity(quantity: string | number): number {
  const parsed = Quantity.parse(quantity); // throws QuantityError for NaN, ±Infinity and malformed text
  return typeof quantity === "number" ? quantity : parsed.asApproximateFloat64();
}
