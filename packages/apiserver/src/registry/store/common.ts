import { apiVersionOf, groupKindOf, type KubeObject, newInvalid, StatusError } from "@reconcile/api";
import {
  managerFromUserAgent,
  type TypeNode,
  trackUpdate,
  typeFor,
  type VersionConverter,
  type VersionedObject,
} from "../../apply/index.js";
import { hasNoMembers, type Mutable } from "../../json.js";
import { FieldErrors } from "../field-errors.js";
import { dnsSubdomainName, validateObjectMeta } from "../meta-validation.js";
import type { ResourceDefinition } from "../resource-definition.js";
import type { DryRunOption, StoreCore } from "./context.js";

export type MutableMeta = Mutable<NonNullable<KubeObject["metadata"]>>;

/** Object metadata and the kind's strategy validation; `old` for an update. 422 listing every problem. */
export function validate(
  store: StoreCore,
  object: KubeObject,
  old: KubeObject | undefined,
  statusOnly = false,
): void {
  const { resource, definition } = store;
  const strategy = definition.strategy;
  const errors = new FieldErrors();
  validateObjectMeta(object, strategy.nameRule ?? dnsSubdomainName, resource.namespaced, errors);
  if (statusOnly && old !== undefined && strategy.validateStatusUpdate !== undefined)
    strategy.validateStatusUpdate(object, old, errors);
  else {
    strategy.validate?.(object, errors);
    if (old === undefined) strategy.validateCreate?.(object, errors);
    else strategy.validateUpdate?.(object, old, errors);
  }
  if (!errors.empty) throw newInvalid(groupKindOf(resource), object.metadata?.name ?? "", errors.list);
}

/**
 * upstream's `ValidateManagedFields` on the entries a request sends: each
 * `operation` `Apply` or `Update`, `fieldsType` `FieldsV1` when set, a
 * manager of at most 128 characters. `[{}]` (the request to clear them) passes.
 */
export function validateRequestedManagedFields(store: StoreCore, object: KubeObject): void {
  const entries = object.metadata?.managedFields;
  if (!Array.isArray(entries) || (entries.length === 1 && Object.keys(entries[0] ?? {}).length === 0)) return;
  const errors = new FieldErrors();
  entries.forEach((entry, i) => {
    const at = `metadata.managedFields[${i}]`;
    const { operation, fieldsType, manager } = (entry ?? {}) as Record<string, unknown>;
    if (operation !== "Apply" && operation !== "Update") {
      errors.invalid(`${at}.operation`, operation ?? "", "must be `Apply` or `Update`");
    }
    if (typeof fieldsType === "string" && fieldsType !== "" && fieldsType !== "FieldsV1") {
      errors.invalid(`${at}.fieldsType`, fieldsType, "must be `FieldsV1`");
    }
    if (typeof manager === "string" && manager.length > 128) {
      errors.list.push({
        type: "FieldValueTooLong",
        field: `${at}.manager`,
        message: `${at}.manager: Too long: may not be more than 128 bytes`,
      });
    }
  });
  if (!errors.empty) throw newInvalid(groupKindOf(store.resource), object.metadata?.name ?? "", errors.list);
}

/**
 * `metadata.managedFields` after a write that is not an apply (kube-apiserver's
 * field manager on Update). As upstream's `UpdateNoErrors`, an object the
 * field manager cannot read (a list item without its merge key) is written
 * with no managed fields rather than failing: validation then says what is
 * wrong with it (a 422, not a 500).
 */
export function ownershipAfterUpdate(
  store: StoreCore,
  existing: KubeObject | undefined,
  object: KubeObject,
  options: DryRunOption,
  subresource: string,
  convert: VersionConverter | undefined = versionConverter(store),
  /** Top-level members the store put back as `existing` has them (see `UpdateOptions.unchanged`). */
  unchanged?: (member: string) => boolean,
): KubeObject {
  try {
    return trackOwnership(store, existing, object, options, subresource, convert, unchanged);
  } catch (error) {
    if (StatusError.isInstance(error)) throw error;
    const { managedFields: _dropped, ...metadata } = object.metadata ?? {};
    return { ...object, metadata } as KubeObject;
  }
}

