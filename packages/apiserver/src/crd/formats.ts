import { isIPv4, isIPv6 } from "node:net";

/**
 * The string formats kube-openapi validates (its strfmt default registry). Lookup removes hyphens, so
 * `date-time` and `datetime` are one format. Any other format (int32, int64, double, a typo) is not
 * validated, though it stays in the published schema.
 */
export const validatedFormats: ReadonlyMap<string, (value: string) => boolean> = new Map<
  string,
  (value: string) => boolean
>([
  ["bsonobjectid", (s) => /^[0-9a-fA-F]{24}$/.test(s)],
  ["uri", isRequestURI],
  ["email", (s) => /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+$/.test(s)],
  ["hostname", isHostname],
  ["ipv4", (s) => isIPv4(s)],
  ["ipv6", (s) => isIPv6(s)],
  ["cidr", isCIDR],
  ["mac", (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(s)],
  ["uuid", (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ["uuid3", (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ["uuid4", (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ["uuid5", (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ["isbn", (s) => isISBN10(s) || isISBN13(s)],
  ["isbn10", isISBN10],
  ["isbn13", isISBN13],
  ["creditcard", isCreditCard],
  ["ssn", (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s)],
  ["hexcolor", (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s)],
  ["rgbcolor", (s) => /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/.test(s)],
  ["byte", (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)],
  ["password", () => true],
  ["date", isDate],
  ["duration", (s) => durationPattern.test(s)],
  ["datetime", isDateTime],
]);

/** The validator of a schema format, or undefined when kube-openapi does not validate that format. */
export function formatValidator(format: string): ((value: string) => boolean) | undefined {
  return validatedFormats.get(format.replaceAll("-", ""));
}

/** What a schema's `format` is checked with: only on a string, and only a format kube-openapi validates. */
export function checkedFormat(schema: {
  type?: string;
  format?: string;
}): ((value: string) => boolean) | undefined {
  return schema.format && schema.type === "string" ? formatValidator(schema.format) : undefined;
}

// strfmt durations: Go's units plus d and w, optionally spelled out, several parts allowed.
const durationPattern =
  /^(\s*[+-]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*)+$/;

function isRequestURI(s: string): boolean {
  if (s.startsWith("/")) return !/\s/.test(s);
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function isHostname(s: string): boolean {
  if (s.length === 0 || s.length > 255) return false;
  return s
    .replace(/\.$/, "")
    .split(".")
    .every((label) => /^[a-zA-Z0-9\p{L}]([a-zA-Z0-9\p{L}-]{0,61}[a-zA-Z0-9\p{L}])?$/u.test(label));
}

function isCIDR(s: string): boolean {
  const [ip, bits, extra] = s.split("/");
  if (extra !== undefined || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  if (isIPv4(ip ?? "")) return Number(bits) <= 32;
  if (isIPv6(ip ?? "")) return Number(bits) <= 128;
  return false;
}

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

function isDateTime(s: string): boolean {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (!m?.[1] || !isDate(m[1])) return false;
  return Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 61;
}

function isISBN10(s: string): boolean {
  const digits = s.replace(/[- ]/g, "");
  if (!/^\d{9}[\dX]$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (digits[i] === "X" ? 10 : Number(digits[i])) * (10 - i);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const digits = s.replace(/[- ]/g, "");
  if (!/^\d{13}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(digits[i]) * (i % 2 === 0 ? 1 : 3);
  return sum % 10 === 0;
}

function isCreditCard(s: string): boolean {
  const digits = s.replace(/[- ]/g, "");
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
