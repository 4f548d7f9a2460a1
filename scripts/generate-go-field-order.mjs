#!/usr/bin/env node
// Writes packages/apiserver/src/schemas/go-field-order.generated.ts: for each
// Go struct of the built-in API types, its JSON field names in the order
// encoding/json writes them (the struct's field order, inline embedded
// structs flattened in place). Read from git checkouts of k8s.io/api,
// k8s.io/apimachinery, k8s.io/apiextensions-apiserver and
// k8s.io/kube-aggregator at one release tag:
//
//   node scripts/generate-go-field-order.mjs <dir of the four repositories> [tag]
//
// where the directory holds `api`, `apimachinery`, `apiextensions-apiserver`
// and `kube-aggregator` (each a git repository; bare ones work too), and the
// tag defaults to v0.32.13.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [root, tag = "v0.32.13"] = process.argv.slice(2);
if (!root) {
  console.error("usage: generate-go-field-order.mjs <dir of the repositories> [tag]");
  process.exit(1);
}

/** Each Go package read: its repository, its path there, and the OpenAPI prefix of its types. */
const packages = [];
const apiGroups = execFileSync("git", ["-C", repo("api"), "ls-tree", "-d", "--name-only", tag], {
  encoding: "utf8",
})
  .split("\n")
  .filter(Boolean);
for (const group of apiGroups) {
  const versions = execFileSync(
    "git",
    ["-C", repo("api"), "ls-tree", "-d", "--name-only", `${tag}:${group}`],
    {
      encoding: "utf8",
    },
  )
    .split("\n")
    .filter((v) => /^v\d/.test(v));
  for (const version of versions)
    packages.push({ repo: "api", path: `${group}/${version}`, prefix: `io.k8s.api.${group}.${version}` });
}
packages.push({
  repo: "apimachinery",
  path: "pkg/apis/meta/v1",
  prefix: "io.k8s.apimachinery.pkg.apis.meta.v1",
});
packages.push({
  repo: "apiextensions-apiserver",
  path: "pkg/apis/apiextensions/v1",
  prefix: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
});
packages.push({
  repo: "kube-aggregator",
  path: "pkg/apis/apiregistration/v1",
  prefix: "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
});

function repo(name) {
  for (const candidate of [join(root, name), join(root, `kubernetes+${name}`, "repo")])
    if (existsSync(candidate)) return candidate;
  throw new Error(`no repository ${name} under ${root}`);
}

/** The Go files of a package at the tag, without tests and generated code. */
function goFiles({ repo: name, path }) {
  return execFileSync("git", ["-C", repo(name), "ls-tree", "--name-only", `${tag}:${path}`], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(
      (f) =>
        f.endsWith(".go") &&
        !f.endsWith("_test.go") &&
        !f.startsWith("zz_generated") &&
        !f.includes("generated"),
    )
    .map((f) => execFileSync("git", ["-C", repo(name), "show", `${tag}:${path}/${f}`], { encoding: "utf8" }));
}

/**
 * The structs of some Go source: name → fields in order, each a JSON name or
 * an inline embedded type (`{ inline: "TypeMeta" }`).
 */
function structsOf(source) {
  const structs = new Map();
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const start = /^type (\w+) struct \{\s*$/.exec(lines[i]);
    if (start === null) continue;
    const fields = [];
    for (i++; i < lines.length && lines[i] !== "}"; i++) {
      const line = lines[i].replace(/\/\/.*$/, "").trim();
      if (line === "") continue;
      const field = /^(?:(\w+)\s+)?([\w.*[\]]+)\s*(?:`(.*)`)?$/.exec(line);
      if (field === null) continue;
      const [, name, type, tags] = field;
      const json = /json:"([^"]*)"/.exec(tags ?? "")?.[1];
      if (json === "-") continue;
      const jsonName = json?.split(",")[0] ?? "";
      const inline = (json ?? "").split(",").includes("inline") || (name === undefined && jsonName === "");
      if (inline) fields.push({ inline: type.replace(/^\*/, "").replace(/^\w+\./, "") });
      else if (jsonName !== "") fields.push(jsonName);
      else if (name !== undefined && /^[A-Z]/.test(name)) fields.push(name);
    }
    structs.set(start[1], fields);
  }
  return structs;
}

const meta = new Map();
for (const source of goFiles(packages.find((p) => p.repo === "apimachinery")))
  for (const [k, v] of structsOf(source)) meta.set(k, v);

const order = {};
for (const pkg of packages) {
  const structs = new Map();
  for (const source of goFiles(pkg)) for (const [k, v] of structsOf(source)) structs.set(k, v);
  const flatten = (fields, seen) =>
    fields.flatMap((field) => {
      if (typeof field === "string") return [field];
      const embedded = structs.get(field.inline) ?? meta.get(field.inline);
      if (embedded === undefined || seen.has(field.inline)) return [];
      return flatten(embedded, new Set([...seen, field.inline]));
    });
  for (const [name, fields] of structs) {
    const flat = flatten(fields, new Set([name]));
    if (flat.length > 0) order[`${pkg.prefix}.${name}`] = flat;
  }
}

// Only the definitions the server has schemas for (the generated OpenAPI tables and their supplements).
const schemas = new Set();
for (const file of [
  "builtin-go-types.generated.ts",
  "storage-csi.generated.ts",
  "api-services.generated.ts",
]) {
  const text = readFileSync(new URL(`../packages/apiserver/src/schemas/${file}`, import.meta.url), "utf8");
  for (const [, name] of text.matchAll(/"(io\.k8s\.[\w.-]+)": \{/g)) schemas.add(name);
}
const names = Object.keys(order)
  .filter((name) => schemas.has(name))
  .sort();
let out = `// Generated by scripts/generate-go-field-order.mjs from the Go types of k8s.io/api, k8s.io/apimachinery,
// k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator (${tag}; Apache-2.0, The Kubernetes Authors).
// Do not edit.

/** Definition name → its JSON fields in the order encoding/json writes them (the Go struct's). */
export const builtinGoFieldOrder: Readonly<Record<string, readonly string[]>> = {\n`;
for (const name of names) out += `  ${JSON.stringify(name)}: ${JSON.stringify(order[name])},\n`;
out += "};\n";
const target = new URL("../packages/apiserver/src/schemas/go-field-order.generated.ts", import.meta.url);
writeFileSync(target, out);
// Written as the repository's formatter writes it, so the lint passes on a fresh generation.
execFileSync(
  new URL("../node_modules/.bin/biome", import.meta.url).pathname,
  ["format", "--write", target.pathname],
  {
    stdio: "ignore",
  },
);
console.log(`wrote ${names.length} definitions to ${target.pathname}`);
