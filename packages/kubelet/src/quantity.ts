import { milliValue, quantityValue } from "@reconcile/api";

// Admission and node capacity read quantities through @reconcile/api's
// resource.Quantity; a value that does not parse counts as zero, as an
// unset request does.

/** A cpu quantity in millicores, rounded up as `MilliValue` does; 0 when absent or malformed. */
export function milliCpu(value: string | number | undefined): number {
  if (value === undefined) return 0;
  try {
    return milliValue(value);
  } catch {
    return 0;
  }
}

/** Any other quantity in whole units, rounded up as `Value` does; 0 when absent or malformed. */
export function wholeUnits(value: string | number | undefined): number {
  if (value === undefined) return 0;
  try {
    return quantityValue(value);
  } catch {
    return 0;
  }
}
