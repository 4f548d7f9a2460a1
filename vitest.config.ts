import { defineConfig } from "vitest/config";

const all = ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "examples/*/src/**/*.test.ts"];
// Test files that replace a module with `vi.mock`: each needs a module cache
// of its own, or a module another file already loaded stays unmocked.
const mocking = [
  "packages/storage-etcd/src/etcd-process.integration.test.ts",
  "packages/apiserver/src/registry/patch-complexity.test.ts",
];

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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Both cores: most files wait on sockets, child processes and timers as much as on the CPU.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: all,
          exclude: mocking,
          // The files of a worker share its module cache: the packages' sources are loaded once
          // per worker rather than once per file (most of a run's time went to that).
          isolate: false,
        },
      },
      { extends: true, test: { name: "isolated", include: mocking } },
    ],
  },
});
