// The one tsup preset every published package builds with: ESM, declarations,
// source maps, Node 20. Each package's tsup.config.ts names only its entries.
import { defineConfig } from "tsup";

/** @param {{ entry?: string[] }} [options] */
export function packageConfig(options = {}) {
  return defineConfig({
    entry: options.entry ?? ["src/index.ts"],
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: {
      // Declarations are built against the siblings' published types, not their sources.
      compilerOptions: { customConditions: [] },
    },
    sourcemap: true,
    clean: true,
    treeshake: true,
    splitting: true,
  });
}