function trackOwnership(
  store: StoreCore,
  existing: KubeObject | undefined,
  object: KubeObject,
  options: DryRunOption,
  subresource: string,
  convert: VersionConverter | undefined,
  unchanged: ((member: string) => boolean) | undefined,
): KubeObject {
  return trackUpdate({
    before: existing === undefined ? undefined : asJson(existing),
    after: asJson(object),
    manager: managerOf(options),
    apiVersion: apiVersionOf(store.resource),
    now: new Date(store.context.clock.now()),
    type: applyTypeOf(store),
    subresource,
    resetFields: resetFieldsOf(store.definition, subresource),
    convert,
    unchanged,
  }) as KubeObject;
}

/**
 * The kind's objects at its other served versions (the same stored objects:
 * core and events.k8s.io Events, autoscaling/v1 and v2 HPAs), for field
 * managers that wrote through them: this version's object taken to storage
 * and from there to the other one. Only conversions that answer at once
 * are made here; a conversion webhook's are waited for by
 * {@link withLaterConversions}.
 */
export function versionConverter(store: StoreCore): VersionConverter | undefined {
  if (converters.has(store)) return converters.get(store);
  const converter = newVersionConverter(store);
  converters.set(store, converter);
  return converter;
}

const converters = new WeakMap<StoreCore, VersionConverter | undefined>();

function newVersionConverter(store: StoreCore): VersionConverter | undefined {
  const definitionFor = store.context.definitionFor;
  if (definitionFor === undefined) return undefined;
  const source = store.definition;
  const kind = source.descriptor.kind;
  return (object, apiVersion) => {
    const target = definitionFor(apiVersion, kind);
    if (target === undefined || !sameStorage(source, target)) return undefined;
    const stored =
      source.conversion === undefined ? object : source.conversion.toStorage(object as KubeObject);
    if (stored instanceof Promise) return undefined;
    const served =
      target.conversion === undefined ? stored : target.conversion.fromStorage(stored as KubeObject);
    if (served instanceof Promise) return undefined;
    return {
      object: { ...(served as Record<string, unknown>), apiVersion },
      type: target.applyType ?? typeFor(apiVersion, kind),
    };
  };
}

/**
 * Runs `track` (a write's managed fields, worked out with `convert`); for a
 * kind whose versions convert through a webhook, again once the conversions
 * the run asked for are in, so managers of other versions are compared in
 * their own versions there too (at most three rounds).
 */
export function withLaterConversions<T>(
  store: StoreCore,
  existing: KubeObject | undefined,
  track: (convert: VersionConverter | undefined) => T,
): T | Promise<T> {
  if (!convertsLater(store, existing)) return track(versionConverter(store));
  return (async () => {
    const later = new LaterConversions(store);
    let result = track(later.convert);
    for (let round = 0; round < 3 && (await later.settle()); round++) result = track(later.convert);
    return result;
  })();
}

/** Whether the write's version, or the version of a manager of `existing`, converts through a webhook. */
function convertsLater(store: StoreCore, existing: KubeObject | undefined): boolean {
  const source = store.definition;
  if (source.conversion?.answersLater === true) return true;
  const definitionFor = store.context.definitionFor;
  if (definitionFor === undefined) return false;
  const own = apiVersionOf(store.resource);
  for (const entry of existing?.metadata?.managedFields ?? []) {
    const version = entry.apiVersion;
    if (version !== undefined && version !== own)
      if (definitionFor(version, source.descriptor.kind)?.conversion?.answersLater === true) return true;
  }
  return false;
}

/** Conversions asked for during a run and answered later; a run after they are in gets them at once. */
class LaterConversions {
  readonly #store: StoreCore;
  readonly #answers = new Map<string, VersionedObject | undefined>();
  #waiting: Promise<unknown>[] = [];

