import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { customResourceDefinitions } from "@reconcile/api";
import { type Client, createHttpClient } from "@reconcile/client";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";
import { parseAllDocuments, stringify } from "yaml";
import { buildersForDefinitions } from "./builder.js";
import { typesForDefinitions } from "./typegen.js";

const usage = `usage:
  reconcile-crd emit <module> [--format yaml|json]
      prints the CustomResourceDefinition of every custom resource the module
      exports (defineCustomResource's result), for kubectl apply or a chart
  reconcile-crd types <file|url|-> [--out <file>]
      prints TypeScript types and resource descriptors for the CRDs in a YAML
      or JSON file, a URL, or standard input (kubectl get crd -o yaml | reconcile-crd types -)
  reconcile-crd types --cluster [--kubeconfig <file>] [--context <name>] [--name <crd>]... [--out <file>]
      the same for the CRDs of the cluster of a kubeconfig (all, or those named)
  reconcile-crd builders <file|url|-|--cluster …> [--out <file>]
      prints each served version's schema as k builder code with its type
      inferred, to own someone else's kind in TypeScript (same sources as types)
`;

export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard input's text. Default: read from fd 0. */
  stdin?: (() => string) | undefined;
  fetch?: typeof fetch | undefined;
  /** The client `types --cluster` reads with. Default: one from the kubeconfig. */
  client?: Client | undefined;
}

/** Runs the `reconcile-crd` command; resolves the exit code. */
export async function runCrdCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const [command, source, ...rest] = args;
  try {
    if (command === "emit" && source !== undefined) {
      const format = option(rest, "--format") ?? "yaml";
      if (format !== "yaml" && format !== "json")
        throw new UsageError(`--format must be yaml or json, not ${format}`);
      const crds = await definitionsExportedBy(source);
      io.stdout(
        format === "json"
          ? `${JSON.stringify(asList(crds), null, 2)}\n`
          : crds.map((crd) => stringify(crd)).join("---\n"),
      );
      return 0;
    }
    if ((command === "types" || command === "builders") && source !== undefined) {
      const crds =
        source === "--cluster"
          ? await definitionsOfCluster(rest, io)
          : definitionsIn(await readSource(source, io), source === "-" ? "standard input" : source);
      const out = command === "types" ? typesForDefinitions(crds) : buildersForDefinitions(crds);
      const file = option(rest, "--out");
      if (file !== undefined) writeFileSync(file, out);
      else io.stdout(out);
      return 0;
    }
    io.stderr(usage);
    return 2;
  } catch (error) {
    io.stderr(`reconcile-crd: ${(error as Error).message}\n`);
    if (error instanceof UsageError) io.stderr(usage);
    return error instanceof UsageError ? 2 : 1;
  }
}

class UsageError extends Error {}

/** The CRDs of the kubeconfig's cluster, read with our own client. */
async function definitionsOfCluster(
  args: readonly string[],
  io: CommandIO,
): Promise<CustomResourceDefinition[]> {
  const names = args.flatMap((arg, i) =>
    arg === "--name" && args[i + 1] !== undefined ? [args[i + 1]!] : [],
  );
  const client =
    io.client ??
    (await createHttpClient({ path: option(args, "--kubeconfig"), context: option(args, "--context") }));
  try {
    const list = await client.resource(customResourceDefinitions).list();
    const items = list.items as unknown as CustomResourceDefinition[];
    const chosen =
      names.length === 0 ? items : items.filter((crd) => names.includes(crd.metadata?.name ?? ""));
    const missing = names.filter((name) => !chosen.some((crd) => crd.metadata?.name === name));
    if (missing.length > 0)
      throw new Error(`the cluster has no CustomResourceDefinition ${missing.join(", ")}`);
    if (chosen.length === 0) throw new Error("the cluster has no CustomResourceDefinitions");
    return chosen;
  } finally {
    if (io.client === undefined) (client as { close?: () => void }).close?.();
  }
}

function option(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (value === undefined) throw new UsageError(`${name} needs a value`);
  return value;
}

async function definitionsExportedBy(path: string): Promise<CustomResourceDefinition[]> {
  const module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  const crds: CustomResourceDefinition[] = [];
  for (const value of Object.values(module)) {
    const crd = (value as { crd?: CustomResourceDefinition } | null)?.crd;
    if (crd?.kind === "CustomResourceDefinition" && !crds.includes(crd)) crds.push(crd);
  }
  if (crds.length === 0)
    throw new Error(`${path} exports no custom resource (a defineCustomResource result)`);
  return crds;
}

function asList(crds: CustomResourceDefinition[]): unknown {
  return crds.length === 1 ? crds[0] : { apiVersion: "v1", kind: "List", items: crds };
}

async function readSource(source: string, io: CommandIO): Promise<string> {
  if (source === "-") return io.stdin ? io.stdin() : readFileSync(0, "utf8");
  if (/^https?:\/\//.test(source)) {
    const response = await (io.fetch ?? fetch)(source);
    if (!response.ok) throw new Error(`${source}: HTTP ${response.status}`);
    return response.text();
  }
  return readFileSync(source, "utf8");
}

/** The CRDs of a YAML stream or JSON document: single objects, `List`s, and `CustomResourceDefinitionList`s. */
export function definitionsIn(text: string, source = "the input"): CustomResourceDefinition[] {
  const crds: CustomResourceDefinition[] = [];
  const add = (value: unknown) => {
    const object = value as { kind?: string; items?: unknown[] } | null;
    if (object === null || typeof object !== "object") return;
    if (object.kind === "CustomResourceDefinition") crds.push(object as CustomResourceDefinition);
    else if (Array.isArray(object.items)) object.items.forEach(add);
  };
  for (const document of parseAllDocuments(text)) {
    if ("errors" in document && document.errors.length > 0) {
      throw new Error(`${source} is not valid YAML: ${document.errors[0]!.message}`);
    }
    add(document.toJSON());
  }
  if (crds.length === 0) throw new Error(`${source} holds no CustomResourceDefinition`);
  return crds;
}
