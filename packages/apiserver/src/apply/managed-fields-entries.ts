import type { FieldSet } from "./fieldpath.js";
import { decodeFieldsV1, encodeFieldSet, type FieldsV1 } from "./fields-v1.js";
import { isObject } from "./typed.js";

/** One entry of `metadata.managedFields`, with its keys in kube-apiserver's order. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: "Apply" | "Update";
  apiVersion?: string;
  time?: string;
  fieldsType?: "FieldsV1";
  /** Shared and frozen in stored objects (see `fields-v1.ts`): copy before modifying. */
  fieldsV1?: FieldsV1;
  subresource?: string;
}

/** A decoded entry: who owns which fields. */
export interface FieldManager {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  /** RFC 3339, whole seconds; absent when the operation changed no field. */
  time?: string | undefined;
  subresource: string;
  fields: FieldSet;
}

/** Update entries kept before the oldest are folded into `ancient-changes` (upstream's `DefaultMaxUpdateManagers`). */
export const maxUpdateManagers = 10;

/** Reads `metadata.managedFields`. Throws on an entry kube-apiserver could not decode. */
export function decodeManagedFields(list: unknown): FieldManager[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error("managedFields must be a list");
  const byIdentity = new Map<string, FieldManager>();
  for (const item of list as unknown[]) {
    if (!isObject(item)) throw new Error("a managedFields entry must be an object");
    const entry = item as ManagedFieldsEntry;
    if (entry.operation !== "Apply" && entry.operation !== "Update") {
      throw new Error(`operation must be Apply or Update, not ${JSON.stringify(entry.operation)}`);
    }
    if (!entry.apiVersion) throw new Error("apiVersion must not be empty");
    if (entry.fieldsType !== "FieldsV1")
      throw new Error(`fieldsType must be FieldsV1, not ${JSON.stringify(entry.fieldsType)}`);
    const manager: FieldManager = {
      manager: String(entry.manager ?? ""),
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      time: typeof entry.time === "string" ? entry.time : undefined,
      subresource: String(entry.subresource ?? ""),
      fields: decodeFieldsV1(entry.fieldsV1 ?? {}),
    };
    byIdentity.set(identity(manager), manager); // the last of two same entries wins
  }
  return [...byIdentity.values()];
}

/** The list as kube-apiserver stores it: empty entries dropped, sorted by operation, time, manager, apiVersion, subresource. */
export function encodeManagedFields(managers: readonly FieldManager[]): ManagedFieldsEntry[] {
  const kept = managers.filter(hasFields);
  if (kept.length > 1) kept.sort(entryOrder);
  const entries: ManagedFieldsEntry[] = new Array(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const m = kept[i]!;
    const entry: ManagedFieldsEntry = {
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
    };
    if (m.time !== undefined) entry.time = m.time;
    entry.fieldsType = "FieldsV1";
    entry.fieldsV1 = encodeFieldSet(m.fields);
    if (m.subresource !== "") entry.subresource = m.subresource;
    entries[i] = entry;
  }
  return entries;
}

function hasFields(m: FieldManager): boolean {
  return !m.fields.empty();
}

function entrySeconds(m: FieldManager): number {
  return m.time === undefined ? 0 : Math.floor(Date.parse(m.time) / 1000);
}

function entryOrder(a: FieldManager, b: FieldManager): number {
  return (
    cmp(a.operation, b.operation) ||
    entrySeconds(a) - entrySeconds(b) ||
    cmp(a.manager, b.manager) ||
    cmp(a.apiVersion, b.apiVersion) ||
    cmp(a.subresource, b.subresource)
  );
}

/** Upstream's manager key: the entry's JSON with manager, operation, the apiVersion of Update entries and the subresource. */
export function identity(
  m: Pick<FieldManager, "manager" | "operation" | "apiVersion" | "subresource">,
): string {
  // The JSON of {manager, operation, apiVersion?, subresource?}, written out (every write asks for it).
  let key = `{"manager":${JSON.stringify(m.manager)},"operation":${JSON.stringify(m.operation)}`;
  if (m.operation === "Update") key += `,"apiVersion":${JSON.stringify(m.apiVersion)}`;
  if (m.subresource !== "") key += `,"subresource":${JSON.stringify(m.subresource)}`;
  return `${key}}`;
}

/**
 * Folds the oldest Update entries of each apiVersion into `ancient-changes` once
 * there are more than {@link maxUpdateManagers} (apimachinery's `capManagers`).
 */
export function capUpdateManagers(managers: FieldManager[]): FieldManager[] {
  let count = 0;
  for (const m of managers) if (m.operation === "Update") count++;
  if (count <= maxUpdateManagers) return managers;
  const oldestFirst = managers
    .filter((m) => m.operation === "Update")
    .sort((a, b) => entrySeconds(a) - entrySeconds(b) || cmp(identity(a), identity(b)));
  const firstOfVersion = new Map<string, FieldManager>();
  let result = [...managers];
  for (const entry of oldestFirst) {
    if (result.filter((m) => m.operation === "Update").length <= maxUpdateManagers) break;
    const first = firstOfVersion.get(entry.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(entry.apiVersion, entry);
      continue;
    }
    const bucketId = identity({
      manager: "ancient-changes",
      operation: "Update",
      apiVersion: entry.apiVersion,
      subresource: "",
    });
    let bucket = result.find((m) => identity(m) === bucketId);
    if (bucket === undefined) {
      bucket = {
        manager: "ancient-changes",
        operation: "Update",
        apiVersion: entry.apiVersion,
        subresource: "",
        fields: first.fields,
      };
      result = result.filter((m) => m !== first);
      result.push(bucket);
      firstOfVersion.set(entry.apiVersion, bucket);
    }
    const merged: FieldManager = { ...bucket, fields: bucket.fields.union(entry.fields), time: entry.time };
    result = result.filter((m) => m !== entry && m !== bucket);
    result.push(merged);
    firstOfVersion.set(entry.apiVersion, merged);
  }
  return result;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