  constructor(store: StoreCore) {
    this.#store = store;
  }

  readonly convert: VersionConverter = (object, apiVersion) => {
    const key = `${apiVersion}\u0000${JSON.stringify(object)}`;
    if (this.#answers.has(key)) return this.#answers.get(key);
    // Asked once: until it is in (or if it fails), the request's comparison stands for that version.
    this.#answers.set(key, undefined);
    this.#waiting.push(
      convertLater(this.#store, object, apiVersion).then(
        (converted) => this.#answers.set(key, converted),
        () => {},
      ),
    );
    return undefined;
  };

  /** Waits for the conversions asked for since the last time; whether there were any. */
  async settle(): Promise<boolean> {
    const waiting = this.#waiting;
    if (waiting.length === 0) return false;
    this.#waiting = [];
    await Promise.all(waiting);
    return true;
  }
}

/** `object` at `apiVersion`, through storage, waiting for conversions that answer later. */
async function convertLater(
  store: StoreCore,
  object: Record<string, unknown>,
  apiVersion: string,
): Promise<VersionedObject | undefined> {
  const source = store.definition;
  const kind = source.descriptor.kind;
  const target = store.context.definitionFor?.(apiVersion, kind);
  if (target === undefined || !sameStorage(source, target)) return undefined;
  const stored =
    source.conversion === undefined ? object : await source.conversion.toStorage(object as KubeObject);
  const served =
    target.conversion === undefined ? stored : await target.conversion.fromStorage(stored as KubeObject);
  return {
    object: { ...(served as Record<string, unknown>), apiVersion },
    type: target.applyType ?? typeFor(apiVersion, kind),
  };
}

/** Whether two definitions keep the same stored objects. */
function sameStorage(a: ResourceDefinition, b: ResourceDefinition): boolean {
  const at = a.storedAs ?? a.descriptor;
  const bt = b.storedAs ?? b.descriptor;
  return at.group === bt.group && at.plural === bt.plural;
}

/** The merge semantics apply uses for a kind: its definition's, else the built-in table's (deduced for unknown kinds). */
export function applyTypeOf(store: StoreCore): TypeNode {
  return store.definition.applyType ?? typeFor(apiVersionOf(store.resource), store.resource.kind);
}

/**
 * The paths an endpoint's strategy resets, so they are never owned through it
 * (kube-apiserver's `ResetFieldsStrategy`): what the kind's strategy names,
 * else the default: a main resource with a status subresource keeps its
 * status; `/status` keeps the spec.
 */
export function resetFieldsOf(
  definition: ResourceDefinition,
  subresource: string,
): ReadonlyArray<readonly string[]> {
  const own = definition.strategy.resetFields?.[subresource];
  if (own !== undefined) return own;
  if (subresource === "status") return statusResets;
  if (subresource === "" && definition.descriptor.subresources.includes("status")) return objectResets;
  return [];
}

const statusResets = [["spec"]] as const;
const objectResets = [["status"]] as const;

/** The manager a write is credited to: `fieldManager`, else the User-Agent's product, else `unknown`. */
export function managerOf(options: DryRunOption): string {
  return options.fieldManager || managerFromUserAgent(options.userAgent);
}

/** An object as the apply engine reads it: plain JSON. */
export function asJson(object: KubeObject): Record<string, unknown> {
  return object as unknown as Record<string, unknown>;
}

/**
 * Drops empty labels, annotations, ownerReferences and finalizers, as
 * kube-apiserver's encoding omits them (`omitempty`): a pod whose last owner
 * was released carries no `ownerReferences: []`.
 */
export function omitEmptyMetadata(meta: MutableMeta): void {
  if (meta.labels !== undefined && hasNoMembers(meta.labels)) delete meta.labels;
  if (meta.annotations !== undefined && hasNoMembers(meta.annotations)) delete meta.annotations;
  if (meta.ownerReferences?.length === 0) delete meta.ownerReferences;
  if (meta.finalizers?.length === 0) delete meta.finalizers;
}
