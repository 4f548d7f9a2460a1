/**
 * Name and label validation with apimachinery's rules and messages
 * (`k8s.io/apimachinery/pkg/util/validation`). Each function returns the list
 * of problems, empty when the value is valid, so callers can join them into
 * one message as Kubernetes does.
 */

const qualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`);
const qualifiedNameMaxLength = 63;

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);
/** The longest label value Kubernetes accepts. */
export const labelValueMaxLength = 63;

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);
/** The longest RFC 1123 label (a namespace name, for example). */
export const dns1123LabelMaxLength = 63;

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);
/** The longest RFC 1123 subdomain (most object names). */
export const dns1123SubdomainMaxLength = 253;

/**
 * A label or annotation key: `name` or `prefix/name`, the name at most 63
 * characters, the prefix a DNS subdomain (`IsQualifiedName`).
 */
export function isQualifiedName(value: string): string[] {
  // The common cases first: a key met before (labels and annotations recur across a kind's
  // objects), and a short plain name, which needs one regex test.
  if (validQualifiedNames.has(value)) return [];
  if (value.length <= qualifiedNameMaxLength && value.indexOf("/") === -1 && qualifiedNameRegexp.test(value))
    return [];
  const errors = qualifiedNameProblems(value);
  if (errors.length === 0) remember(validQualifiedNames, value);
  return errors;
}

/** Strings already found valid, so the same keys and values are not tested again on every write. */
const validQualifiedNames = new Set<string>();
const validLabelValues = new Set<string>();

function remember(valid: Set<string>, value: string): void {
  if (valid.size >= 10_000) valid.clear();
  valid.add(value);
}

function qualifiedNameProblems(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errors.push("prefix part must be non-empty");
    else for (const message of isDNS1123Subdomain(prefix)) errors.push(`prefix part ${message}`);
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errors.push("name part must be non-empty");
  else if (byteLength(name) > qualifiedNameMaxLength)
    errors.push(`name part ${maxLenError(qualifiedNameMaxLength)}`);
  if (!qualifiedNameRegexp.test(name)) {
    errors.push(
      `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")}`,
    );
  }
  return errors;
}

/** A label value: empty, or at most 63 alphanumerics, `-`, `_`, `.` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  if (validLabelValues.has(value)) return [];
  const errors: string[] = [];
  if (byteLength(value) > labelValueMaxLength) errors.push(maxLenError(labelValueMaxLength));
  if (!labelValueRegexp.test(value)) {
    errors.push(regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"));
  }
  if (errors.length === 0) remember(validLabelValues, value);
  return errors;
}

/** An RFC 1123 label: lower-case alphanumerics and `-`, at most 63 characters. */
export function isDNS1123Label(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > dns1123LabelMaxLength) errors.push(maxLenError(dns1123LabelMaxLength));
  if (!dns1123LabelRegexp.test(value)) {
    errors.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"));
  }
  return errors;
}

/** A port number (upstream `IsValidPortNum`): 1 to 65535. */
export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : ["must be between 1 and 65535, inclusive"];
}

/** A port name (upstream `IsValidPortName`, an IANA service name): at most 15 of `a-z`, `0-9` and `-`, a letter among them. */
export function isValidPortName(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 15) problems.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name))
    problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(name)) problems.push("must contain at least one letter (a-z)");
  if (name.includes("--")) problems.push("must not contain consecutive hyphens");
  if (name.startsWith("-") || name.endsWith("-")) problems.push("must not begin or end with a hyphen");
  return problems;
}

const configMapKeyFmt = "[-._a-zA-Z0-9]+";
const configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const configMapKeyRegexp = new RegExp(`^${configMapKeyFmt}$`);

/**
 * A ConfigMap or Secret key (upstream `IsConfigMapKey`): alphanumerics, `-`,
 * `_` and `.`, at most 253 characters, and neither `.`, `..` nor starting with `..`.
 */
export function isConfigMapKey(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > dns1123SubdomainMaxLength) errors.push(maxLenError(dns1123SubdomainMaxLength));
  if (!configMapKeyRegexp.test(value))
    errors.push(regexError(configMapKeyErrMsg, configMapKeyFmt, "key.name", "KEY_NAME", "key-name"));
  if (value === ".") errors.push("must not be '.'");
  else if (value === "..") errors.push("must not be '..'");
  else if (value.startsWith("..")) errors.push("must not start with '..'");
  return errors;
}

/** An RFC 1123 subdomain: dot-separated RFC 1123 labels, at most 253 characters. */
export function isDNS1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > dns1123SubdomainMaxLength) errors.push(maxLenError(dns1123SubdomainMaxLength));
  if (!dns1123SubdomainRegexp.test(value)) {
    errors.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"));
  }
  return errors;
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

// Upstream joins the examples with " or " after a "', " separator, hence the double space.
function regexError(message: string, format: string, ...examples: string[]): string {
  const shown = examples.map((example) => `'${example}', `).join(" or ");
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

/** Lengths count UTF-8 bytes, as Go's `len` does. */
function byteLength(value: string): number {
  let bytes = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
