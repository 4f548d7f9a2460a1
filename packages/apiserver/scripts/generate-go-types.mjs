#!/usr/bin/env node
// Writes src/schemas/builtin-go-types.generated.ts: the Go type of every field of the built-in
// definitions in builtin-openapi.generated.ts, as Go's reflect package prints it (`[]v1.Container`,
// `map[string]string`, `*int32`, `v1.Protocol`), and the underlying type of each named non-struct
// type those fields use (`v1.ResourceList` → `map[v1.ResourceName]resource.Quantity`). The decoder
// words its type errors with them, as Go's encoding/json words kube-apiserver's. The types are read
// from the Go sources of the release the server advertises (Apache-2.0, The Kubernetes Authors):
//
//   node packages/apiserver/scripts/generate-go-types.mjs <k8s.io/api> <k8s.io/apimachinery> <k8s.io/apiextensions-apiserver>
//
// each a checkout at v0.32.x. Run it again with the next minor's sources.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [apiRoot, machineryRoot, extensionsRoot] = process.argv.slice(2);
if (!extensionsRoot) {
  console.error(
    "usage: generate-go-types.mjs <k8s.io/api> <k8s.io/apimachinery> <k8s.io/apiextensions-apiserver>",
  );
  process.exit(2);
}

const here = dirname(fileURLToPath(import.meta.url));
const generated = readFileSync(join(here, "../src/schemas/builtin-openapi.generated.ts"), "utf8");
// The definitions are one string literal (the formatter's quotes): read it as JavaScript reads it.
const literal = /export const builtinDefinitionsJSON =\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*");/s.exec(
  generated,
)?.[1];
if (literal === undefined) throw new Error("builtin-openapi.generated.ts has no builtinDefinitionsJSON");
const definitions = JSON.parse(new Function(`return ${literal};`)());

/** The directory of a definition's Go package, or undefined for one outside the three modules. */
function packageDir(definitionName) {
  const prefixes = [
    ["io.k8s.api.", apiRoot, ""],
    ["io.k8s.apimachinery.pkg.", machineryRoot, "pkg/"],
    ["io.k8s.apiextensions-apiserver.pkg.", extensionsRoot, "pkg/"],
  ];
  for (const [prefix, root, sub] of prefixes) {
    if (!definitionName.startsWith(prefix)) continue;
    const segments = definitionName.slice(prefix.length).split(".");
    segments.pop();
    return join(root, sub, ...segments);
  }
  return undefined;
}

/** A Go package's types: structs (their fields in order) and named non-struct types. */
const packages = new Map();
function packageOf(dir) {
  let pkg = packages.get(dir);
  if (pkg !== undefined) return pkg;
  pkg = { name: dir.split("/").pop(), structs: new Map(), named: new Map(), enums: new Set(), constants: [] };
  packages.set(dir, pkg);
  for (const file of readdirSync(dir)) {
    if (
      !file.endsWith(".go") ||
      file.endsWith("_test.go") ||
      file.startsWith("zz_generated") ||
      file.includes(".pb.")
    )
      continue;
    parseFile(readFileSync(join(dir, file), "utf8"), pkg);
  }
  return pkg;
}

const builtinTypes = new Set([
  "string",
  "bool",
  "byte",
  "int",
  "int32",
  "int64",
  "uint",
  "uint32",
  "uint64",
  "float32",
  "float64",
  "interface{}",
  "any",
]);

