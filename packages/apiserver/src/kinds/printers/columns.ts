import type { KubeObject } from "@reconcile/api";
import type { Printer, TableColumnDefinition } from "../../registry/resource-definition.js";

export type { Printer, TableColumnDefinition };

import { age } from "./human-duration.js";

export const column = (
  name: string,
  type: TableColumnDefinition["type"],
  description: string,
  priority = 0,
  format = "",
): TableColumnDefinition => ({ name, type, format, description, priority });

export const nameColumn = column("Name", "string", "Name must be unique within a namespace.", 0, "name");
export const ageColumn = column("Age", "string", "CreationTimestamp is the time the object was created.");

// Objects arrive as plain JSON; the printers read them loosely and never throw on odd shapes.
// biome-ignore lint/suspicious/noExplicitAny: wire-format objects of many kinds
export type Loose = any;

export const nameOf = (object: KubeObject) => object.metadata?.name ?? "";
export const ageOf = (object: KubeObject, now: number) => age(object.metadata?.creationTimestamp, now);
export const num = (value: unknown) => (typeof value === "number" ? value : 0);
export const orNone = (value: unknown) => (typeof value === "string" && value !== "" ? value : "<none>");

/** The table of kinds without a printer: Name and Created At, as kube-apiserver's default table. */
export const defaultPrinter: Printer = {
  columns: [
    nameColumn,
    column("Created At", "date", "CreationTimestamp is the time the object was created."),
  ],
  cells(object) {
    return [nameOf(object), object.metadata?.creationTimestamp ?? null];
  },
};

/** Containers, Images and Selector of a workload's pod template, the wide columns of every workload. */
export function templateCells(workload: Loose): string[] {
  const containers: Loose[] = Array.isArray(workload.spec?.template?.spec?.containers)
    ? workload.spec.template.spec.containers
    : [];
  return [
    containers.map((c) => c?.name ?? "").join(","),
    containers.map((c) => c?.image ?? "").join(","),
    formatLabelSelector(workload.spec?.selector),
  ];
}

/** `metav1.FormatLabelSelector`: `app=web,tier in (fe,be)`, `<none>` when empty. */
export function formatLabelSelector(selector: Loose): string {
  if (selector === null || selector === undefined) return "<none>";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    parts.push(`${key}=${value}`);
  }
  for (const requirement of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    const values: string[] = Array.isArray(requirement?.values) ? [...requirement.values].sort() : [];
    switch (requirement?.operator) {
      case "In":
        parts.push(`${requirement.key} in (${values.join(",")})`);
        break;
      case "NotIn":
        parts.push(`${requirement.key} notin (${values.join(",")})`);
        break;
      case "Exists":
        parts.push(String(requirement.key));
        break;
      case "DoesNotExist":
        parts.push(`!${requirement.key}`);
        break;
    }
  }
  return parts.length === 0 ? "<none>" : parts.join(",");
}

/** A label map as `a=b,c=d`, sorted by key; `<none>` when empty. */
export function formatSelectorMap(selector: Loose): string {
  const entries = Object.entries(selector ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}
