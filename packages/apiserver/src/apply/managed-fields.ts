import { type FieldError, newInvalid, rfc3339, StatusError } from "@reconcile/api";
import { FieldSet, fieldElement, pathString } from "./fieldpath.js";
import { decodeFieldsV1, encodeFieldSet, type FieldsV1, internFieldsV1 } from "./fields-v1.js";
import { childType, resolve, type TypeNode, typeFor } from "./schema.js";
import {
  addedFieldsText,
  addedFieldsV1Text,
  compare,
  DuplicateItems,
  deepEqual,
  isObject,
  merge,
  removeFields,
  TypedValueError,
  toFieldSet,
} from "./typed.js";

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

type JsonObject = Record<string, unknown>;

/** The longest manager name, in bytes (apimachinery's `FieldManagerMaxLength`). */
export const fieldManagerMaxLength = 128;
/** Update entries kept before the oldest are folded into `ancient-changes` (upstream's `DefaultMaxUpdateManagers`). */
export const maxUpdateManagers = 10;

export interface ApplyOptions {
  /** The stored object, or undefined when the apply creates it. */
  live: JsonObject | undefined;
  /** The applied configuration (the request body). */
  config: JsonObject;
  /** The `fieldManager` parameter (required; see {@link validateFieldManager}). */
  manager: string;
  /** The request's group/version, e.g. `apps/v1`. */
  apiVersion: string;
  /** `force=true`: take the conflicting fields from their managers. Default false. */
  force?: boolean | undefined;
  now: Date;
  /** The kind's merge semantics. Default: {@link typeFor} the config's apiVersion and kind. */
  type?: TypeNode | undefined;
  /** `status`, `scale`, or `""` for the main resource. Default `""`. */
  subresource?: string | undefined;
  /** Paths the endpoint resets (e.g. `[["status"]]` on a main resource with a status subresource). */
  resetFields?: ReadonlyArray<readonly string[]> | undefined;
}

/**
 * Server-side apply (structured-merge-diff's `Updater.Apply` with kube-apiserver's
 * wrappers): merges the configuration into the live object, removes what this
 * manager applied before and no longer applies (unless another manager owns it),
 * and answers 409 for values this request changes that another manager owns,
 * unless `force`. Returns the new object, its `metadata.managedFields` set.
 * Throws a 409 StatusError on conflicts and a 500 one for a body that does not fit its type.
 */
export function applyConfiguration(options: ApplyOptions): JsonObject {
  const type =
    options.type ?? typeFor(String(options.config.apiVersion ?? ""), String(options.config.kind ?? ""));
  const subresource = options.subresource ?? "";
  const live = options.live === undefined ? undefined : withoutManagedFields(options.live);
  let managers = options.live === undefined ? [] : decodeOrEmpty(managedFieldsOf(options.live));
  if (live !== undefined && managers.length === 0) {
    // Tracking was reset: whatever exists belongs to a placeholder Update manager.
    const existing = compare(undefined, live, type);
    const fields = withoutReset(strip(existing.added.union(existing.modified)), options.resetFields);
    if (!fields.empty()) {
      managers = [
        {
          manager: "before-first-apply",
          operation: "Update",
          apiVersion: options.apiVersion,
          subresource: "",
          fields,
        },
      ];
    }
  }

  let newSet: FieldSet;
  let merged: JsonObject;
  try {
    newSet = withoutReset(strip(toFieldSet(withoutManagedFields(options.config), type)), options.resetFields);
    merged = merge(live, withoutManagedFields(options.config), type) as JsonObject;
  } catch (error) {
    if (error instanceof TypedValueError) throw typedPatchError(options, error);
    throw error;
  }
  const applierId = identity({
    manager: options.manager,
    operation: "Apply",
    apiVersion: options.apiVersion,
    subresource,
  });
  const applier = managers.find((m) => identity(m) === applierId);
  // Re-applying the same configuration: keep the set (and so its encoded tree).
  if (applier !== undefined && newSet.equals(applier.fields)) newSet = applier.fields;
  const others = managers.filter((m) => m !== applier);

  let ownedByOthers = new FieldSet();
  for (const other of others) ownedByOthers = ownedByOthers.union(other.fields);
  const owned = ownedByOthers.union(newSet);
  if (applier !== undefined) removeFields(merged, applier.fields.difference(owned), owned, type);

  const changes = compare(live, merged, type);
  const changed = withoutReset(strip(changes.modified.union(changes.added)), options.resetFields);
  const removed = strip(changes.removed);
  const conflicts = new Map<FieldManager, FieldSet>();
  for (const other of others) {
    const overlap = other.fields.intersection(changed);
    if (!overlap.empty()) conflicts.set(other, overlap);
  }
  if (conflicts.size > 0 && options.force !== true) throw newApplyConflict(conflicts);

  const objectChanged = live === undefined || !deepEqual(live, merged);
  const result: FieldManager[] = [];
  for (const other of others) {
    let fields = other.fields.difference(removed);
    const taken = conflicts.get(other);
    if (taken !== undefined) fields = fields.difference(taken);
    if (!fields.empty()) result.push({ ...other, fields });
  }
  if (!newSet.empty()) {
    result.push({
      manager: options.manager,
      operation: "Apply",
      apiVersion: options.apiVersion,
      time: objectChanged ? entryTime(options.now) : applier?.time,
      subresource,
      fields: newSet,
    });
  }
  return withManagedFields(objectChanged || live === undefined ? merged : live, result);
}

