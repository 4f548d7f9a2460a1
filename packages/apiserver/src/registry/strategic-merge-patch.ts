import { newBadRequest } from "@reconcile/api";
import { copyJson, isJsonObject } from "../json.js";

/** List field name → the key its elements merge on in a strategic merge patch. */
export type MergeKeys = Readonly<Record<string, string>>;

/**
 * What a strategic merge patch knows of a type at one node: apimachinery's
 * `PatchMeta` (the `patchStrategy` and `patchMergeKey` of a field), and the
 * nodes below. Built-in kinds derive it from their OpenAPI schema
 * (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`).
 */
export interface PatchMeta {
  /** The node of struct field or map key `name`. */
  field(name: string): PatchMeta;
  /** The node of a list's items. */
  items(): PatchMeta;
  /**
   * For a list of objects: the key its elements merge on, given the patch's
   * elements; undefined replaces the list whole.
   */
  mergeKey(patch: readonly unknown[]): string | undefined;
  /** For a list of scalars: merged as a set (`patchStrategy:"merge"` without a key). */
  readonly mergesScalars: boolean;
}

/** A node without patch strategies: every list below is replaced whole. */
export const atomicPatchMeta: PatchMeta = {
  field: () => atomicPatchMeta,
  items: () => atomicPatchMeta,
  mergeKey: () => undefined,
  mergesScalars: false,
};

/**
 * Patch meta that knows lists by field name only, whatever their type: for
 * kinds without a schema to derive it from.
 */
export function patchMetaByFieldName(
  keys: MergeKeys,
  scalarSets: ReadonlySet<string> = new Set(),
): PatchMeta {
  const nodes = new Map<string, PatchMeta>();
  const root: PatchMeta = {
    field(name) {
      let node = nodes.get(name);
      if (node === undefined) {
        const key = Object.hasOwn(keys, name) ? keys[name] : undefined;
        node = {
          field: root.field,
          items: () => root,
          // Without types, `ports` are a container's (by containerPort) unless they hold a Service's.
          mergeKey:
            name === "ports"
              ? (patch) =>
                  patch.some((item) => isJsonObject(item) && !("containerPort" in item) && "port" in item)
                    ? "port"
                    : key
              : () => key,
          mergesScalars: scalarSets.has(name),
        };
        nodes.set(name, node);
      }
      return node;
    },
    items: () => root,
    mergeKey: () => undefined,
    mergesScalars: false,
  };
  return root;
}

/**
 * The merge keys of the lists the built-in kinds declare with
 * `patchStrategy:"merge"` (the Go struct tags of k8s.io/api), by field name:
 * the patch meta of kinds that have no schema (custom resources).
 */
export const defaultMergeKeys: MergeKeys = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  env: "name",
  imagePullSecrets: "name",
  resourceClaims: "name",
  ports: "containerPort",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  ownerReferences: "uid",
  conditions: "type",
  addresses: "type",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
};

/** {@link defaultMergeKeys} as patch meta, with `finalizers` merged as a set. */
export const defaultPatchMeta: PatchMeta = patchMetaByFieldName(defaultMergeKeys, new Set(["finalizers"]));

const setElementOrderPrefix = "$setElementOrder/";
const deleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList/";

/**
 * Strategic merge patch, as kubectl and controllers send it: maps merge, lists
 * with a merge key merge element by element, and the directives `$patch`
 * (`replace`, `delete`, `merge`), `$retainKeys`, `$setElementOrder/<list>` and
 * `$deleteFromPrimitiveList/<list>` are honoured.
 */
export function strategicMergePatch(
  original: unknown,
  patch: Record<string, unknown>,
  meta: PatchMeta = defaultPatchMeta,
): unknown {
  return mergeMap(isJsonObject(original) ? copyJson(original) : {}, patch, [], meta);
}

function mergeMap(
  original: Record<string, unknown>,
  patch: Record<string, unknown>,
  path: string[],
  meta: PatchMeta,
): Record<string, unknown> | undefined {
  const directive = patch.$patch;
  if (directive === "delete") return undefined;
  if (directive === "replace") {
    const replaced = copyJson(patch);
    delete replaced.$patch;
    return stripDirectives(replaced);
  }
  if (directive !== undefined && directive !== "merge")
    throw newBadRequest(`unknown patch directive $patch: ${JSON.stringify(directive)} at ${pathText(path)}`);
  const result = original;
  for (const [key, value] of Object.entries(patch)) {
    if (key === "$patch" || key === "$retainKeys" || key.startsWith(setElementOrderPrefix)) continue;
    if (key.startsWith(deleteFromPrimitiveListPrefix)) {
      const field = key.slice(deleteFromPrimitiveListPrefix.length);
      if (!Array.isArray(value)) throw newBadRequest(`${key} must be a list`);
      const current = result[field];
      if (Array.isArray(current)) {
        const deleted = new Set(value.map(identityKey));
        result[field] = current.filter((item) => !deleted.has(identityKey(item)));
      }
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    // Own members only: `result["__proto__"]` would otherwise be Object.prototype, merged into in place.
    const current = Object.hasOwn(result, key) ? result[key] : undefined;
    if (isJsonObject(value)) {
      const merged = mergeMap(isJsonObject(current) ? current : {}, value, [...path, key], meta.field(key));
      if (merged === undefined) delete result[key];
      else setMember(result, key, merged);
    } else if (Array.isArray(value)) {
      setMember(
        result,
        key,
        mergeList(Array.isArray(current) ? current : [], value, [...path, key], meta.field(key)),
      );
    } else {
      setMember(result, key, value);
    }
  }
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(setElementOrderPrefix)) continue;
    const field = key.slice(setElementOrderPrefix.length);
    if (!Array.isArray(order)) throw newBadRequest(`${key} must be a list`);
    const list = result[field];
    if (Array.isArray(list)) result[field] = reorder(list, order, meta.field(field).mergeKey(order));
  }
  const retainKeys = patch.$retainKeys;
  if (retainKeys !== undefined) {
    if (!Array.isArray(retainKeys)) throw newBadRequest(`$retainKeys must be a list at ${pathText(path)}`);
    const retained = new Set(retainKeys);
    for (const key of Object.keys(result)) if (!retained.has(key)) delete result[key];
  }
  return result;
}

