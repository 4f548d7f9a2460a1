import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { customResourceDefinitions } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { loadRealCrds, type RealCrd } from "@reconcile/real-crds";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builderFor, buildersForDefinitions } from "./builder.js";
import { type JSONSchemaProps, k, toStructuralSchema } from "./schema.js";
import { typesForDefinitions } from "./typegen.js";

// Real projects' CRDs (cert-manager's neighbours: Argo CD and Rollouts, Flux,
// Gateway API, Istio, KEDA, Knative, prometheus-operator, sealed-secrets, the
// VPA, GKE and Config Connector), as the @kubernetes-models packages publish
// them on npm: accepted by our API server, their TypeScript compiles, and
// schema → k builder → schema gives the schema back.

let corpus: RealCrd[];
beforeAll(() => {
  corpus = loadRealCrds();
});

describe("the corpus", () => {
  it("holds 460 CRDs of 12 package versions, 512 versions in all", () => {
    expect(corpus).toHaveLength(460);
    expect(new Set(corpus.map((entry) => entry.source)).size).toBe(12);
    expect(corpus.reduce((sum, entry) => sum + entry.crd.spec.versions.length, 0)).toBe(512);
  });
});

describe("our API server", () => {
  let api: ApiServer;
  afterAll(() => api?.close());

  it("accepts every one as structural and establishes it", async () => {
    api = new ApiServer({ customResourceDefinitions: true });
    const client = api.client().resource(customResourceDefinitions);
    const refused: string[] = [];
    // prometheus-operator's two releases define the same kinds: the newer one is installed.
    const installed = corpus.filter(
      (entry) => !(entry.source.endsWith("@1.1.0") && entry.source.includes("prometheus-operator")),
    );
    for (const { crd, source } of installed) {
      try {
        await client.create(structuredClone(crd) as never);
      } catch (error) {
        refused.push(`${crd.metadata?.name} (${source}): ${(error as Error).message}`);
      }
    }
    expect(refused).toEqual([]);
    const names = new Set(installed.map((entry) => entry.crd.metadata?.name));
    for (let turn = 0; ; turn++) {
      const list = await client.list();
      const pending = list.items.filter(
        (crd) =>
          names.has(crd.metadata?.name) &&
          !crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True"),
      );
      if (pending.length === 0) break;
      if (turn > 1000)
        throw new Error(`not established: ${pending.map((crd) => crd.metadata?.name).join(", ")}`);
      await new Promise((done) => setImmediate(done));
    }
    const nonStructural = (await client.list()).items.filter((crd) =>
      crd.status?.conditions?.some((c) => c.type === "NonStructuralSchema" && c.status === "True"),
    );
    expect(nonStructural.map((crd) => crd.metadata?.name)).toEqual([]);
  }, 120_000);
});

describe("round trip: schema → k builder → schema", () => {
  it("gives every schema back, but for two differences that change nothing", () => {
    const differences: string[] = [];
    for (const { crd } of corpus) {
      for (const version of crd.spec.versions) {
        const schema = version.schema?.openAPIV3Schema as JSONSchemaProps;
        const built = evaluate(builderFor(schema, ""));
        compare(schema, toStructuralSchema(built), `${crd.metadata?.name}/${version.name}`, differences);
      }
    }
    expect(differences).toEqual([
      // An empty required list is no required list.
      "verticalpodautoscalers.autoscaling.k8s.io/v1beta1 .properties.spec.required: [] → absent",
      // Not a JSONSchemaProps field: Kubernetes' decoder drops it too.
      "sealedsecrets.bitnami.com/v1alpha1 .properties.spec.properties.data.deprecated: true → absent",
    ]);
  }, 120_000);
});

describe("the generated TypeScript", () => {
  const work = mkdtempSync(join(tmpdir(), "real-crds-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("compiles: the types and descriptors, and the k builders with their inferred types", () => {
    const withoutDuplicates = corpus.filter((entry) => !entry.source.endsWith("@1.1.0"));
    const crds = withoutDuplicates.map((entry) => entry.crd);
    writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
    writeFileSync(join(work, "types.ts"), typesForDefinitions(crds));
    writeFileSync(join(work, "builders.ts"), buildersForDefinitions(crds));
    // The inferred types are the types: a list is a list, a required field is required.
    writeFileSync(
      join(work, "use.ts"),
      [
        'import type { ServiceMonitorV1 } from "./builders.js";',
        'import type { ServiceMonitor } from "./types.js";',
        'const fromBuilder: ServiceMonitorV1["spec"]["endpoints"] = [{ port: "web", interval: "30s" }];',
        'export const fromTypes: ServiceMonitor["spec"]["endpoints"] = fromBuilder;',
        "// @ts-expect-error: endpoints are a list",
        'export const wrong: ServiceMonitorV1["spec"]["endpoints"] = { port: "web" };',
        "// @ts-expect-error: a ServiceMonitor has a spec",
        "export const specless: ServiceMonitorV1 = {};",
        "",
      ].join("\n"),
    );
    const diagnostics = typecheck([join(work, "types.ts"), join(work, "builders.ts"), join(work, "use.ts")]);
    expect(diagnostics).toEqual([]);
  }, 240_000);
});

/** The value of a `k` expression: TypeScript's type arguments erased, then run with `k`. */
function evaluate(expression: string): JSONSchemaProps {
  const { outputText } = ts.transpileModule(`return ${expression};`, {
    compilerOptions: { target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: false,
  });
  return new Function("k", outputText)(k) as JSONSchemaProps;
}

/** Where `after` differs from `before`; an order of `required` names is no difference. */
function compare(before: unknown, after: unknown, path: string, out: string[]): void {
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);
  if (isObject(before) && isObject(after)) {
    const a = before as Record<string, unknown>;
    const b = after as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      compare(a[key], b[key], `${path}${path.includes(" ") ? "" : " "}.${key}`, out);
    }
    return;
  }
  if (path.endsWith(".required") && Array.isArray(before) && Array.isArray(after)) {
    if ([...before].sort().join("\n") === [...after].sort().join("\n")) return;
  }
  const show = (value: unknown) => (value === undefined ? "absent" : JSON.stringify(value));
  out.push(`${path}: ${show(before)} → ${show(after)}`);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function typecheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ["@reconcile/source"],
    baseUrl: root,
    paths: {
      "@reconcile/crd": [join(root, "packages/crd/src/index.ts")],
      "@reconcile/api": [join(root, "packages/api/src/index.ts")],
    },
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}
