import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Sibling packages resolve to their TypeScript sources: tests need no build.
    conditions: ["@reconcile/source"],
  },
  ssr: {
    resolve: {
      conditions: ["@reconcile/source"],
    },
  },
  test: {
    include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "examples/*/src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
