import { type Environment, Optional } from "@marcbachmann/cel-js";
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from "@reconcile/api";
import { chargeCost } from "./cel-cost.js";
import { parseRequestURI } from "./cel-url.js";

// The `format` library: named string formats and their validate().

/** The `format` namespace value (`format.named("uuid")`). */
export class FormatLibrary {}

/** A named format: `validate(s)` is an empty optional when `s` conforms, else the list of problems. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly check: (value: string) => string[],
  ) {}
}

// The validators of upstream's format library, keyed by the names format.named accepts.
const formats: Record<string, (value: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (value) => isDNS1123Label(maskTrailingDash(value)),
  dns1123SubdomainPrefix: (value) => isDNS1123Subdomain(maskTrailingDash(value)),
  dns1035LabelPrefix: (value) => isDNS1035Label(maskTrailingDash(value)),
  labelValue: isValidLabelValue,
  uri: (value) => (typeof parseRequestURI(value) === "string" ? ["invalid URI"] : []),
  uuid: (value) =>
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value)
      ? []
      : ["does not match the UUID format"],
  byte: (value) =>
    /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value) ? [] : ["invalid base64"],
  date: (value) => (isDate(value) ? [] : ["invalid date"]),
  datetime: (value) => (isDateTime(value) ? [] : ["invalid datetime"]),
};

export function registerFormats(env: Environment): void {
  env.registerType("kubernetes.FormatLibrary", FormatLibrary);
  env.registerType("kubernetes.NamedFormat", NamedFormat);
  env.registerConstant("format", "kubernetes.FormatLibrary", new FormatLibrary());
  env.registerFunction(
    "kubernetes.FormatLibrary.named(string): optional<kubernetes.NamedFormat>",
    (_library: FormatLibrary, name: string) => {
      const check = Object.hasOwn(formats, name) ? formats[name] : undefined;
      return check ? Optional.of(new NamedFormat(name, check)) : Optional.none();
    },
  );
  for (const [name, check] of Object.entries(formats)) {
    env.registerFunction(
      `kubernetes.FormatLibrary.${name}(): kubernetes.NamedFormat`,
      () => new NamedFormat(name, check),
    );
  }
  env.registerFunction(
    "kubernetes.NamedFormat.validate(string): optional<list<string>>",
    (format: NamedFormat, value: string) => {
      chargeCost(value.length / 10);
      const problems = format.check(value);
      return problems.length === 0 ? Optional.none() : Optional.of(problems);
    },
  );
}

const dns1035LabelPattern = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** An RFC 1035 label (IsDNS1035Label). */
function isDNS1035Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push("must be no more than 63 characters");
  if (!dns1035LabelPattern.test(value)) {
    errors.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errors;
}

/** A prefix may end in a dash: apimachinery's maskTrailingDash checks it as if it ended in `a`. */
function maskTrailingDash(value: string): string {
  return value.length > 1 && value.endsWith("-") ? `${value.slice(0, -1)}a` : value;
}

function isDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

function isDateTime(value: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  return match?.[1] !== undefined && isDate(match[1]) && !Number.isNaN(Date.parse(value));
}
