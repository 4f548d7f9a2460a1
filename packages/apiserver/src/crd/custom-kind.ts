import { defineResource, type KubeObject } from "@reconcile/api";
import { type OpenAPISchema, typeFromOpenAPI } from "../apply/schema.js";
import { defineKind, genericStrategy, type ResourceDefinition } from "../kinds/definition.js";
import { age } from "../kinds/printers/human-duration.js";
import { byVersionPriority, compareKubeAwareVersions } from "../kinds/version-priority.js";
import type { FieldErrors } from "../registry/field-errors.js";
import type { Printer, TableColumnDefinition } from "../registry/resource-definition.js";
import type { Strategy } from "../registry/strategy.js";
import { type ConversionWebhooks, webhookConversion } from "./conversion-webhook.js";
import { validateCustomResource } from "./custom-resource.js";
import { applyDefaults, withDefaultsOnRead } from "./defaulting.js";
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  PrinterColumn,
} from "./definition-validation.js";
import { customKindSchema } from "./openapi.js";
import { dropNulls } from "./pruning.js";
import { isObject, type JSONSchemaProps, type JsonObject, subtreeHas } from "./schema.js";
import { prepareValidation } from "./validation.js";

/**
 * The definitions that serve a CRD's custom kind, one per served version: the descriptor from its
 * accepted names and scope, a strategy that prunes, defaults and validates with that version's
 * structural schema, the scale subresource from its paths, a table from its additionalPrinterColumns
 * (`Age` when it declares none), and a deprecation warning where the version is deprecated. Objects are
 * stored at the storage version; the conversion between versions is None (only `apiVersion` changes).
 */
export function definitionsForCustomResource(
  crd: CustomResourceDefinition,
  webhooks?: ConversionWebhooks,
): ResourceDefinition[] {
  const versions = crd.spec.versions ?? [];
  const storage = versions.find((v) => v.storage)?.name;
  return versions.filter((v) => v.served).map((version) => definitionAt(crd, version, storage, webhooks));
}

/**
 * The definition of the version a CRD's kind is chiefly served at (the storage version when served, else
 * the first served one); undefined when no version is served.
 */
export function definitionForCustomResource(crd: CustomResourceDefinition): ResourceDefinition | undefined {
  const version = servedVersion(crd);
  if (!version) return undefined;
  return definitionAt(crd, version, crd.spec.versions.find((v) => v.storage)?.name);
}

function definitionAt(
  crd: CustomResourceDefinition,
  version: CustomResourceDefinitionVersion,
  storageVersion: string | undefined,
  webhooks?: ConversionWebhooks,
): ResourceDefinition {
  const viaWebhook =
    crd.spec.conversion?.strategy === "Webhook" &&
    webhooks !== undefined &&
    storageVersion !== undefined &&
    storageVersion !== version.name;
  const names = crd.status?.acceptedNames?.plural
    ? { ...crd.spec.names, ...crd.status.acceptedNames }
    : crd.spec.names;
  const subresources: ("status" | "scale")[] = [];
  if (version.subresources?.status) subresources.push("status");
  if (version.subresources?.scale) subresources.push("scale");
  const descriptor = defineResource({
    group: crd.spec.group,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    namespaced: crd.spec.scope === "Namespaced",
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    subresources,
  });
  const schema = version.schema?.openAPIV3Schema ?? {
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  };
  // Compiled as the version is served, in a turn of its own, not by its first object's request.
  setImmediate(() => prepareValidation(schema as JSONSchemaProps));
  return defineKind({
    descriptor,
    applyType: typeFromOpenAPI(schema as OpenAPISchema),
    // apiextensions-apiserver serves JSON, merge and apply patches only: strategic merge needs Go types.
    patchMeta: null,
    strategy: customResourceStrategy(schema, version),
    printer: customResourcePrinter(version.additionalPrinterColumns ?? []),
    openAPI: customKindSchema(descriptor, schema),
    storageVersion,
    conversion: viaWebhook ? webhookConversion(crd, version.name, storageVersion, webhooks) : undefined,
    warning: version.deprecated
      ? (version.deprecationWarning ?? defaultDeprecationWarning(version.name, crd))
      : undefined,
    // Objects written before a default was added to the schema are served with it (upstream defaults on read).
    onRead: subtreeHas(schema, "defaults")
      ? (object) => withDefaultsOnRead(object, schema as JSONSchemaProps)
      : undefined,
  });
}

/**
 * apiextensions-apiserver's warning for a deprecated version that sets none: `<group>/<version> <Kind>
 * is deprecated`, naming the highest served, not deprecated version newer than it as the one to use.
 */
export function defaultDeprecationWarning(deprecated: string, crd: CustomResourceDefinition): string {
  const { group, names } = crd.spec;
  const message = `${group}/${deprecated} ${names.kind} is deprecated`;
  const newer = (crd.spec.versions ?? [])
    .filter((v) => v.served && !v.deprecated && compareKubeAwareVersions(deprecated, v.name) < 0)
    .map((v) => v.name);
  if (newer.length === 0) return message;
  return `${message}; use ${group}/${byVersionPriority(newer)[0]} ${names.kind}`;
}

