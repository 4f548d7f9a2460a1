import { newBadRequest } from "@reconcile/api";
import { type Document, isMap, isScalar, isSeq, parseDocument, stringify } from "yaml";
import { checkNesting } from "../limits.js";
import { parseMediaTypes } from "./negotiation.js";

// YAML request bodies (`Content-Type: application/yaml`, and apply patches),
// read as kube-apiserver reads them: converted to JSON by sigs.k8s.io/yaml,
// whose go-yaml v2 speaks YAML 1.1 (`on`/`yes` are booleans, `0755` is
// octal, an unquoted timestamp stays a string), a key given twice taking
// its last value and reported as JSON's duplicates are (`fieldValidation`).
// A body of several documents is refused rather than cut to its first, as
// go-yaml would silently do.

function readDocument(body: Buffer): Document.Parsed {
  return parseDocument(body.toString("utf8"), {
    version: "1.1",
    uniqueKeys: false,
    prettyErrors: true,
    // Timestamps stay the strings they were written as, as go-yaml decodes them into JSON values.
    customTags: (tags) => tags.filter((tag) => typeof tag === "string" || !tag.tag.endsWith(":timestamp")),
  });
}

/** Parses a YAML body into JSON values; what is not one YAML document of JSON values is a 400. */
export function parseYaml(body: Buffer): unknown {
  if (body.length === 0) throw newBadRequest("the request body is empty");
  const document = readDocument(body);
  const error = document.errors[0];
  if (error?.code === "MULTIPLE_DOCS")
    throw newBadRequest("the request body holds more than one YAML document: send one object per request");
  if (error !== undefined) throw newBadRequest(`error converting YAML to JSON: ${yamlErrorText(error)}`);
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (cause) {
    throw newBadRequest(`error converting YAML to JSON: ${(cause as Error).message}`);
  }
  checkNesting(value, "the request body");
  assertJsonValues(value, "");
  return value;
}

/** The error's message with its line, as go-yaml words it (`yaml: line 3: …`). */
function yamlErrorText(error: {
  message: string;
  linePos?: readonly { line: number }[] | undefined;
}): string {
  const line = error.linePos?.[0]?.line;
  const message = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
  return line === undefined ? `yaml: ${message}` : `yaml: line ${line}: ${message}`;
}

/** YAML values JSON has no form for (dates, binary, sets, non-string keys) are refused. */
function assertJsonValues(value: unknown, path: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw newBadRequest(`error converting YAML to JSON: ${path || "the body"}: ${value} has no JSON form`);
    return;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) assertJsonValues(item, `${path}[${index}]`);
    return;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value)) assertJsonValues(item, path ? `${path}.${key}` : key);
    return;
  }
  throw newBadRequest(
    `error converting YAML to JSON: ${path || "the body"}: a ${describe(value)} has no JSON form`,
  );
}

function describe(value: unknown): string {
  if (value instanceof Date) return "timestamp";
  if (value instanceof Map) return "mapping with keys that are not strings";
  if (value instanceof Set) return "set";
  if (value instanceof Uint8Array) return "binary value";
  return typeof value;
}

/**
 * The paths of keys a YAML body gives more than once in one mapping
 * (`metadata.name`), in document order, as `duplicateFields` finds them in
 * JSON; a body that does not parse yields none (its decoding fails anyway).
 */
export function yamlDuplicateFields(body: Buffer): string[] {
  const document = readDocument(body);
  if (document.errors.length > 0) return [];
  const found: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const child = path ? `${path}.${key}` : key;
        if (seen.has(key)) found.push(child);
        seen.add(key);
        walk(pair.value, child);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        walk(item, `${path}[${index}]`);
      });
    }
  };
  walk(document.contents, "");
  return found;
}

/**
 * Whether a client asked for YAML: `application/yaml` comes before JSON and
 * protobuf in its Accept header (kube-apiserver's serializers, in the
 * client's order). Watches and Tables are answered in JSON whatever is asked.
 */
export function wantsYaml(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes("yaml")) return false;
  for (const media of parseMediaTypes(accept)) {
    if (media.type === "application/yaml") return Object.keys(media.params).every((key) => key === "q");
    if (
      media.type === "application/json" ||
      media.type === "application/vnd.kubernetes.protobuf" ||
      media.type === "*/*" ||
      media.type === "application/*"
    )
      return false;
  }
  return false;
}

/**
 * A response body in YAML as kube-apiserver's YAML serializer writes it (JSON
 * through sigs.k8s.io/yaml, go-yaml v2): keys sorted, sequences not indented
 * under their key, strings quoted where YAML 1.1 would read them as
 * something else (`"true"`, `"0755"`, timestamps).
 */
export function yamlOf(body: unknown): string {
  return stringify(body, {
    version: "1.1",
    indentSeq: false,
    sortMapEntries: true,
    lineWidth: 0,
    // One object met twice (FieldsV1 trees are shared) is written twice, never as an anchor and alias.
    aliasDuplicateObjects: false,
    // go-yaml's floats need a digit: "." (a managedFields key) is written plain, as kubectl shows it.
    customTags: (tags) =>
      tags.map((tag) =>
        typeof tag !== "string" &&
        tag.tag.endsWith(":float") &&
        tag.format === undefined &&
        tag.test?.test(".")
          ? { ...tag, test: /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*\.[0-9_]*)$/ }
          : tag,
      ),
  });
}
