import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  JSONSchemaProps,
} from "kubernetes-types/apiextensions/v1.js";

/**
 * The corpus: CustomResourceDefinition schemas of real projects, as the
 * `@kubernetes-models/*` packages publish them on npm. Each package carries
 * one schema per served version of every kind, taken from the project's
 * CRDs. These releases embed the schema as JSON; later ones ship compiled
 * validators only.
 */
export const corpusPackages = [
  "@kubernetes-models/argo-cd",
  "@kubernetes-models/argo-rollouts",
  "@kubernetes-models/autoscaler",
  "@kubernetes-models/flux-cd",
  "@kubernetes-models/gateway-api",
  "@kubernetes-models/gke",
  "@kubernetes-models/istio",
  "@kubernetes-models/keda",
  "@kubernetes-models/knative",
  "@kubernetes-models/prometheus-operator",
  "@kubernetes-models/sealed-secrets",
  "prometheus-operator-raw",
] as const;

export interface RealCrd {
  /** The npm package and version it came from. */
  source: string;
  crd: CustomResourceDefinition;
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Every CRD of the corpus, one per group and kind, with every version the
 * package carries (all served; the newest by Kubernetes' version order
 * stored). What the package does not say is filled as kubebuilder would:
 * the plural is the lower-case kind made plural, the scope `Namespaced`.
 *
 * The packages' generator changed the schemas in ways {@link restoreSchema}
 * undoes; what it dropped (Kubernetes' `x-kubernetes-*` extensions, in all
 * but `prometheus-operator-raw`) cannot come back.
 */
export function loadRealCrds(): RealCrd[] {
  const out: RealCrd[] = [];
  for (const name of corpusPackages) {
    const manifest = join(here, "node_modules", name, "package.json");
    const { version, name: published } = JSON.parse(readFileSync(manifest, "utf8")) as {
      version: string;
      name: string;
    };
    const byKind = new Map<string, { group: string; kind: string; versions: [string, JSONSchemaProps][] }>();
    for (const file of javascriptFiles(dirname(manifest))) {
      const match = /const schema = (\{[\s\S]*?\n\});/.exec(readFileSync(file, "utf8"));
      if (match === null) continue;
      const schema = JSON.parse(match[1]!) as JSONSchemaProps & Record<string, unknown>;
      const apiVersion = (schema.properties?.apiVersion?.enum as string[] | undefined)?.[0];
      const kind = (schema.properties?.kind?.enum as string[] | undefined)?.[0];
      if (apiVersion === undefined || kind === undefined || !apiVersion.includes("/")) continue;
      const [group, versionName] = apiVersion.split("/") as [string, string];
      const key = `${group}/${kind}`;
      const entry = byKind.get(key) ?? { group, kind, versions: [] };
      if (!entry.versions.some(([existing]) => existing === versionName)) {
        entry.versions.push([versionName, restoreSchema(schema)]);
      }
      byKind.set(key, entry);
    }
    for (const { group, kind, versions } of [...byKind.values()].sort((a, b) =>
      `${a.group}/${a.kind}`.localeCompare(`${b.group}/${b.kind}`),
    )) {
      out.push({ source: `${published}@${version}`, crd: definition(group, kind, versions) });
    }
  }
  return out;
}

function definition(
  group: string,
  kind: string,
  versions: [string, JSONSchemaProps][],
): CustomResourceDefinition {
  const singular = kind.toLowerCase();
  const plural = /(s|x|z|ch|sh)$/.test(singular)
    ? `${singular}es`
    : /[^aeiou]y$/.test(singular)
      ? `${singular.slice(0, -1)}ies`
      : `${singular}s`;
  const ordered = [...versions].sort(([a], [b]) => versionPriority(b) - versionPriority(a));
  const storage = ordered[0]![0];
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular },
      scope: "Namespaced",
      versions: ordered.map(
        ([name, schema]): CustomResourceDefinitionVersion => ({
          name,
          served: true,
          storage: name === storage,
          schema: { openAPIV3Schema: schema },
          ...(schema.properties?.status !== undefined ? { subresources: { status: {} } } : {}),
        }),
      ),
    },
  };
}

