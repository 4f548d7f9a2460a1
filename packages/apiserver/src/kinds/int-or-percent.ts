import type { IntOrPercent } from "@reconcile/api";
import { type FieldErrors, GoSyntax } from "../registry/field-errors.js";

/** An IntOrString as upstream's field errors print it (`intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}`). */
export function intOrStringValue(value: IntOrPercent): GoSyntax {
  return typeof value === "string"
    ? new GoSyntax(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(value)}}`)
    : new GoSyntax(`intstr.IntOrString{Type:0, IntVal:${value}, StrVal:""}`);
}

const percent = /^[0-9]+%$/;

/** upstream's `ValidatePositiveIntOrPercent`: a whole number not below 0, or a percent string. */
export function validatePositiveIntOrPercent(
  value: IntOrPercent | undefined,
  field: string,
  errors: FieldErrors,
): void {
  if (value === undefined) return;
  if (typeof value === "number") {
    if (value < 0) errors.invalid(field, value, "must be greater than or equal to 0");
    return;
  }
  if (!percent.test(value))
    errors.invalid(
      field,
      intOrStringValue(value),
      "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    );
}

/** upstream's `IsNotMoreThan100Percent`: a percent string of at most 100 %. */
export function notMoreThan100Percent(
  value: IntOrPercent | undefined,
  field: string,
  errors: FieldErrors,
): void {
  if (typeof value === "string" && percent.test(value) && Number.parseInt(value, 10) > 100)
    errors.invalid(field, intOrStringValue(value), "must not be greater than 100%");
}

/** upstream's `getIntOrPercentValue`: a percent's number, an int, or a string's `Atoi` (0 when it is none). */
export function intOrPercentValue(value: IntOrPercent | undefined): number {
  if (value === undefined) return 0;
  if (typeof value === "number") return value;
  if (percent.test(value)) return Number.parseInt(value, 10);
  return /^[+-]?[0-9]+$/.test(value) ? Number.parseInt(value, 10) : 0;
}
