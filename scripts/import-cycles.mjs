#!/usr/bin/env node
// `node scripts/import-cycles.mjs [dir...]`: lists the import cycles among the
// TypeScript sources under each directory (default: every package's src),
// counting type-only imports too (a type cycle is a layering knot even though
// the build erases it), tests left out, and every import against the API
// server's folder layers (below). Exits 1 if there is any of either.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dirs = process.argv.slice(2);
if (dirs.length === 0)
  for (const pkg of readdirSync(join(root, "packages"))) dirs.push(join(root, "packages", pkg, "src"));

let cycles = 0;
for (const dir of dirs) {
  const files = sources(resolve(dir));
  const graph = new Map(files.map((file) => [file, imports(file).filter((dep) => files.includes(dep))]));
  for (const component of stronglyConnected(graph)) {
    cycles++;
    console.log(`cycle: ${component.map((file) => relative(root, file)).join(" → ")}`);
  }
}
console.log(`${cycles} import cycle${cycles === 1 ? "" : "s"}`);

// The API server's folders point one way: the kinds (kinds/, crd/) and the HTTP layer build on the
// registry; the registry, storage, server-side apply and the generated schemas know no kind.
const apiserver = join(root, "packages", "apiserver", "src");
const lowerFolders = ["registry", "storage", "apply", "schemas", "protobuf"];
const upperFolders = ["kinds", "crd", "http", "gc", "admission"];
let crossings = 0;
for (const folder of lowerFolders) {
  for (const file of sources(join(apiserver, folder))) {
    for (const dep of imports(file)) {
      const top = relative(apiserver, dep).split("/")[0];
      if (!upperFolders.includes(top) && !dep.endsWith("api-server.ts")) continue;
      crossings++;
      console.log(`layer: ${relative(root, file)} imports ${relative(root, dep)}`);
    }
  }
}
console.log(`${crossings} layer crossing${crossings === 1 ? "" : "s"}`);
process.exit(cycles === 0 && crossings === 0 ? 0 : 1);

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.includes("test-util"))
      out.push(path);
  }
  return out;
}

/** The files a module imports or re-exports from, types included (relative specifiers only). */
function imports(file) {
  const text = readFileSync(file, "utf8");
  const deps = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(?:type\s+)?[^;]*?\s+from\s+"(\.[^"]+)"/gms)) {
    deps.push(resolve(dirname(file), match[1].replace(/\.js$/, ".ts")));
  }
  return deps;
}

/** Tarjan's algorithm: the strongly connected components of more than one file. */
function stronglyConnected(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indices.get(next)));
    }
    if (low.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component);
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}