export interface UpdateOptions {
  /** The stored object, or undefined on create. */
  before: JsonObject | undefined;
  /** The object about to be stored, as the request made it (its managedFields may rename managers). */
  after: JsonObject;
  /** The `fieldManager` parameter, or the name {@link managerFromUserAgent} gives. */
  manager: string;
  /** The request's group/version. */
  apiVersion: string;
  now: Date;
  type?: TypeNode | undefined;
  subresource?: string | undefined;
  resetFields?: ReadonlyArray<readonly string[]> | undefined;
}

/**
 * Ownership after a write that is not an apply (create, update, any other patch):
 * it never conflicts; the manager gains what it added or changed and loses what it
 * removed, and every other manager loses all of those. Returns `after` with
 * `metadata.managedFields` set (or removed when tracking is reset or empty).
 */
export function trackUpdate(options: UpdateOptions): JsonObject {
  const type =
    options.type ?? typeFor(String(options.after.apiVersion ?? ""), String(options.after.kind ?? ""));
  const subresource = options.subresource ?? "";
  const sent = managedFieldsOf(options.after);
  const stored = options.before === undefined ? undefined : managedFieldsOf(options.before);

  // An empty list ([] or [{}]) clears tracking; while it stays empty, updates are not tracked.
  if (subresource === "" && Array.isArray(sent) && isResetList(sent) && !deepEqual(sent, stored)) {
    return withManagedFields(options.after, []);
  }
  let managers: FieldManager[];
  // Most writes send back what they read: decode the stored list then, whose field sets are cached.
  const fromRequest =
    subresource === "" && Array.isArray(sent) && sent.length > 0
      ? tryDecode(sent === stored || deepEqual(sent, stored) ? stored : sent)
      : undefined;
  if (fromRequest !== undefined) managers = fromRequest;
  else if (
    options.before !== undefined &&
    (stored === undefined || (Array.isArray(stored) && stored.length === 0))
  ) {
    return withManagedFields(options.after, []);
  } else managers = decodeOrEmpty(stored);

  const after = withoutManagedFields(options.after);
  if (options.before === undefined && managers.length === 0) {
    // A create: the manager owns everything it wrote. Serialized straight from the object.
    const text = createdFieldsText(after, type, options.resetFields);
    if (text !== undefined) {
      if (text === "{}") return withManagedFields(after, []);
      const entry: ManagedFieldsEntry = {
        manager: options.manager,
        operation: "Update",
        apiVersion: options.apiVersion,
        time: entryTime(options.now),
        fieldsType: "FieldsV1",
        fieldsV1: internFieldsV1(text),
      };
      if (subresource !== "") entry.subresource = subresource;
      return {
        ...after,
        metadata: { ...(isObject(after.metadata) ? after.metadata : {}), managedFields: [entry] },
      };
    }
  }
  const before = options.before === undefined ? undefined : withoutManagedFields(options.before);
  const changes = compare(before, after, type);
  const changed = withoutReset(strip(changes.modified.union(changes.added)), options.resetFields);
  const removed = strip(changes.removed);
  const touched = changed.union(removed);
  const id = identity({
    manager: options.manager,
    operation: "Update",
    apiVersion: options.apiVersion,
    subresource,
  });

  const result: FieldManager[] = [];
  let self: FieldManager | undefined;
  for (const m of managers) {
    if (identity(m) === id) {
      self = m;
      continue;
    }
    const fields = m.fields.difference(touched);
    if (!fields.empty()) result.push({ ...m, fields });
  }
  const fields = (self?.fields ?? new FieldSet()).difference(removed).union(changed);
  if (!fields.empty()) {
    result.push({
      manager: options.manager,
      operation: "Update",
      apiVersion: options.apiVersion,
      time: changed.empty() ? self?.time : entryTime(options.now),
      subresource,
      fields,
    });
  }
  return withManagedFields(after, changed.empty() ? result : capUpdateManagers(result));
}

