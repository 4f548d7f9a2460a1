#!/usr/bin/env node
// reconcile-crd: CustomResourceDefinitions from TypeScript definitions, and TypeScript from CRDs.
import { runCrdCommand } from "./command.js";

// No top-level await: the same file is built as CommonJS too.
void runCrdCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  process.exitCode = code;
});
