#!/usr/bin/env node
import { spawnSync } from "node:child_process";
// Makes sure a Chromium is installed before the tests run: the dashboard's
// browser test drives the system's browser with puppeteer-core (no browser
// download). On Debian as root it installs the distribution's chromium
// package; otherwise it says how to. `CHROMIUM` names another browser.
import { existsSync } from "node:fs";

const browser = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (existsSync(browser)) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const hasApt = spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
if (isRoot && hasApt && process.env.CHROMIUM === undefined) {
  console.log("chromium is not installed: installing Debian's chromium package");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
    const result = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (result.status !== 0) {
      console.error(`apt-get ${args.join(" ")} failed (exit ${result.status})`);
      process.exit(1);
    }
  }
  if (existsSync(browser)) {
    console.log(`installed ${browser}`);
    process.exit(0);
  }
}

console.error(
  [
    `The dashboard's browser test needs Chromium at ${browser} and it is not there.`,
    "On Debian or Ubuntu: sudo apt-get install -y --no-install-recommends chromium",
    "Elsewhere: install Chromium or Chrome and set CHROMIUM to its path.",
  ].join("\n"),
);
process.exit(1);