/**
 * The manager of a write without `fieldManager`: the User-Agent up to its first
 * `/`, printable characters only, at most 128 bytes, else `unknown` (kube-apiserver's
 * `prefixFromUserAgent`).
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  let out = "";
  let bytes = 0;
  for (const char of (userAgent ?? "").split("/", 1)[0] ?? "") {
    if (!isPrintable(char)) continue;
    const size = Buffer.byteLength(char);
    if (bytes + size > fieldManagerMaxLength) break;
    out += char;
    bytes += size;
  }
  return out === "" ? "unknown" : out;
}

/**
 * Checks the `fieldManager` parameter as kube-apiserver's `ValidateFieldManager`
 * does; `optionsKind` is `CreateOptions`, `UpdateOptions` or `PatchOptions`.
 * Returns the 422 to answer, or undefined.
 */
export function validateFieldManager(
  manager: string | undefined,
  optionsKind: "CreateOptions" | "UpdateOptions" | "PatchOptions",
  apply = false,
): StatusError | undefined {
  const invalid = (error: FieldError) => newInvalid({ group: "meta.k8s.io", kind: optionsKind }, "", [error]);
  if (manager === undefined || manager === "") {
    if (!apply) return undefined;
    return invalid({
      type: "FieldValueRequired",
      field: "fieldManager",
      message: "fieldManager: Required value: is required for apply patch",
    });
  }
  if (Buffer.byteLength(manager) > fieldManagerMaxLength) {
    return invalid({
      type: "FieldValueTooLong",
      field: "fieldManager",
      message: `fieldManager: Too long: may not be more than ${fieldManagerMaxLength} bytes`,
    });
  }
  let position = 0;
  for (const char of manager) {
    if (!isPrintable(char)) {
      const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      return invalid({
        type: "FieldValueInvalid",
        field: "fieldManager",
        message: `fieldManager: Invalid value: ${goQuote(manager)}: invalid character U+${code} (at position ${position})`,
      });
    }
    position += Buffer.byteLength(char);
  }
  return undefined;
}

/** The 409 for `force` on a patch that is not an apply. */
export function forceNotAllowed(): StatusError {
  return newInvalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", [
    {
      type: "FieldValueForbidden",
      field: "force",
      message: "force: Forbidden: may not be specified for non-apply patch",
    },
  ]);
}

/**
 * The 409 of an apply with conflicts, worded as kube-apiserver words it (kubectl
 * prints the message verbatim): one cause per field, the manager named with its
 * subresource and, for Update entries, the apiVersion.
 */
export function newApplyConflict(conflicts: ReadonlyMap<FieldManager, FieldSet>): ApplyConflictError {
  const byManager = [...conflicts].sort(([a], [b]) =>
    identity(a) < identity(b) ? -1 : identity(a) > identity(b) ? 1 : 0,
  );
  const causes: Array<{ reason: string; message: string; field: string }> = [];
  const blocks: string[] = [];
  for (const [manager, fields] of byManager) {
    const who = describeManager(manager);
    const paths = fields.paths().map(pathString);
    for (const field of paths)
      causes.push({ reason: "FieldManagerConflict", message: `conflict with ${who}`, field });
    blocks.push([`conflicts with ${who}:`, ...paths.map((path) => `- ${path}`)].join("\n"));
  }
  const message =
    causes.length === 1
      ? `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`
      : `Apply failed with ${causes.length} conflicts: ${blocks.join("\n")}`;
  return new ApplyConflictError({ code: 409, reason: "Conflict", message, details: { causes } }, conflicts);
}

