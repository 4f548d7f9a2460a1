// Int-or-string values that stand for a count (`maxSurge`, `maxUnavailable`,
// `minAvailable`): an integer, or a percentage of a total.

/** A count or a percentage (`"25%"`): apimachinery's IntOrString where it means an amount. */
export type IntOrPercent = number | string;

/**
 * The absolute value of an int-or-percent against `total` (apimachinery's
 * `GetScaledValueFromIntOrPercent`): an int as is, `"N%"` as N% of `total`
 * rounded up or down. Throws on a string that is not an integer percentage.
 */
export function getScaledValueFromIntOrPercent(
  value: IntOrPercent | undefined,
  total: number,
  roundUp: boolean,
): number {
  if (value === undefined || value === null) throw new Error("nil value for IntOrString");
  if (typeof value === "number") return value;
  if (!value.endsWith("%")) {
    throw new Error("invalid value for IntOrString: invalid type: string is not a percentage");
  }
  const digits = value.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) {
    throw new Error(`invalid value for IntOrString: invalid value "${value}"`);
  }
  const percent = Number.parseInt(digits, 10);
  const exact = (percent * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}