function mergeList(original: unknown[], patch: unknown[], path: string[], meta: PatchMeta): unknown[] {
  const mergeKey = meta.mergeKey(patch);
  if (mergeKey !== undefined && patch.every(isJsonObject) && original.every(isJsonObject)) {
    if (patch.some((item) => item.$patch === "replace")) {
      return patch.filter((item) => item.$patch !== "replace").map((item) => stripDirectives(copyJson(item)));
    }
    return mergeByKey(original as Record<string, unknown>[], patch, mergeKey, path, meta.items());
  }
  if (meta.mergesScalars) {
    const result = [...original];
    const present = new Set(original.map(identityKey));
    for (const item of patch) {
      const key = identityKey(item);
      if (!present.has(key)) {
        present.add(key);
        result.push(item);
      }
    }
    return result;
  }
  return patch.map((item) => (isJsonObject(item) ? stripDirectives(copyJson(item)) : item));
}

/**
 * Merges a patch list into a list of maps element by element, matching them by
 * merge key through a map (linear in both lists): a patch element merges into
 * the first element with its key, `$patch: delete` removes it, and an element
 * with a new key is appended.
 */
function mergeByKey(
  original: Record<string, unknown>[],
  patch: Record<string, unknown>[],
  mergeKey: string,
  path: string[],
  itemMeta: PatchMeta,
): unknown[] {
  const slots: (Record<string, unknown> | undefined)[] = [...original];
  // The slots holding each key, in list order; `first` skips those already deleted.
  const byKey = new Map<string, { slots: number[]; first: number }>();
  const remember = (key: string, slot: number) => {
    const entry = byKey.get(key);
    if (entry === undefined) byKey.set(key, { slots: [slot], first: 0 });
    else entry.slots.push(slot);
  };
  for (let slot = 0; slot < slots.length; slot++) remember(identityKey(slots[slot]![mergeKey]), slot);
  for (const item of patch) {
    if (!(mergeKey in item))
      throw newBadRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    const key = identityKey(item[mergeKey]);
    const entry = byKey.get(key);
    const slot = entry === undefined ? undefined : entry.slots[entry.first];
    if (slot === undefined) {
      if (item.$patch === "delete") continue;
      slots.push(stripDirectives(copyJson(item)));
      remember(key, slots.length - 1);
      continue;
    }
    const merged = item.$patch === "delete" ? undefined : mergeMap(slots[slot]!, item, path, itemMeta);
    slots[slot] = merged;
    if (merged === undefined) entry!.first++;
  }
  return slots.filter((item) => item !== undefined);
}

/**
 * Orders `list` as `order` names its elements (by merge key, or by value for
 * scalars); elements it does not name keep their order after them. Each
 * element is placed once, found through a map rather than a search per name.
 */
function reorder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const identity = (item: unknown) => (mergeKey !== undefined && isJsonObject(item) ? item[mergeKey] : item);
  // The indexes of the elements with each key, in list order; `next` is the first not yet placed.
  const byKey = new Map<string, { indexes: number[]; next: number }>();
  list.forEach((item, index) => {
    const key = identityKey(identity(item));
    const entry = byKey.get(key);
    if (entry === undefined) byKey.set(key, { indexes: [index], next: 0 });
    else entry.indexes.push(index);
  });
  const placed = new Array<boolean>(list.length).fill(false);
  const ordered: unknown[] = [];
  for (const wanted of order) {
    const entry = byKey.get(identityKey(identity(wanted)));
    const index = entry?.indexes[entry.next];
    if (index === undefined) continue;
    entry!.next++;
    placed[index] = true;
    ordered.push(list[index]);
  }
  for (let index = 0; index < list.length; index++) if (!placed[index]) ordered.push(list[index]);
  return ordered;
}

/**
 * A string that two JSON values share exactly when they are equal
 * (`jsonEqual`): the key under which merge keys and scalar list elements
 * are matched.
 */
function identityKey(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `s${value}`;
    case "number":
      return `n${value}`;
    case "boolean":
      return `b${value}`;
    case "undefined":
      return "u";
    default:
      return `j${JSON.stringify(value, sortedMembers)}`;
  }
}

/** A JSON.stringify replacer writing object members in sorted order, so that member order does not matter. */
function sortedMembers(_key: string, value: unknown): unknown {
  if (!isJsonObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) setMember(sorted, key, value[key]);
  return sorted;
}

/** `target[key] = value`, as an own data member even for the key "__proto__". */
export function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function stripDirectives(value: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(value)) {
    if (key.startsWith("$")) delete value[key];
    else if (isJsonObject(value[key])) stripDirectives(value[key] as Record<string, unknown>);
  }
  return value;
}

function pathText(path: string[]): string {
  return path.length === 0 ? "the root" : path.join(".");
}
