import type { FieldError } from "@reconcile/api";
import { GoSyntax } from "../registry/field-errors.js";

/**
 * Field errors with apimachinery's wording (`field.Required`, `field.Invalid`, `field.TooMany`, ...).
 * An empty path prints as `<nil>`, as a nil `field.Path` does upstream.
 */
export class SchemaErrors {
  readonly list: FieldError[] = [];

  required(field: string, detail = ""): void {
    this.push("FieldValueRequired", field, `Required value${suffix(detail)}`);
  }
  invalid(field: string, value: unknown, detail = ""): void {
    this.push("FieldValueInvalid", field, `Invalid value: ${showValue(value)}${suffix(detail)}`);
  }
  typeInvalid(field: string, value: unknown, detail: string): void {
    this.push("FieldValueTypeInvalid", field, `Invalid value: ${showValue(value)}${suffix(detail)}`);
  }
  notSupported(field: string, value: unknown, supported: readonly unknown[]): void {
    const list = supported
      .map((s) => (typeof s === "string" ? JSON.stringify(s) : JSON.stringify(s)))
      .join(", ");
    this.push(
      "FieldValueNotSupported",
      field,
      `Unsupported value: ${showValue(value)}: supported values: ${list}`,
    );
  }
  forbidden(field: string, detail: string): void {
    this.push("FieldValueForbidden", field, `Forbidden: ${detail}`);
  }
  duplicate(field: string, value: unknown): void {
    this.push("FieldValueDuplicate", field, `Duplicate value: ${showValue(value)}`);
  }
  tooLong(field: string, max: number): void {
    this.push("FieldValueTooLong", field, `Too long: may not be more than ${max} bytes`);
  }
  tooMany(field: string, actual: number, max: number): void {
    this.push("FieldValueTooMany", field, `Too many: ${actual}: must have at most ${max} items`);
  }
  /** Adds an error whose detail was built elsewhere (CEL results choose their own type). */
  push(type: FieldError["type"], field: string, body: string): void {
    const shown = field === "" ? "<nil>" : field;
    const message = `${shown}: ${body}`;
    // Upstream de-duplicates an aggregate before printing it.
    if (this.list.some((e) => e.message === message)) return;
    this.list.push({ type, field: shown, message });
  }
}

/**
 * A value as a field error prints it: strings Go-quoted, numbers and booleans bare, null as `"null"`, a
 * Go value built for it (a CRD's own types) as Go's `%#v` prints it, and a custom resource's maps and
 * lists as JSON (the form kube-apiserver uses from 1.34; 1.32 printed Go's `%#v`).
 */
export function showValue(value: unknown): string {
  if (value instanceof GoSyntax) return value.text;
  if (value === null || value === undefined) return '"null"';
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  return JSON.stringify(value);
}

/** Joins a child path as field.Path does: `a.b`. */
export function childPath(parent: string, name: string): string {
  return parent === "" ? name : `${parent}.${name}`;
}

function suffix(detail: string): string {
  return detail ? `: ${detail}` : "";
}
