import { packageConfig } from "@reconcile/tsup-config";

export default packageConfig({ entry: ["src/index.ts", "src/testing/index.ts", "src/x509/index.ts"] });
