import type { KubeObject, ListMeta, ResourceDescriptor } from "@reconcile/api";
import { apiVersionOf } from "@reconcile/api";
import type { Printer, TableColumnDefinition } from "../registry/resource-definition.js";

/** What each row carries in `object` (the `includeObject` query parameter). */
export type IncludeObject = "None" | "Metadata" | "Object";

export interface TableRow {
  cells: unknown[];
  object?: KubeObject;
}

/** A `meta.k8s.io` Table, the answer to kubectl's `as=Table` Accept. */
export interface Table {
  kind: "Table";
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface TableOptions {
  /** Default `Metadata`: each row carries a PartialObjectMetadata (kubectl needs it for `-A` and `--sort-by`). */
  includeObject?: IncludeObject | undefined;
  /** The time ages are computed at, in epoch milliseconds. */
  now: number;
  /** `v1` (default) or `v1beta1`. */
  version?: "v1" | "v1beta1" | undefined;
  /** Leave out `columnDefinitions` (watch events after the first). */
  noHeaders?: boolean | undefined;
  /** The kind's columns (its definition's printer). */
  printer: Printer;
}

/** Parses `includeObject`, rejecting unknown values with a message naming them. */
export function parseIncludeObject(value: string | null): IncludeObject {
  if (value === null || value === "") return "Metadata";
  if (value === "None" || value === "Metadata" || value === "Object") return value;
  throw new TypeError(`includeObject must be one of None, Metadata, Object, not ${JSON.stringify(value)}`);
}

/** Converts objects of one resource into a Table with kubectl's columns for that kind. */
export function toTable(
  resource: ResourceDescriptor,
  objects: readonly KubeObject[],
  listMeta: ListMeta,
  options: TableOptions,
): Table {
  const { printer } = options;
  const includeObject = options.includeObject ?? "Metadata";
  const rows = (printer.order?.(objects) ?? objects).map((object): TableRow => {
    const row: TableRow = { cells: printer.cells(object, options.now) };
    if (includeObject === "Metadata") {
      row.object = {
        kind: "PartialObjectMetadata",
        apiVersion: `meta.k8s.io/${options.version ?? "v1"}`,
        metadata: object.metadata ?? {},
      };
    } else if (includeObject === "Object") {
      row.object = { ...object, apiVersion: apiVersionOf(resource), kind: resource.kind };
    }
    return row;
  });
  return {
    kind: "Table",
    apiVersion: `meta.k8s.io/${options.version ?? "v1"}`,
    metadata: listMeta,
    columnDefinitions: options.noHeaders ? [] : printer.columns.map((c) => ({ ...c })),
    rows,
  };
}

/** The Content-Type of a Table answer. */
export function tableContentType(version: "v1" | "v1beta1" = "v1"): string {
  return `application/json;as=Table;v=${version};g=meta.k8s.io`;
}
