#!/usr/bin/env node
// A release, rehearsed against a real registry and consumed as a user would.
//
// 1. Copies the workspace (tracked files and the built dist/ folders) to a
//    temporary directory, so nothing here changes: run `pnpm build` first.
// 2. Starts verdaccio on a free loopback port with a temporary storage; our
//    scope is served only from it, everything else is proxied from the
//    registry npm is configured with.
// 3. Runs `changeset version` and `changeset publish` in the copy.
// 4. For every published package, in a fresh project outside the workspace,
//    `npm install`s that package alone and imports each of its entry points.
// 5. In one more fresh project, installs every published package with
//    typescript and @types/node, type-checks (strict, nodenext,
//    skipLibCheck false) every ```ts example of the package READMEs and a
//    probe whose `@ts-expect-error` lines fail if a Kubernetes type turns into
//    `any`; type-checks the probe again under node16 and bundler resolution
//    with skipLibCheck on and off; then runs the probe and the examples.
//
// An example preceded by `<!-- example: typecheck only (why) -->` in its
// README is type-checked but not run. verdaccio is stopped on every exit path.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { measureInstalls, newcomerPath, rehearseCommonJs } from "./release-rehearsal/consumers.mjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const keep = process.argv.includes("--keep");
const work = mkdtempSync(join(tmpdir(), "reconcile-release-"));
const bin = join(repo, "node_modules", ".bin");
const catalog = readCatalog();
// --prefer-offline: packuments npm fetched moments ago are not fetched again (speed, not a different result).
const npmInstallArgs = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
let verdaccio;
const results = { passed: 0, failed: 0 };

process.on("SIGINT", () => cleanUp(130));
process.on("SIGTERM", () => cleanUp(143));

