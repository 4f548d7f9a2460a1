#!/usr/bin/env node
// Runs the pinned pnpm on a machine that has only Node and npm: the root
// package.json's `packageManager` names the version, npx fetches it once.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const { packageManager } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const args = process.argv.slice(2);
const result = spawnSync("npx", ["-y", packageManager, ...args], {
  stdio: "inherit",
  cwd: new URL("..", import.meta.url),
});
if (result.error) {
  console.error(`could not start pnpm through npx: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