/** The version a CRD's kind is served at: the storage version when served, else the first served one. */
export function servedVersion(crd: CustomResourceDefinition): CustomResourceDefinitionVersion | undefined {
  const versions = crd.spec.versions ?? [];
  return versions.find((v) => v.storage && v.served) ?? versions.find((v) => v.served);
}

function customResourceStrategy(schema: JSONSchemaProps, version: CustomResourceDefinitionVersion): Strategy {
  const hasStatus = version.subresources?.status !== undefined;
  const scale = version.subresources?.scale;
  const strategy: Strategy = {
    ...genericStrategy,
    prepareForCreate(object) {
      // With the status subresource, create ignores the body's status (upstream's CR strategy).
      if (hasStatus) delete (object as JsonObject).status;
    },
    // Unknown fields were pruned where the body was decoded (the definition's openAPI, which reports
    // them as fieldValidation says); what is left of upstream's decode is nulls, then defaults.
    applyDefaults(object) {
      dropNulls(object, schema);
      applyDefaults(object as JsonObject, schema);
    },
    validate(object, errors) {
      errors.list.push(...validateCustomResource(object as JsonObject, schema));
    },
    validateUpdate(object, old, errors) {
      // validate() ran without the old object; this adds what only an update sees (transition rules).
      addNew(errors, validateCustomResource(object as JsonObject, schema, old as JsonObject));
    },
    prepareForStatusUpdate(object, old) {
      const next = object as JsonObject;
      const previous = old as JsonObject;
      for (const key of Object.keys(next)) if (key !== "status" && key !== "metadata") delete next[key];
      for (const key of Object.keys(previous))
        if (key !== "status" && key !== "metadata") next[key] = structuredClone(previous[key]);
    },
  };
  if (scale) {
    return {
      ...strategy,
      scale: {
        replicas: (object) => numberAt(object, scale.specReplicasPath),
        setReplicas: (object, replicas) => setAt(object, scale.specReplicasPath, replicas),
        statusReplicas: (object) => numberAt(object, scale.statusReplicasPath),
        selector: (object) => {
          const value = scale.labelSelectorPath ? valueAt(object, scale.labelSelectorPath) : undefined;
          return typeof value === "string" ? value : "";
        },
      },
    };
  }
  return strategy;
}

function addNew(errors: FieldErrors, found: readonly FieldErrors["list"][number][]): void {
  const seen = new Set(errors.list.map((e) => e.message));
  for (const error of found) if (!seen.has(error.message)) errors.list.push(error);
}

const ageColumn: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

/**
 * The Table of a custom kind: Name, then the CRD's columns (dates as ages, as kubectl shows them), or Name
 * and Age when it declares none.
 */
function customResourcePrinter(declared: readonly PrinterColumn[]): Printer {
  const columns = declared.length > 0 ? declared : [ageColumn];
  const definitions: TableColumnDefinition[] = [
    {
      name: "Name",
      type: "string",
      format: "name",
      description: "Name must be unique within a namespace.",
      priority: 0,
    },
    ...columns.map((c) => ({
      name: c.name,
      type: c.type as TableColumnDefinition["type"],
      format: c.format ?? "",
      description: c.description ?? "",
      priority: c.priority ?? 0,
    })),
  ];
  return {
    columns: definitions,
    cells(object: KubeObject, now: number) {
      return [
        object.metadata?.name ?? "",
        ...columns.map((c) => {
          const value = valueAt(object, c.jsonPath);
          if (value === undefined || value === null) return null;
          if (c.type === "date") return typeof value === "string" ? age(value, now) : null;
          if (typeof value === "object") return JSON.stringify(value);
          return value;
        }),
      ];
    },
  };
}

/** The value at a simple JSON path such as `.spec.replicas` or `.status.conditions[0].type`. */
function valueAt(object: unknown, path: string): unknown {
  let value: unknown = object;
  for (const step of steps(path)) {
    if (typeof step === "number") value = Array.isArray(value) ? value[step] : undefined;
    else value = isObject(value) ? value[step] : undefined;
    if (value === undefined) return undefined;
  }
  return value;
}

function numberAt(object: unknown, path: string): number {
  const value = valueAt(object, path);
  return typeof value === "number" ? value : 0;
}

function setAt(object: unknown, path: string, value: unknown): void {
  const parts = steps(path).filter((s): s is string => typeof s === "string");
  let node = object as JsonObject;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(node[part])) node[part] = {};
    node = node[part] as JsonObject;
  }
  const last = parts.at(-1);
  if (last !== undefined) node[last] = value;
}

function steps(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const match of path.matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']+)'\]/g)) {
    if (match[1] !== undefined) out.push(match[1]);
    else if (match[2] !== undefined) out.push(Number(match[2]));
    else if (match[3] !== undefined) out.push(match[3]);
  }
  return out;
}

/**
 * A custom kind's structural schema at a version (the served version when none is named): what server-side
 * apply reads for `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`.
 */
export function structuralSchemaOf(
  crd: CustomResourceDefinition,
  version?: string,
): JSONSchemaProps | undefined {
  const chosen =
    version === undefined ? servedVersion(crd) : crd.spec.versions.find((v) => v.name === version);
  return chosen?.schema?.openAPIV3Schema;
}
