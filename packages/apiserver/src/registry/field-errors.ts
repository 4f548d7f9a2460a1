import type { FieldError } from "@reconcile/api";

/**
 * Collects field errors with apimachinery's messages (`field.Required`,
 * `field.Invalid`, ...), so validation reads like Kubernetes' validation code.
 */
export class FieldErrors {
  readonly list: FieldError[] = [];

  get empty(): boolean {
    return this.list.length === 0;
  }

  required(field: string, detail = ""): void {
    this.list.push({
      type: "FieldValueRequired",
      field,
      message: `${field}: Required value${suffix(detail)}`,
    });
  }

  invalid(field: string, value: unknown, detail: string): void {
    this.list.push({
      type: "FieldValueInvalid",
      field,
      message: `${field}: Invalid value: ${show(value)}${suffix(detail)}`,
    });
  }

  notSupported(field: string, value: unknown, supported: readonly string[]): void {
    this.list.push({
      type: "FieldValueNotSupported",
      field,
      message: `${field}: Unsupported value: ${show(value)}: supported values: ${supported.map((s) => `"${s}"`).join(", ")}`,
    });
  }

  notFound(field: string, value: unknown): void {
    this.list.push({ type: "FieldValueNotFound", field, message: `${field}: Not found: ${show(value)}` });
  }

  duplicate(field: string, value: unknown): void {
    this.list.push({
      type: "FieldValueDuplicate",
      field,
      message: `${field}: Duplicate value: ${show(value)}`,
    });
  }

  /** `field.TooLong`: the value is omitted, as apimachinery omits it. */
  tooLong(field: string, maxBytes: number): void {
    this.list.push({
      type: "FieldValueTooLong",
      field,
      message: `${field}: Too long: may not be more than ${maxBytes} bytes`,
    });
  }

  forbidden(field: string, detail: string): void {
    this.list.push({ type: "FieldValueForbidden", field, message: `${field}: Forbidden: ${detail}` });
  }

  typeInvalid(field: string, value: unknown, detail: string): void {
    this.list.push({
      type: "FieldValueTypeInvalid",
      field,
      message: `${field}: Invalid value: ${show(value)}: ${detail}`,
    });
  }
}

function suffix(detail: string): string {
  return detail ? `: ${detail}` : "";
}

/**
 * A bad value written as Go's `%#v` writes it: what field errors print for a
 * struct without a value-receiver `String()`, such as an IntOrString.
 */
export class GoSyntax {
  constructor(readonly text: string) {}
}

function show(value: unknown): string {
  if (value instanceof GoSyntax) return value.text;
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === undefined) return "null";
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
