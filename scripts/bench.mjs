#!/usr/bin/env node
// `pnpm bench [filter]`: runs every packages/*/bench/*.bench.ts (or those whose
// path contains the filter) one after another, each in its own process on the
// TypeScript sources, and leaves JSON results in bench-results/.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const filter = process.argv[2] ?? "";
const files = [];
for (const pkg of readdirSync(join(root, "packages")).sort()) {
  const dir = join(root, "packages", pkg, "bench");
  if (!existsSync(dir)) continue;
  for (const file of readdirSync(dir).sort()) {
    if (file.endsWith(".bench.ts") && join(pkg, file).includes(filter)) files.push(join(dir, file));
  }
}
if (files.length === 0) {
  console.error(`no benchmark matches "${filter}"`);
  process.exit(1);
}
let failed = 0;
for (const file of files) {
  console.log(`\n== ${file.slice(root.length)}`);
  const result = spawnSync(
    process.execPath,
    ["--conditions=@reconcile/source", "--expose-gc", "--import", "tsx", file],
    { stdio: "inherit", cwd: root },
  );
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
