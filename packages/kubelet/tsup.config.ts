import { packageConfig } from "@reconcile/tsup-config";

// node-thread-entry is what each of NodeThreads' worker threads starts; `shims` lets the CommonJS build find it.
export default packageConfig({ entry: ["src/index.ts", "src/node-thread-entry.ts"], shims: true });
