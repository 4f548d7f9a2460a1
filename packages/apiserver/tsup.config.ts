import { packageConfig } from "@reconcile/tsup-config";

export default packageConfig({
  entry: ["src/index.ts", "src/testing/index.ts"],
  // CEL ships only as ESM.
  bundleIntoCommonJs: ["@marcbachmann/cel-js"],
});