try {
  await main();
} catch (error) {
  console.error(`release rehearsal: ${error instanceof Error ? error.message : String(error)}`);
  results.failed++;
} finally {
  await stopRegistry();
  if (!keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
console.log(`rehearsal: ${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed === 0 ? 0 : 1);

async function main() {
  const copy = join(work, "workspace");
  step("copy the workspace, install it from the store", () => copyWorkspace(copy), { fatal: true });
  const packages = publishedPackages(copy);
  for (const pkg of packages) {
    if (!existsSync(join(pkg.dir, "dist")))
      throw new Error(`${pkg.name} has no dist/: run \`pnpm build\` first`);
  }

  const registry = await startRegistry();
  const env = registryEnv(registry, await createUser(registry));

  step("changeset version", () => run(join(bin, "changeset"), ["version"], { cwd: copy, env }), {
    fatal: true,
  });
  step("changeset publish", () => run(join(bin, "changeset"), ["publish"], { cwd: copy, env }), {
    fatal: true,
  });
  const versions = new Map(
    packages.map((pkg) => [pkg.name, readJson(join(copy, pkg.relativeDir, "package.json")).version]),
  );
  for (const pkg of packages) {
    await stepAsync(`${pkg.name}@${versions.get(pkg.name)} is on the registry`, async () => {
      const response = await fetchRetrying(`${registry}${pkg.name.replace("/", "%2f")}`);
      const versionsThere = response.ok ? Object.keys((await response.json()).versions ?? {}) : [];
      if (!versionsThere.includes(versions.get(pkg.name))) {
        throw new Error(`the registry has ${JSON.stringify(versionsThere)} (HTTP ${response.status})`);
      }
    });
  }

  // Each package alone: its dependencies must be declared, its entry points load. Four at a time.
  const alone = packages.map((pkg) => async () => {
    const project = newProject(join(work, "alone", pkg.name.replace("/", "__")));
    await stepAsync(`npm install ${pkg.name} alone, import and require its entry points`, async () => {
      await runAsync("npm", [...npmInstallArgs, pkg.name], { cwd: project, env, timeoutMs: 300_000 });
      const entries = Object.keys(pkg.exports)
        .filter((entry) => !optionalPeerEntry(pkg, entry))
        .map((entry) => JSON.stringify(join(pkg.name, entry)));
      const imports = entries.map((entry) => `await import(${entry});`).join("\n");
      await runAsync("node", ["--input-type=module", "-e", imports], { cwd: project, env });
      const requires = entries.map((entry) => `require(${entry});`).join("\n");
      await runAsync("node", ["--input-type=commonjs", "-e", requires], { cwd: project, env });
    });
  });
  await inParallel(alone, 4);

  // Every package together, as the user of the READMEs would have them.
  const app = newProject(join(work, "app"));
  // vitest too: the `testing` entry points are for tests, whose projects have it.
  step(
    "npm install every package with typescript, @types/node and vitest",
    () =>
      run(
        "npm",
        [
          ...npmInstallArgs,
          ...packages.map((pkg) => pkg.name),
          `typescript@${catalog.typescript}`,
          `@types/node@${catalog["@types/node"]}`,
          `vitest@${catalog.vitest}`,
        ],
        { cwd: app, env, timeoutMs: 300_000 },
      ),
    { fatal: true },
  );
  const examples = writeExamples(app, packages);
  mkdirSync(join(app, "src"), { recursive: true });
  cpSync(join(repo, "scripts", "release-rehearsal", "probe.ts"), join(app, "src", "probe.ts"));
  const tsc = join(app, "node_modules", "typescript", "bin", "tsc");

  step("type-check the probe and the README examples (strict, nodenext, skipLibCheck false)", () => {
    writeJson(
      join(app, "tsconfig.json"),
      tsconfig({ module: "nodenext", moduleResolution: "nodenext" }, false, true),
    );
    run("node", [tsc, "-p", "tsconfig.json"], { cwd: app, env });
  });
  // The probe alone under the other resolutions, with skipLibCheck off and on (two at a time).
  const modes = [
    ["node16", "node16", false],
    ["node16", "node16", true],
    ["esnext", "bundler", false],
    ["esnext", "bundler", true],
  ];
  await inParallel(
    modes.map(
      ([module, moduleResolution, skipLibCheck]) =>
        () =>
          stepAsync(`type-check the probe (${moduleResolution}, skipLibCheck ${skipLibCheck})`, async () => {
            const name = `tsconfig.${moduleResolution}.${skipLibCheck}.json`;
            writeJson(join(app, name), {
              ...tsconfig({ module, moduleResolution }, skipLibCheck, false),
              include: ["src"],
            });
            await runAsync("node", [tsc, "-p", name], { cwd: app, env });
          }),
    ),
    2,
  );

  const ctx = { work, env, catalog, npmInstallArgs, step, stepAsync, run, runAsync, newProject };
  await rehearseCommonJs(ctx);
  await measureInstalls(ctx);
  await newcomerPath(ctx);

  step("run the probe", () => run("node", ["build/src/probe.js"], { cwd: app, env, timeoutMs: 60_000 }));
  for (const example of examples) {
    if (example.typecheckOnly) continue;
    step(`run ${example.source}`, () =>
      run("node", [`build/examples/${example.file.replace(/\.ts$/, ".js")}`], {
        cwd: app,
        env,
        timeoutMs: 60_000,
      }),
    );
  }
}

