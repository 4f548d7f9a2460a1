#!/usr/bin/env node
// reconcile-sim: reads the trace files a failing simulation writes.
import { runSimCommand } from "./trace-file.js";

process.exitCode = runSimCommand(process.argv.slice(2), (text) => process.stdout.write(text));