/** The 409 of a conflicting apply, with the conflicting fields of each manager. */
export class ApplyConflictError extends StatusError {
  constructor(
    status: ConstructorParameters<typeof StatusError>[0],
    readonly conflicts: ReadonlyMap<FieldManager, FieldSet>,
  ) {
    super(status);
  }
}

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
  const seconds = (m: FieldManager) => (m.time === undefined ? 0 : Math.floor(Date.parse(m.time) / 1000));
  const order = (a: FieldManager, b: FieldManager) =>
    cmp(a.operation, b.operation) ||
    seconds(a) - seconds(b) ||
    cmp(a.manager, b.manager) ||
    cmp(a.apiVersion, b.apiVersion) ||
    cmp(a.subresource, b.subresource);
  return managers
    .filter((m) => !m.fields.empty())
    .sort(order)
    .map((m) => {
      const entry: ManagedFieldsEntry = {
        manager: m.manager,
        operation: m.operation,
        apiVersion: m.apiVersion,
      };
      if (m.time !== undefined) entry.time = m.time;
      entry.fieldsType = "FieldsV1";
      entry.fieldsV1 = encodeFieldSet(m.fields);
      if (m.subresource !== "") entry.subresource = m.subresource;
      return entry;
    });
}

/** Upstream's manager key: the entry's JSON with manager, operation, the apiVersion of Update entries and the subresource. */
export function identity(
  m: Pick<FieldManager, "manager" | "operation" | "apiVersion" | "subresource">,
): string {
  const key: Record<string, string> = { manager: m.manager, operation: m.operation };
  if (m.operation === "Update") key.apiVersion = m.apiVersion;
  if (m.subresource !== "") key.subresource = m.subresource;
  return JSON.stringify(key);
}

/**
 * Folds the oldest Update entries of each apiVersion into `ancient-changes` once
 * there are more than {@link maxUpdateManagers} (apimachinery's `capManagers`).
 */
