import { rfc3339, StatusError } from "@reconcile/api";
import { jsonEqual, withMember } from "../json.js";
import { typeFor } from "./builtin-types.js";
import { newApplyConflict } from "./conflicts.js";
import { createdFieldsV1, strippedMetadata } from "./created-fields.js";
import { managerFromUserAgent, validateFieldManager } from "./field-manager.js";
import { FieldSet, fieldElement } from "./fieldpath.js";
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  type FieldManager,
  identity,
  type ManagedFieldsEntry,
} from "./managed-fields-entries.js";
import { merge } from "./merge.js";
import type { TypeNode } from "./schema.js";
import { compare, isEmptyContainer, isObject, removeFields, TypedValueError, toFieldSet } from "./typed.js";

type JsonObject = Record<string, unknown>;

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
  /** The object at another served version of its kind, for managers of that version. */
  convert?: VersionConverter | undefined;
}

/** An object seen at another version of its kind, with that version's merge semantics. */
export interface VersionedObject {
  object: JsonObject;
  type: TypeNode;
}

/**
 * Converts an object of the request's version to `apiVersion` (another
 * served version of the same kind, the same stored objects); undefined when
 * it cannot be done at once.
 */
export type VersionConverter = (object: JsonObject, apiVersion: string) => VersionedObject | undefined;

/**
 * What a write changed, as each manager's version sees it: structured-merge-diff
 * compares the old and new object again in the version of every manager that
 * wrote through another one (an events.k8s.io/v1 manager owns `note` where a
 * core v1 write changes `message`), so a manager loses the fields it owns under
 * their own names. Without a converter, or when one cannot convert, the
 * request's comparison stands for every version.
 */
class ChangesByVersion {
  readonly #apiVersion: string;
  readonly #request: Changes;
  /** Other versions' comparisons, made when a manager of that version is met. */
  #others: Map<string, Changes> | undefined;
  readonly #before: JsonObject | undefined;
  readonly #after: JsonObject;
  readonly #convert: VersionConverter | undefined;
  readonly #resetFields: ReadonlyArray<readonly string[]> | undefined;

  constructor(
    request: { apiVersion: string; changes: Changes },
    before: JsonObject | undefined,
    after: JsonObject,
    options: {
      convert?: VersionConverter | undefined;
      resetFields?: ReadonlyArray<readonly string[]> | undefined;
    },
  ) {
    this.#apiVersion = request.apiVersion;
    this.#request = request.changes;
    this.#before = before;
    this.#after = after;
    this.#convert = options.convert;
    this.#resetFields = options.resetFields;
  }

