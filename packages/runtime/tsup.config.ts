import { packageConfig } from "@reconcile/tsup-config";

export default packageConfig({
  entry: ["src/index.ts", "src/envtest/index.ts"],
  vendor: { "prom-client": "./vendor/prom-client-core.cjs" },
  licenses: { "node_modules/prom-client/LICENSE": "prom-client.LICENSE" },
});
