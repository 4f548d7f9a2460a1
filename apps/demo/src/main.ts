import { runWorkqueueDemo } from "./workqueue-demo.js";

const ok = await runWorkqueueDemo();
process.exitCode = ok ? 0 : 1;
