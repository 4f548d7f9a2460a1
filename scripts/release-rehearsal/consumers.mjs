// The release rehearsal's consumers beyond the ESM app: a CommonJS project
// (TypeScript nodenext, a Jest run, an esbuild bundle), the install footprint
// of the common package sets, and the newcomer's path from install to a green
// envtest test, timed.
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const here = new URL(".", import.meta.url).pathname;

/**
 * @param {{ work: string, env: NodeJS.ProcessEnv, catalog: Record<string, string>, npmInstallArgs: string[],
 *   step: Function, stepAsync: Function, run: Function, runAsync: Function, newProject: Function }} ctx
 */
export async function rehearseCommonJs(ctx) {
  const { work, env, catalog, npmInstallArgs, step, run } = ctx;
  const project = ctx.newProject(join(work, "commonjs"), "commonjs");
  step(
    "CommonJS project: npm install runtime, api, apiserver with typescript, jest and esbuild",
    () =>
      run(
        "npm",
        [
          ...npmInstallArgs,
          "@reconcile/runtime",
          "@reconcile/api",
          "@reconcile/apiserver",
          `typescript@${catalog.typescript}`,
          `@types/node@${catalog["@types/node"]}`,
          "jest@30",
          "esbuild@0.28",
        ],
        { cwd: project, env, timeoutMs: 300_000 },
      ),
    { fatal: true },
  );
  mkdirp(join(project, "src"));
  cpSync(join(here, "commonjs", "operator.ts"), join(project, "src", "operator.ts"));
  cpSync(join(here, "commonjs", "operator.test.js"), join(project, "operator.test.js"));
  writeFileSync(
    join(project, "tsconfig.json"),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          skipLibCheck: false,
          types: ["node"],
          outDir: "build",
          rootDir: "src",
        },
        include: ["src"],
      },
      null,
      2,
    )}\n`,
  );
  const bin = (name) => join(project, "node_modules", ".bin", name);
  step('CommonJS project: tsc (module nodenext, "type": "commonjs", skipLibCheck false)', () =>
    run(bin("tsc"), ["-p", "tsconfig.json"], { cwd: project, env }),
  );
  step("CommonJS project: run the compiled operator (require)", () => {
    const out = run("node", ["build/operator.js"], { cwd: project, env, timeoutMs: 60_000 });
    if (!out.includes("reconciled from CommonJS (require)")) throw new Error(`unexpected output: ${out}`);
  });
  step("CommonJS project: jest runs an envtest test under its own module loader", () =>
    run(bin("jest"), ["--ci", "operator.test.js"], { cwd: project, env, timeoutMs: 120_000 }),
  );
  step("CommonJS project: an esbuild bundle of the operator starts with no node_modules beside it", () => {
    run(
      bin("esbuild"),
      [
        "build/operator.js",
        "--bundle",
        "--platform=node",
        "--target=node20",
        "--outfile=bundle/operator.cjs",
        "--log-level=error",
      ],
      { cwd: project, env },
    );
    const alone = join(work, "bundle-alone");
    mkdirp(alone);
    cpSync(join(project, "bundle", "operator.cjs"), join(alone, "operator.cjs"));
    const out = run("node", ["operator.cjs"], { cwd: alone, env, timeoutMs: 60_000 });
    if (!out.includes("reconciled from CommonJS")) throw new Error(`unexpected output: ${out}`);
  });
}

/** Installs each set in a fresh project and prints its size on disk (bytes of files) and package count. */
export async function measureInstalls(ctx) {
  const { work, env, npmInstallArgs, stepAsync, runAsync } = ctx;
  const sets = [
    ["@reconcile/runtime alone", ["@reconcile/runtime"]],
    ["@reconcile/runtime + envtest", ["@reconcile/runtime", "@reconcile/apiserver"]],
    ["api + client + informer", ["@reconcile/api", "@reconcile/client", "@reconcile/informer"]],
  ];
  const figures = [];
  for (const [name, packages] of sets) {
    const project = ctx.newProject(join(work, "footprint", name.replace(/[^a-z]+/gi, "-")));
    await stepAsync(`install footprint: ${name}`, async () => {
      await runAsync("npm", [...npmInstallArgs, ...packages], { cwd: project, env, timeoutMs: 300_000 });
      const { bytes, count, largest } = footprint(join(project, "node_modules"));
      figures.push({ name, bytes, packages: count });
      console.log(
        `    ${name}: ${(bytes / 1e6).toFixed(2)} MB in ${count} packages (largest: ${largest
          .map(([pkg, size]) => `${pkg} ${(size / 1e6).toFixed(2)} MB`)
          .join(", ")})`,
      );
    });
  }
  return figures;
}

/** The newcomer's path: install runtime, api, apiserver and vitest, write an envtest test, run it. Timed. */
export async function newcomerPath(ctx) {
  const { work, env, catalog, npmInstallArgs, step, run } = ctx;
  const project = ctx.newProject(join(work, "newcomer"));
  let installMs = 0;
  step(
    "newcomer: npm install @reconcile/runtime @reconcile/api, and @reconcile/apiserver with vitest for tests",
    () => {
      const started = Date.now();
      run("npm", [...npmInstallArgs, "@reconcile/runtime", "@reconcile/api", "@reconcile/clock"], {
        cwd: project,
        env,
        timeoutMs: 300_000,
      });
      run("npm", [...npmInstallArgs, "--save-dev", "@reconcile/apiserver", `vitest@${catalog.vitest}`], {
        cwd: project,
        env,
        timeoutMs: 300_000,
      });
      installMs = Date.now() - started;
    },
  );
  cpSync(join(here, "newcomer.test.ts"), join(project, "newcomer.test.ts"));
  step("newcomer: the envtest test is green", () => {
    const started = Date.now();
    run(join(project, "node_modules", ".bin", "vitest"), ["run"], { cwd: project, env, timeoutMs: 120_000 });
    console.log(
      `    newcomer path: install ${(installMs / 1000).toFixed(1)} s, test run ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
}

function footprint(root) {
  let bytes = 0;
  let count = 0;
  const perPackage = new Map();
  const walk = (dir, owner) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        let next = owner;
        if (dir.endsWith("node_modules") && !entry.name.startsWith(".") && !entry.name.startsWith("@")) {
          next = entry.name;
        } else if (dir.split("/").at(-2) === "node_modules" && dir.split("/").at(-1)?.startsWith("@")) {
          next = `${dir.split("/").at(-1)}/${entry.name}`;
        }
        if (next !== owner && existsSync(join(path, "package.json"))) count++;
        walk(path, next);
      } else if (entry.isFile()) {
        const size = lstatSync(path).size;
        bytes += size;
        if (owner !== undefined) perPackage.set(owner, (perPackage.get(owner) ?? 0) + size);
      }
    }
  };
  walk(root, undefined);
  const largest = [...perPackage].sort((a, b) => b[1] - a[1]).slice(0, 4);
  return { bytes, count, largest };
}

function mkdirp(dir) {
  mkdirSync(dir, { recursive: true });
}
