// The one tsup preset every published package builds with: ESM and CommonJS
// side by side (index.js + index.d.ts, index.cjs + index.d.cts), source maps,
// Node 20. Each package's tsup.config.ts names only its entries.
//
// Both formats are split into shared chunks, so a package's entry points share
// one copy of its module state within a format. A dependency that ships only
// ESM is bundled into the CommonJS build (`bundleIntoCommonJs`): `require()`
// of ESM needs Node ≥ 20.19 and does not work under Jest's module loader.
import { rmSync } from "node:fs";
import { defineConfig } from "tsup";

/**
 * `shims` gives each format the other's module location (`import.meta.url` in CommonJS,
 * `__dirname` in ESM), for a package that reads files it ships beside its code.
 * @param {{ entry?: string[], bundleIntoCommonJs?: string[], shims?: boolean }} [options]
 */
export function packageConfig(options = {}) {
  const shared = {
    entry: options.entry ?? ["src/index.ts"],
    target: "node20",
    platform: "node",
    dts: {
      // Declarations are built against the siblings' published types, not their sources.
      compilerOptions: { customConditions: [] },
    },
    sourcemap: true,
    // The maps point at src/, which the package ships: no second copy of every source inside them.
    esbuildOptions(esbuild) {
      esbuild.sourcesContent = false;
    },
    treeshake: true,
    splitting: true,
    shims: options.shims ?? false,
  };
  const bundled = options.bundleIntoCommonJs ?? [];
  if (bundled.length === 0) return defineConfig({ ...shared, format: ["esm", "cjs"], clean: true });
  // Two builds run side by side: neither may clean the folder the other writes, so it is emptied here, first.
  rmSync("dist", { recursive: true, force: true });
  return defineConfig([
    { ...shared, format: ["esm"] },
    { ...shared, format: ["cjs"], noExternal: bundled },
  ]);
}