/** Kubernetes' version order as a number: GA above beta above alpha, higher numbers first. */
function versionPriority(name: string): number {
  const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(name);
  if (match === null) return 0;
  const stage = match[2] === undefined ? 3 : match[2] === "beta" ? 2 : 1;
  return stage * 1e6 + Number(match[1]) * 1e3 + Number(match[3] ?? 0);
}

/**
 * The CRD's schema again, from the package's form of it. The generator
 * (1) pinned `apiVersion` and `kind` with an `enum` and made them required,
 * (2) pointed `metadata` at ObjectMeta (`$ref`, or `$literal`), (3) marked
 * every optional field `nullable`, wrapping a nullable `$ref`/int-or-string
 * in `oneOf: [it, {type: null}]`, (4) replaced `x-kubernetes-int-or-string`
 * with its `anyOf`, (5) wrote a field of any value
 * (`x-kubernetes-preserve-unknown-fields` without a type) as `{}`, and (6)
 * gave every map (`additionalProperties`) an empty `properties`. Each is undone; a `nullable` the project wrote itself is
 * lost with the generator's.
 */
export function restoreSchema(schema: JSONSchemaProps & Record<string, unknown>): JSONSchemaProps {
  const root = restoreNode(schema) as JSONSchemaProps;
  const properties = { ...(root.properties ?? {}) };
  for (const name of ["apiVersion", "kind"]) {
    const property = properties[name];
    if (property !== undefined) {
      const { enum: _pinned, ...rest } = property;
      properties[name] = rest;
    }
  }
  if (properties.metadata !== undefined) properties.metadata = { type: "object" };
  root.properties = properties;
  const required = (root.required ?? []).filter((name) => name !== "apiVersion" && name !== "kind");
  if (required.length > 0) root.required = required;
  else delete root.required;
  return root;
}

/** `validation`: inside anyOf, allOf, oneOf or not, where `{}` is an empty schema, not a field. */
function restoreNode(value: unknown, validation = false): unknown {
  if (Array.isArray(value)) return value.map((item) => restoreNode(item, validation));
  if (value === null || typeof value !== "object") return value;
  const node = { ...(value as Record<string, unknown>) };
  const oneOf = node.oneOf as Record<string, unknown>[] | undefined;
  if (!validation && oneOf?.length === 2 && oneOf[1]?.type === "null" && Object.keys(oneOf[1]).length === 1) {
    const { oneOf: _wrapper, ...rest } = node;
    return restoreNode({ ...rest, ...oneOf[0] });
  }
  delete node.nullable;
  // A field of any value: the generator's form of x-kubernetes-preserve-unknown-fields without a type.
  if (!validation && Object.keys(node).length === 0) return { "x-kubernetes-preserve-unknown-fields": true };
  if (node.$ref !== undefined || node.$literal !== undefined) return { type: "object" };
  const properties = node.properties as Record<string, unknown> | undefined;
  if (
    node.additionalProperties !== undefined &&
    properties !== undefined &&
    Object.keys(properties).length === 0
  ) {
    delete node.properties;
  }
  const anyOf = node.anyOf as Record<string, unknown>[] | undefined;
  if (
    node.type === undefined &&
    anyOf?.length === 2 &&
    anyOf[0]?.type === "integer" &&
    anyOf[1]?.type === "string" &&
    Object.keys(anyOf[0]).length === 1 &&
    Object.keys(anyOf[1]).length === 1
  ) {
    node["x-kubernetes-int-or-string"] = true;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) {
    if (key === "enum" || key === "default" || key === "example") out[key] = child;
    else if (key === "properties") {
      out[key] = Object.fromEntries(
        Object.entries(child as Record<string, unknown>).map(([name, schema]) => [
          name,
          restoreNode(schema, validation),
        ]),
      );
    } else out[key] = restoreNode(child, validation || ["anyOf", "allOf", "oneOf", "not"].includes(key));
  }
  return out;
}

function* javascriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* javascriptFiles(path);
    } else if (entry.name.endsWith(".js")) yield path;
  }
}