/** Runs one check and reports it; a fatal one that fails ends the rehearsal. */
function step(name, action, { fatal = false } = {}) {
  const started = Date.now();
  try {
    action();
    results.passed++;
    console.log(`✓ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    console.log(`✗ ${name}\n${indent(error instanceof Error ? error.message : String(error))}`);
    if (fatal) throw new Error(`${name} failed`);
    results.failed++;
  }
}

/** The workspace's packages that are published: every packages/* not marked private. */
function publishedPackages(root) {
  return readdirSync(join(root, "packages"))
    .filter((name) => existsSync(join(root, "packages", name, "package.json")))
    .map((name) => {
      const manifest = readJson(join(root, "packages", name, "package.json"));
      return {
        name: manifest.name,
        dir: join(root, "packages", name),
        relativeDir: join("packages", name),
        readme: join(root, "packages", name, "README.md"),
        exports: manifest.exports ?? { ".": {} },
        peerDependenciesMeta: manifest.peerDependenciesMeta ?? {},
        private: manifest.private === true,
      };
    })
    .filter((pkg) => !pkg.private);
}

/** An entry point that imports an optional peer (the `testing` suites import vitest): not loadable alone. */
function optionalPeerEntry(pkg, entry) {
  if (entry === ".") return false;
  const built = join(pkg.dir, pkg.exports[entry].import?.default ?? "");
  if (!existsSync(built)) return false;
  const text = readFileSync(built, "utf8");
  return Object.keys(pkg.peerDependenciesMeta).some(
    (peer) => text.includes(`from "${peer}"`) || text.includes(`from '${peer}'`),
  );
}

function copyWorkspace(copy) {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const file of tracked) {
    const from = join(repo, file);
    if (!existsSync(from)) continue;
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(from, join(copy, file));
  }
  for (const pkg of readdirSync(join(copy, "packages"))) {
    const dist = join(repo, "packages", pkg, "dist");
    if (existsSync(dist)) cpSync(dist, join(copy, "packages", pkg, "dist"), { recursive: true });
  }
  // pnpm publish resolves `workspace:` ranges through the installed links, and the
  // changeset CLI loads its changelog generator from the root: install (from the store).
  run(
    join(bin, "pnpm"),
    ["install", "--frozen-lockfile", "--prefer-offline", "--ignore-scripts", "--reporter=silent"],
    {
      cwd: copy,
      timeoutMs: 300_000,
    },
  );
  // changeset publish tags what it published: give it a repository to tag in.
  const git = (...args) =>
    run("git", ["-c", "user.name=release", "-c", "user.email=release@localhost", ...args], { cwd: copy });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "release rehearsal");
}

async function startRegistry() {
  const port = await freePort();
  const storage = join(work, "registry");
  mkdirSync(storage, { recursive: true });
  const uplink =
    spawnSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).stdout.trim() ||
    "https://registry.npmjs.org/";
  const config = join(storage, "config.yaml");
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(storage, "storage"))}`,
      "auth:",
      "  htpasswd:",
      `    file: ${JSON.stringify(join(storage, "htpasswd"))}`,
      "uplinks:",
      "  upstream:",
      `    url: ${JSON.stringify(uplink)}`,
      "    timeout: 60s",
      "packages:",
      // Our scope comes only from this registry, never from the uplink.
      "  '@reconcile/*':",
      "    access: $all",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "    proxy: upstream",
      "log: { type: stdout, format: pretty, level: warn }",
      "",
    ].join("\n"),
  );
  const url = `http://127.0.0.1:${port}/`;
  verdaccio = spawn(
    process.execPath,
    [
      join(repo, "node_modules", "verdaccio", "bin", "verdaccio"),
      "--config",
      config,
      "--listen",
      `127.0.0.1:${port}`,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  verdaccio.stdout.on("data", (chunk) => (output += chunk));
  verdaccio.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((resolve) => verdaccio.once("exit", resolve));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (verdaccio.exitCode !== null) throw new Error(`verdaccio exited (${verdaccio.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) {
        console.log(`✓ verdaccio on ${url}`);
        verdaccio.exited = exited;
        return url;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer on ${url} within 60 s:\n${output}`);
}

async function stopRegistry() {
  if (verdaccio === undefined || verdaccio.exitCode !== null) return;
  verdaccio.kill("SIGTERM");
  const stopped = await Promise.race([
    verdaccio.exited,
    new Promise((resolve) => setTimeout(() => resolve("timeout"), 5_000)),
  ]);
  if (stopped === "timeout") verdaccio.kill("SIGKILL");
}

function cleanUp(code) {
  if (verdaccio !== undefined && verdaccio.exitCode === null) verdaccio.kill("SIGKILL");
  if (!keep) rmSync(work, { recursive: true, force: true });
  process.exit(code);
}

/** Registers a user, as `npm adduser` does, and returns its token. */
async function createUser(registry) {
  const name = "rehearsal";
  const response = await fetch(`${registry}-/user/org.couchdb.user:${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password: `rehearsal-${process.pid}-${Date.now()}` }),
  });
  const body = await response.json();
  if (!response.ok || typeof body.token !== "string")
    throw new Error(`could not register on ${registry}: ${JSON.stringify(body)}`);
  return body.token;
}

function registryEnv(registry, token) {
  const npmrc = join(work, "npmrc");
  const host = registry.replace(/^http:/, "");
  writeFileSync(npmrc, `registry=${registry}\n${host}:_authToken=${token}\n`);
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
  for (const key of Object.keys(env)) if (/^npm_config_/i.test(key)) delete env[key];
  // Lower case: the changeset CLI reads `npm_config_registry` exactly so, and hands it to pnpm publish.
  return {
    ...env,
    npm_config_userconfig: npmrc,
    npm_config_registry: registry,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

function newProject(dir, type = "module") {
  mkdirSync(dir, { recursive: true });
  writeJson(join(dir, "package.json"), { name: "rehearsal-app", private: true, type });
  return dir;
}

/** Writes every ```ts block of the published packages' READMEs as examples/<package>-<n>.ts. */
function writeExamples(app, packages) {
  const examples = [];
  mkdirSync(join(app, "examples"), { recursive: true });
  for (const pkg of packages) {
    if (!existsSync(pkg.readme)) continue;
    const lines = readFileSync(pkg.readme, "utf8").split("\n");
    let block;
    let count = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (block === undefined && /^```ts\s*$/.test(line)) {
        const marker = /<!--\s*example:\s*typecheck only/i.test(lines[i - 1] ?? "");
        block = { start: i + 1, typecheckOnly: marker, lines: [] };
      } else if (block !== undefined && /^```\s*$/.test(line)) {
        count++;
        const file = `${pkg.relativeDir.split("/")[1]}-${count}.ts`;
        // `export {}` makes each example a module, so top-level await and its own names are allowed.
        writeFileSync(join(app, "examples", file), `${block.lines.join("\n")}\nexport {};\n`);
        examples.push({
          file,
          source: `${pkg.relativeDir}/README.md:${block.start}`,
          typecheckOnly: block.typecheckOnly,
        });
        block = undefined;
      } else if (block !== undefined) {
        block.lines.push(line);
      }
    }
  }
  return examples;
}

function tsconfig({ module, moduleResolution }, skipLibCheck, emit) {
  return {
    compilerOptions: {
      target: "ES2022",
      module,
      moduleResolution,
      strict: true,
      skipLibCheck,
      types: ["node"],
      ...(emit ? { outDir: "build", rootDir: "." } : { noEmit: true }),
    },
    include: ["src", "examples"],
  };
}

async function stepAsync(name, action) {
  const started = Date.now();
  try {
    await action();
    results.passed++;
    console.log(`✓ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    results.failed++;
    console.log(`✗ ${name}\n${indent(error instanceof Error ? error.message : String(error))}`);
  }
}

/** fetch, tried again when the connection fails (an idle keep-alive socket the registry closed). */
async function fetchRetrying(url, attempts = 3) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url);
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}

/** Runs the tasks, at most `limit` at once. */
async function inParallel(tasks, limit) {
  const queue = [...tasks];
  const lanes = Array.from({ length: Math.min(limit, queue.length) }, async () => {
    for (let task = queue.shift(); task !== undefined; task = queue.shift()) await task();
  });
  await Promise.all(lanes);
}

function runAsync(command, args, { cwd = work, env = process.env, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(" ")}: ${error.message}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(" ")} exited ${code ?? signal}\n${output}`));
    });
  });
}

function run(command, args, { cwd = work, env = process.env, timeoutMs = 600_000 } = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new Error(`${command} ${args.join(" ")}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited ${result.status ?? result.signal}\n${result.stdout}${result.stderr}`,
    );
  }
  return result.stdout;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function readCatalog() {
  const text = readFileSync(join(repo, "pnpm-workspace.yaml"), "utf8");
  const section = text.split(/^catalog:\s*$/m)[1]?.split(/^\S/m)[0] ?? "";
  const catalog = {};
  for (const match of section.matchAll(/^\s+"?([^":\s]+)"?:\s*(\S+)\s*$/gm)) catalog[match[1]] = match[2];
  return catalog;
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function indent(text) {
  const lines = text.trimEnd().split("\n");
  // The end of a failed command's output is where it says why.
  const shown = lines.length > 100 ? [`… ${lines.length - 100} lines before`, ...lines.slice(-100)] : lines;
  return shown.map((line) => `    ${line}`).join("\n");
}
