#!/usr/bin/env node
// Makes sure an `etcd` binary is on the PATH before the tests run: the
// @reconcile/storage-etcd tests start real etcd processes. On Debian as root it
// installs the distribution's etcd-server package; otherwise it says how to.
import { spawnSync } from "node:child_process";

function etcdVersion() {
  const result = spawnSync("etcd", ["--version"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.split("\n")[0] : undefined;
}

if (etcdVersion() !== undefined) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const hasApt = spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
if (isRoot && hasApt) {
  console.log("etcd is not installed: installing Debian's etcd-server package");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "etcd-server"]]) {
    const result = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (result.status !== 0) {
      console.error(`apt-get ${args.join(" ")} failed (exit ${result.status})`);
      process.exit(1);
    }
  }
  const version = etcdVersion();
  if (version !== undefined) {
    console.log(`installed ${version}`);
    process.exit(0);
  }
}

console.error(
  [
    "The tests need etcd (3.4 or later) on the PATH and it is not installed.",
    "On Debian or Ubuntu: sudo apt-get install -y --no-install-recommends etcd-server",
    "Elsewhere: https://etcd.io/docs/latest/install/ (put the etcd binary on the PATH).",
  ].join("\n"),
);
process.exit(1);
