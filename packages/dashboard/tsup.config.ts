import { packageConfig } from "@reconcile/tsup-config";

// The server finds its page beside dist/ through import.meta.url, which the CommonJS build shims.
export default packageConfig({ entry: ["src/index.ts"], shims: true });