export function capUpdateManagers(managers: FieldManager[]): FieldManager[] {
  const updates = () => managers.filter((m) => m.operation === "Update");
  if (updates().length <= maxUpdateManagers) return managers;
  const seconds = (m: FieldManager) => (m.time === undefined ? 0 : Math.floor(Date.parse(m.time) / 1000));
  const oldestFirst = updates().sort((a, b) => seconds(a) - seconds(b) || cmp(identity(a), identity(b)));
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

/** How conflict messages name a manager: `"m"`, `"m" with subresource "status"`, then ` using v1` for Update entries. */
function describeManager(m: FieldManager): string {
  let out = goQuote(m.manager);
  if (m.subresource !== "") out += ` with subresource ${goQuote(m.subresource)}`;
  if (m.operation === "Update") out += ` using ${m.apiVersion}`;
  return out;
}

/** Paths never tracked (apimachinery's `stripMeta`). */
const strippedMetadata = [
  "name",
  "namespace",
  "creationTimestamp",
  "selfLink",
  "uid",
  "clusterName",
  "generation",
  "managedFields",
  "resourceVersion",
];

const metadataElement = fieldElement("metadata");
const strippedRoot = [fieldElement("apiVersion"), fieldElement("kind")];
const strippedMetadataElements = strippedMetadata.map(fieldElement);

function strip(set: FieldSet): FieldSet {
  return set
    .withoutMember([])
    .without([], strippedRoot)
    .withoutMember([metadataElement])
    .without([metadataElement], strippedMetadataElements);
}

/**
 * `strip(withoutReset(compare(undefined, object).added))` as FieldsV1 text, or
 * undefined where that takes the general path (reset paths below the root,
 * a keyed list with a repeated key, an object that is not a granular struct).
 */
function createdFieldsText(
  object: JsonObject,
  type: TypeNode,
  resetFields: ReadonlyArray<readonly string[]> | undefined,
): string | undefined {
  const t = resolve(type, object);
  if ((t.kind !== "struct" && t.kind !== "map") || t.atomic) return undefined;
  let skip = strippedRootNames;
  if (resetFields !== undefined && resetFields.length > 0) {
    if (resetFields.some((path) => path.length !== 1)) return undefined;
    skip = new Set([...strippedRootNames, ...resetFields.map((path) => path[0]!)]);
  }
  try {
    let body = "";
    for (const name of Object.keys(object).sort()) {
      if (skip.has(name)) continue;
      const type = childType(t, name);
      const text =
        name === "metadata"
          ? metadataText(object.metadata, type)
          : addedFieldsV1Text(object[name], type, false);
      if (text !== undefined) body += `,${JSON.stringify(fieldElement(name))}:${text}`;
    }
    return `{${body.slice(1)}}`;
  } catch (error) {
    if (error instanceof DuplicateItems) return undefined;
    throw error;
  }
}

/** The created metadata's FieldsV1 text: never a member itself, without the fields never tracked. */
function metadataText(metadata: unknown, type: TypeNode): string | undefined {
  const t = resolve(type, metadata);
  if (!isObject(metadata) || (t.kind !== "struct" && t.kind !== "map") || t.atomic) return undefined;
  const children = addedFieldsText(metadata, t, strippedMetadataNames);
  return children === "" ? undefined : `{${children.slice(1)}}`;
}

const strippedRootNames: ReadonlySet<string> = new Set(["apiVersion", "kind"]);
const strippedMetadataNames: ReadonlySet<string> = new Set(strippedMetadata);

/** Removes whole subtrees: the paths an endpoint resets are never owned through it. */
function withoutReset(set: FieldSet, paths: ReadonlyArray<readonly string[]> | undefined): FieldSet {
  if (paths === undefined) return set;
  let out = set;
  for (const path of paths) {
    if (path.length === 0) continue;
    out = out.without(path.slice(0, -1).map(fieldElement), [fieldElement(path[path.length - 1]!)]);
  }
  return out;
}

function managedFieldsOf(object: JsonObject): unknown {
  const metadata = object.metadata;
  return isObject(metadata) ? metadata.managedFields : undefined;
}

function withoutManagedFields(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  if (!isObject(metadata) || !("managedFields" in metadata)) return object;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...object, metadata: rest };
}

function withManagedFields(object: JsonObject, managers: readonly FieldManager[]): JsonObject {
  const metadata = isObject(object.metadata) ? { ...object.metadata } : {};
  const entries = encodeManagedFields(managers);
  if (entries.length > 0) metadata.managedFields = entries;
  else delete metadata.managedFields;
  return { ...object, metadata };
}

function decodeOrEmpty(list: unknown): FieldManager[] {
  return tryDecode(list) ?? [];
}

function tryDecode(list: unknown): FieldManager[] | undefined {
  try {
    return decodeManagedFields(list);
  } catch {
    return undefined;
  }
}

function isResetList(list: unknown[]): boolean {
  return list.length === 0 || (list.length === 1 && isObject(list[0]) && Object.keys(list[0]).length === 0);
}

function typedPatchError(options: ApplyOptions, error: TypedValueError): StatusError {
  const metadata = isObject(options.config.metadata) ? options.config.metadata : {};
  const gv = options.apiVersion.includes("/") ? options.apiVersion : `/${options.apiVersion}`;
  const where = `${String(metadata.namespace ?? "")}/${String(metadata.name ?? "")}`;
  return new StatusError({
    code: 500,
    message: `failed to create typed patch object (${where}; ${gv}, Kind=${String(options.config.kind ?? "")}): ${error.message}`,
  });
}

/** An entry's time: whole seconds; one string per second, shared by the entries written in it. */
function entryTime(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastTime = rfc3339(second * 1000);
  }
  return lastTime;
}

let lastSecond = Number.NaN;
let lastTime = "";

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(char: string): boolean {
  return char === " " || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(char);
}

/** Go's `%q` for the strings these messages quote. */
function goQuote(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\t") out += "\\t";
    else if (char === "\r") out += "\\r";
    else if (isPrintable(char)) out += char;
    else if (code < 0x80) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}