function parseFile(text, pkg) {
  const imports = new Map();
  for (const match of text.matchAll(/^\s*(?:(\w+)\s+)?"([^"]+)"\s*$/gm)) {
    const path = match[2];
    imports.set(match[1] ?? path.split("/").pop(), path.split("/").pop());
  }
  const qualify = (expr) =>
    expr.replace(/(\*|\[\]|map\[|\])?([A-Za-z_][\w]*)(\.[A-Za-z_]\w*)?/g, (all, lead = "", first, second) => {
      if (second !== undefined) return `${lead}${imports.get(first) ?? first}${second}`;
      if (first === "map" || builtinTypes.has(first)) return all;
      return `${lead}${pkg.name}.${first}`;
    });
  const lines = text.split("\n");
  // The comment lines just above the current line, for `// +enum` markers and constants' docs.
  let comments = [];
  let inConst = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const comment = /^\s*\/\/\s?(.*)$/.exec(line);
    if (comment !== null) {
      comments.push(comment[1]);
      continue;
    }
    const above = comments;
    comments = [];
    if (/^const \($/.test(line)) inConst = true;
    else if (inConst && /^\)/.test(line)) inConst = false;
    const constant = inConst
      ? /^\s*(\w+)\s+(\w+)\s*=\s*"([^"]*)"/.exec(line)
      : /^const (\w+)\s+(\w+)\s*=\s*"([^"]*)"/.exec(line);
    if (constant !== null) {
      const doc = above.filter((text) => !text.startsWith("+")).join(" ");
      pkg.constants.push({ name: constant[1], type: constant[2], value: constant[3], comment: doc });
      continue;
    }
    const enumType = /^type (\w+) string\b/.exec(line);
    if (enumType !== null && above.some((text) => text.trim() === "+enum")) pkg.enums.add(enumType[1]);
    const struct = /^type (\w+) struct \{\s*$/.exec(line);
    if (struct !== null) {
      const fields = [];
      for (i++; i < lines.length && !/^\}/.test(lines[i]); i++) {
        const field = lines[i].replace(/\/\/.*$/, "");
        const named = /^\s*(\w+)\s+([^\s`]+)\s+`[^`]*json:"([^"]*)"/.exec(field);
        const embedded = /^\s*([\w.*]+)\s+`[^`]*json:"([^"]*)"/.exec(field);
        if (named !== null)
          fields.push({
            json: named[3].split(",")[0] || named[1],
            type: qualify(named[2]),
            inline: false,
            omitempty: named[3].split(",").includes("omitempty"),
          });
        else if (embedded !== null) {
          const json = embedded[2].split(",")[0];
          const inline = json === "" && embedded[2].split(",").includes("inline");
          fields.push({ json, type: qualify(embedded[1]), inline, embedded: embedded[1] });
        }
      }
      pkg.structs.set(struct[1], fields);
      continue;
    }
    const namedType = /^type (\w+) ([^\s{]+)\s*(?:\/\/.*)?$/.exec(line);
    if (namedType !== null && namedType[2] !== "struct")
      pkg.named.set(`${pkg.name}.${namedType[1]}`, qualify(namedType[2]));
  }
}

/** JSON field name → Go type of a struct, its inlined embedded structs' fields flattened in. */
function structFields(dir, name) {
  const pkg = packageOf(dir);
  const fields = pkg.structs.get(name);
  if (fields === undefined) return undefined;
  const out = {};
  for (const field of fields) {
    if (field.json === "-") continue;
    if (field.inline) {
      const [qualifier, embeddedName] = field.embedded.replace("*", "").includes(".")
        ? field.embedded.replace("*", "").split(".")
        : [undefined, field.embedded.replace("*", "")];
      // TypeMeta's apiVersion and kind are read before the object, never as a type error.
      if (embeddedName === "TypeMeta" || embeddedName === "ListMeta") continue;
      if (qualifier !== undefined) throw new Error(`${name}: inlined ${field.embedded} from another package`);
      const inlined = structFields(dir, embeddedName);
      Object.assign(out, inlined);
      // An inlined field keeps its own tag's omitempty.
      for (const json of Object.keys(inlined ?? {}))
        if (omitted.has(`${dir}#${embeddedName}.${json}`)) omitted.add(`${dir}#${name}.${json}`);
    } else {
      out[field.json] = field.type;
      if (field.omitempty) omitted.add(`${dir}#${name}.${field.json}`);
    }
  }
  return out;
}

/** `dir#Struct.json` of every field tagged `omitempty`. */
const omitted = new Set();

/**
 * What Go's encoding/json writes for a field the object does not set: a struct
 * value (even `omitempty`, which does not apply to structs) as `#<definition>`,
 * to be filled in turn; a scalar without `omitempty` as its zero value's JSON;
 * `null` for a nil slice, map or pointer without `omitempty`, and for a
 * metav1.Time or MicroTime held by value (their MarshalJSON writes a zero time
 * as null, which `omitempty` does not see). Other types with their own JSON
 * form (Quantity, IntOrString, …) are left out.
 */
const ownJSON = new Set([
  "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
  "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
  "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
  "io.k8s.apimachinery.pkg.api.resource.Quantity",
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
  "io.k8s.apimachinery.pkg.runtime.RawExtension",
  "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
]);
function emptyValue(goType, property, omitempty) {
  if (goType === "v1.Time" || goType === "v1.MicroTime") return "null";
  if (goType.startsWith("*") || goType.startsWith("[]") || goType.startsWith("map["))
    return omitempty ? undefined : "null";
  const ref = (property.$ref ?? property.allOf?.[0]?.$ref)?.replace("#/definitions/", "");
  if (ref !== undefined) {
    if (ownJSON.has(ref) || definitions[ref]?.properties === undefined) return undefined;
    return `#${ref}`;
  }
  if (omitempty) return undefined;
  let underlying = goType;
  for (let i = 0; i < 5 && !builtinTypes.has(underlying); i++)
    underlying = allNamedTypes().get(underlying) ?? "";
  if (underlying === "string") return '""';
  if (underlying === "bool") return "false";
  if (/^(u?int(8|16|32|64)?|float(32|64)|byte)$/.test(underlying)) return "0";
  return undefined;
}
let namedCache;
function allNamedTypes() {
  if (namedCache !== undefined) return namedCache;
  namedCache = new Map();
  for (const pkg of packages.values())
    for (const [name, underlying] of pkg.named) namedCache.set(name, underlying);
  return namedCache;
}

const emptyValues = {};
const enums = {};

/**
 * The values of a field whose Go type is a string type marked `+enum` in the
 * struct's own package, sorted, each with its constant's doc comment as
 * kube-openapi words it (the constant's name dropped from its start, spaces
 * collapsed).
 */
function enumOf(dir, goType) {
  const pkg = packageOf(dir);
  const match = new RegExp(`^\\*?${pkg.name}\\.(\\w+)$`).exec(goType);
  if (match === null || !pkg.enums.has(match[1])) return undefined;
  const byValue = new Map();
  for (const constant of pkg.constants) {
    if (constant.type !== match[1] || byValue.has(constant.value)) continue;
    let doc = constant.comment.trim();
    if (doc.startsWith(constant.name)) doc = doc.slice(constant.name.length).trim();
    byValue.set(constant.value, doc.replace(/\s+/g, " "));
  }
  if (byValue.size === 0) return undefined;
  return [...byValue].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
const goTypes = {};
const namedUsed = new Set();
for (const [definitionName, definition] of Object.entries(definitions)) {
  if (definition.properties === undefined) continue;
  const dir = packageDir(definitionName);
  if (dir === undefined) continue;
  const structName = definitionName.split(".").pop();
  const fields = structFields(dir, structName);
  if (fields === undefined) throw new Error(`no Go struct ${structName} in ${dir}`);
  const kept = {};
  const empty = {};
  for (const property of Object.keys(definition.properties)) {
    if (property === "apiVersion" || property === "kind") {
      if (fields[property] !== undefined) kept[property] = fields[property];
      continue;
    }
    const type = fields[property];
    if (type === undefined) throw new Error(`${definitionName}.${property}: no Go field`);
    kept[property] = type;
    const enumValues = enumOf(dir, type);
    if (enumValues !== undefined) (enums[definitionName] ??= {})[property] = enumValues;
    const written = emptyValue(
      type,
      definition.properties[property],
      omitted.has(`${dir}#${structName}.${property}`),
    );
    if (written !== undefined) empty[property] = written;
    for (const match of type.matchAll(/[a-z]\w*\.[A-Z]\w*/g)) namedUsed.add(match[0]);
  }
  goTypes[definitionName] = kept;
  if (Object.keys(empty).length > 0) emptyValues[definitionName] = empty;
}

const namedTypes = {};
const allNamed = new Map();
for (const pkg of packages.values())
  for (const [name, underlying] of pkg.named) {
    // Named by package name alone, as reflect names them: two packages "v1" must agree.
    const known = allNamed.get(name);
    if (known !== undefined && known !== underlying)
      throw new Error(`${name} is both ${known} and ${underlying}`);
    allNamed.set(name, underlying);
  }
const queue = [...namedUsed];
while (queue.length > 0) {
  const name = queue.pop();
  const underlying = allNamed.get(name);
  if (underlying === undefined || Object.hasOwn(namedTypes, name)) continue;
  namedTypes[name] = underlying;
  for (const match of underlying.matchAll(/[a-z]\w*\.[A-Z]\w*/g)) queue.push(match[0]);
}

const sorted = (record) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
const out = join(here, "../src/schemas/builtin-go-types.generated.ts");
writeFileSync(
  out,
  `// Generated by scripts/generate-go-types.mjs from the Go types of k8s.io/api, k8s.io/apimachinery
// and k8s.io/apiextensions-apiserver (v0.32; Apache-2.0, The Kubernetes Authors). Do not edit.

/** Definition name → JSON field → the field's Go type, as reflect prints it. */
export const builtinGoFieldTypes: Readonly<Record<string, Readonly<Record<string, string>>>> = ${JSON.stringify(sorted(goTypes))};

/** A named Go type that is no struct → its underlying type. */
export const builtinGoNamedTypes: Readonly<Record<string, string>> = ${JSON.stringify(sorted(namedTypes))};

/**
 * Definition name → JSON field → what Go's encoding/json writes when the field is unset:
 * \`#<definition>\` for a struct value (an object filled in turn); the JSON of a scalar's zero value
 * (\`""\`, \`0\`, \`false\`) for a field without \`omitempty\`; \`null\` for a nil slice, map or
 * pointer without \`omitempty\` and for a zero metav1.Time or MicroTime held by value.
 */
export const builtinGoEmptyValues: Readonly<Record<string, Readonly<Record<string, string>>>> = ${JSON.stringify(sorted(emptyValues))};

/**
 * Definition name → JSON field → the values of its \`+enum\` Go type, sorted, each with its
 * constant's doc: what kube-openapi adds to the field's schema (\`enum\`, and "Possible enum
 * values" in its description).
 */
export const builtinGoEnums: Readonly<Record<string, Readonly<Record<string, readonly (readonly [string, string])[]>>>> = ${JSON.stringify(sorted(enums))};
`,
);
// The repository's formatter has the last word on quotes and commas.
execFileSync("node", [join(here, "../../../scripts/pnpm.mjs"), "exec", "biome", "format", "--write", out], {
  stdio: "ignore",
});
console.log(`${out}: ${Object.keys(goTypes).length} structs, ${Object.keys(namedTypes).length} named types`);