  /** What changed and what was removed, in `apiVersion`'s field names. */
  of(apiVersion: string): Changes {
    if (apiVersion === this.#apiVersion) return this.#request;
    this.#others ??= new Map();
    let changes = this.#others.get(apiVersion);
    if (changes === undefined) {
      changes = this.#compareAt(apiVersion) ?? this.#request;
      this.#others.set(apiVersion, changes);
    }
    return changes;
  }

  #compareAt(apiVersion: string): Changes | undefined {
    if (this.#convert === undefined) return undefined;
    const after = this.#convert(this.#after, apiVersion);
    const before = this.#before === undefined ? undefined : this.#convert(this.#before, apiVersion);
    if (after === undefined || (this.#before !== undefined && before === undefined)) return undefined;
    const changes = compare(before?.object, after.object, after.type);
    return {
      changed: withoutReset(strip(changes.modified.union(changes.added)), this.#resetFields),
      removed: strip(changes.removed),
    };
  }
}

interface Changes {
  readonly changed: FieldSet;
  readonly removed: FieldSet;
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
    if (TypedValueError.isInstance(error)) throw typedPatchError(options, error);
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
  const byVersion = new ChangesByVersion(
    { apiVersion: options.apiVersion, changes: { changed, removed } },
    live,
    merged,
    options,
  );
  const conflicts = new Map<FieldManager, FieldSet>();
  for (const other of others) {
    const overlap = other.fields.intersection(byVersion.of(other.apiVersion).changed);
    if (!overlap.empty()) conflicts.set(other, overlap);
  }
  if (conflicts.size > 0 && options.force !== true) throw newApplyConflict(conflicts);

  const objectChanged = live === undefined || !jsonEqual(live, merged);
  const result: FieldManager[] = [];
  for (const other of others) {
    let fields = other.fields.difference(byVersion.of(other.apiVersion).removed);
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
  /** The object at another served version of its kind, for managers of that version. */
  convert?: VersionConverter | undefined;
  /**
   * Top-level members the write is known to leave as `before` has them (the
   * spec of a status write, which the store puts back): not compared again.
   */
  unchanged?: ((member: string) => boolean) | undefined;
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
  if (subresource === "" && Array.isArray(sent) && isResetList(sent) && !jsonEqual(sent, stored)) {
    return withManagedFields(options.after, []);
  }
  let managers: readonly FieldManager[];
  // Most writes send back what they read: decode the stored list then, whose field sets are cached.
  const fromRequest =
    subresource === "" && Array.isArray(sent) && sent.length > 0
      ? tryDecode(sent === stored || jsonEqual(sent, stored) ? stored : sent)
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
    const fieldsV1 = createdFieldsV1(after, type, options.resetFields);
    if (fieldsV1 !== undefined) {
      if (isEmptyContainer(fieldsV1)) return withManagedFields(after, []);
      const entry: ManagedFieldsEntry = {
        manager: options.manager,
        operation: "Update",
        apiVersion: options.apiVersion,
        time: entryTime(options.now),
        fieldsType: "FieldsV1",
        fieldsV1,
      };
      if (subresource !== "") entry.subresource = subresource;
      return withMember(
        after,
        "metadata",
        withMember(isObject(after.metadata) ? after.metadata : {}, "managedFields", [entry]),
      );
    }
  }
  const before = options.before === undefined ? undefined : withoutManagedFields(options.before);
  const changes =
    options.unchanged === undefined || before === undefined
      ? compare(before, after, type)
      : compare(withoutMembers(before, options.unchanged), withoutMembers(after, options.unchanged), type);
  const changed = withoutReset(strip(changes.modified.union(changes.added)), options.resetFields);
  const removed = strip(changes.removed);
  const touched = changed.union(removed);

  const byVersion = new ChangesByVersion(
    { apiVersion: options.apiVersion, changes: { changed, removed } },
    before,
    after,
    options,
  );
  const result: FieldManager[] = [];
  let self: FieldManager | undefined;
  for (const m of managers) {
    // This write's own entry: the same identity as an Update by this manager at this version.
    if (
      m.operation === "Update" &&
      m.manager === options.manager &&
      m.apiVersion === options.apiVersion &&
      m.subresource === subresource
    ) {
      self = m;
      continue;
    }
    const fields = m.fields.difference(
      m.apiVersion === options.apiVersion ? touched : touchedAt(byVersion, m.apiVersion),
    );
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

/** What a write touched (changed or removed) as a manager of `apiVersion` sees it. */
function touchedAt(byVersion: ChangesByVersion, apiVersion: string): FieldSet {
  const { changed, removed } = byVersion.of(apiVersion);
  return changed.union(removed);
}

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

/** A shallow view of `object` without the top-level members `leave` names. */
function withoutMembers(object: JsonObject, leave: (member: string) => boolean): JsonObject {
  const view: JsonObject = {};
  for (const key of Object.keys(object)) if (!leave(key) && key !== "__proto__") view[key] = object[key];
  return view;
}

function managedFieldsOf(object: JsonObject): unknown {
  const metadata = object.metadata;
  return isObject(metadata) ? metadata.managedFields : undefined;
}

function withoutManagedFields(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  if (!isObject(metadata) || !("managedFields" in metadata)) return object;
  return withMember(object, "metadata", withMember(metadata, "managedFields", undefined));
}

function withManagedFields(object: JsonObject, managers: readonly FieldManager[]): JsonObject {
  const entries = encodeManagedFields(managers);
  const metadata = withMember(
    isObject(object.metadata) ? object.metadata : {},
    "managedFields",
    entries.length > 0 ? entries : undefined,
  );
  return withMember(object, "metadata", metadata);
}

function decodeOrEmpty(list: unknown): readonly FieldManager[] {
  return tryDecode(list) ?? [];
}

/** The managers of a list, or undefined for a list kube-apiserver could not decode. */
function tryDecode(list: unknown): readonly FieldManager[] | undefined {
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

/** An entry's time: whole seconds (one string per second, as `rfc3339` keeps it). */
function entryTime(date: Date): string {
  return rfc3339(date.getTime());
}
