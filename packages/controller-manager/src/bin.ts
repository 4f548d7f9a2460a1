#!/usr/bin/env node
// reconcile-controller-manager: kube-controller-manager's command against any API server.
import { runControllerManagerCommand } from "./command.js";

// No top-level await: the same file is built as CommonJS too.
void runControllerManagerCommand(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
