#!/usr/bin/env node
// reconcile-controller-manager: kube-controller-manager's command against any API server.
import { runControllerManagerCommand } from "./command.js";

process.exitCode = await runControllerManagerCommand(process.argv.slice(2));
