// The one tsup preset every published package builds with: ESM and CommonJS
// side by side (index.js + index.d.ts, index.cjs + index.d.cts), source maps
// for the ESM build, Node 20. Each package's tsup.config.ts names only its entries.
//
// Both formats are split into shared chunks, so a package's entry points share
// one copy of its module state within a format. A dependency that ships only
// ESM is bundled into the CommonJS build (`bundleIntoCommonJs`): `require()`
// of ESM needs Node ≥ 20.19 and does not work under Jest's module loader.
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "tsup";

/**
 * `shims` gives each format the other's module location (`import.meta.url` in CommonJS,
 * `__dirname` in ESM), for a package that reads files it ships beside its code.
 *
 * `vendor` bundles part of a dependency into both builds in place of the
 * whole package: each name maps to a CommonJS file (relative to the package)
 * that re-exports what is used. The dependency's types are inlined into the
 * declarations, so it is a devDependency only; `licenses` names files copied
 * into dist/ beside the code (a vendored package's licence).
 * @param {{ entry?: string[], bundleIntoCommonJs?: string[], shims?: boolean,
 *   vendor?: Record<string, string>, licenses?: Record<string, string> }} [options]
 */
export function packageConfig(options = {}) {
  const vendor = options.vendor ?? {};
  const vendored = Object.keys(vendor);
  const shared = {
    entry: options.entry ?? ["src/index.ts"],
    target: "node20",
    platform: "node",
    dts: {
      // Declarations are built against the siblings' published types, not their sources.
      compilerOptions: { customConditions: [] },
      ...(vendored.length > 0 ? { resolve: vendored } : {}),
    },
    sourcemap: true,
    // The maps point at src/, which the package ships: no second copy of every source inside them.
    esbuildOptions(esbuild, { format }) {
      esbuild.sourcesContent = false;
      if (vendored.length === 0) return;
      esbuild.alias = Object.fromEntries(vendored.map((name) => [name, vendor[name]]));
      // Vendored CommonJS requires Node's own modules: ESM output needs a require to call.
      if (format === "esm") {
        esbuild.banner = {
          js: 'import { createRequire as __vendorRequire } from "node:module"; const require = __vendorRequire(import.meta.url);',
        };
      }
    },
    noExternal: vendored,
    async onSuccess() {
      dropCommonJsMaps("dist");
      for (const [from, to] of Object.entries(options.licenses ?? {})) copyFileSync(from, `dist/${to}`);
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
    { ...shared, format: ["cjs"], noExternal: [...vendored, ...bundled] },
  ]);
}

/**
 * Source maps ship with the ESM build only: CommonJS stack traces name the
 * unminified dist/*.cjs lines, and each package installs about 15 % smaller. tsup
 * maps both formats or neither, so the CommonJS maps go once written.
 */
function dropCommonJsMaps(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) dropCommonJsMaps(path);
    else if (entry.name.endsWith(".cjs.map")) rmSync(path);
    else if (entry.name.endsWith(".cjs")) {
      const code = readFileSync(path, "utf8");
      const stripped = code.replace(/^\/\/# sourceMappingURL=\S*\.cjs\.map\n?/gm, "");
      if (stripped !== code) writeFileSync(path, stripped);
    }
  }
}
