import { defineConfig } from "vitest/config";

const all = ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "examples/*/src/**/*.test.ts"];
// Test files that need a process of their own: those that replace a module
// with `vi.mock` (a module another file already loaded would stay unmocked),
// and those that fake the global timers (another file's work still winding
// down would schedule its timers on them).
const isolated = [
  "packages/storage-etcd/src/etcd-process.integration.test.ts",
  "packages/apiserver/src/registry/patch-complexity.test.ts",
  "packages/informer/src/wait-for-cache-sync.test.ts",
  "packages/workqueue/src/clock.test.ts",
  "packages/clock/src/clock.test.ts",
  "packages/client/src/kubeconfig/load.test.ts",
  "packages/controller/src/cache-sync.test.ts",
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
          exclude: isolated,
          // The files of a worker share its module cache: the packages' sources are loaded once
          // per worker rather than once per file (most of a run's time went to that).
          isolate: false,
        },
      },
      { extends: true, test: { name: "isolated", include: isolated } },
    ],
  },
});
