import { packageConfig } from "@reconcile/tsup-config";

export default packageConfig({ entry: ["src/index.ts"] });
