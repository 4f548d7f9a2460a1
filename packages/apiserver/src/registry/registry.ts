import { randomUUID } from "node:crypto";
import {
  apiVersionOf,
  type FieldSelector,
  fieldSelectorError,
  groupKindOf,
  groupResourceOf,
  type KubeObject,
  type ListOptions,
  newBadRequest,
  newConflict,
  newForbidden,
  newInvalid,
  newMethodNotSupported,
  newNotFound,
  type ObjectList,
  objectFieldSet,
  parseFieldSelector,
  parseSelector,
  pods,
  type ResourceDescriptor,
  type Scale,
  type Selector,
  type Status,
  StatusError,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import {
  applyWithLastApplied,
  managerFromUserAgent,
  type TypeNode,
  trackUpdate,
  typeFor,
} from "../apply/index.js";
import { copyJson, isJsonObject, jsonEqual, type Mutable } from "../json.js";
import { definitionFor } from "../kinds/builtin.js";
import type { ResourceDefinition } from "../kinds/definition.js";
import { allocateServiceIP, type ClusterIPAllocator, serviceIPOf } from "../kinds/service-ips.js";
import { checkNesting } from "../limits.js";
import type { Storage, StorageEvent } from "../storage/storage.js";
import { StorageError } from "../storage/storage.js";
import { continueExpiredMessage, tooLargeResourceVersion, toStatusError } from "../storage/storage-errors.js";
import { decodeContinue, encodeContinue } from "./continue-token.js";
import { ResourceDefinitions } from "./definitions.js";
import { FieldErrors } from "./field-errors.js";
import type { FieldValidation } from "./field-validation.js";
import { dnsSubdomainName, validateObjectMeta } from "./meta-validation.js";
import { applyPatch, type PatchType } from "./patch.js";
import { objectMetaSchema, typeProblem } from "./schema.js";
import { type DecodeVerb, decodeObject, jsonSize, requestTooLarge } from "./store/decode.js";
import { collectionPrefix, keyOf, objectKey } from "./store/keys.js";
import type { Strategy } from "./strategy.js";

/** Namespaces that can never be deleted (kube-apiserver's NamespaceLifecycle admission). */
const immortalNamespaces: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public"]);

/** Everything a registry needs; `ApiServer` fills these from its own options and defaults. */
export interface RegistryOptions {
  /** Where objects live. */
  storage: Storage;
  /** Time for timestamps and watch timeouts. */
  clock: Clock;
  /**
   * The kinds served, live: adding one serves it at once. Default: the
   * built-in definitions of `resources`.
   */
  definitions?: ResourceDefinitions | undefined;
  /** The resources served, when `definitions` is not given; requests for any other resource are 404. */
  resources?: readonly ResourceDescriptor[] | undefined;
  /** Largest accepted object, in bytes of JSON. */
  maxObjectBytes: number;
  /** Bookmark interval for watches that allow bookmarks. */
  bookmarkIntervalMs: number;
  /** Resolves once the storage holds the initial namespaces; every request waits for it. */
  ready?: Promise<void>;
  /** Where Services take their cluster IPs from; without it, Services get none. */
  serviceIPs?: ClusterIPAllocator | undefined;
}

export interface DryRunOption {
  dryRun?: "All" | undefined;
  /**
   * The manager that `metadata.managedFields` credits with this write: the
   * `fieldManager` parameter, or the User-Agent's product (see
   * `managerFromUserAgent`). Default `unknown`, as kube-apiserver names a
   * writer that gives neither.
   */
  fieldManager?: string | undefined;
  /** The request's User-Agent, whose product names the manager when `fieldManager` is not given. */
  userAgent?: string | undefined;
  /**
   * What to do about fields the kind's schema does not declare and fields
   * given twice (`fieldValidation`); they are dropped in any case. Default:
   * Warn, with nowhere for the warnings to go.
   */
  fieldValidation?: FieldValidation | undefined;
}

export interface PatchOptions extends DryRunOption {
  subresource?: "status" | undefined;
  force?: boolean | undefined;
}

export interface RegistryDeleteOptions extends DryRunOption {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: string | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
}

/** A running watch as the registry hands it out: wire-format events, and a way to stop. */
export interface RegistryWatch extends AsyncIterable<WatchEvent> {
  stop(): void;
}

/** The finalizers the garbage collector acts on. */
export const orphanFinalizer = "orphan";
export const foregroundFinalizer = "foregroundDeletion";

const propagationPolicies = ["Background", "Foreground", "Orphan"];
/** How many times a generated name is retried after a collision. */
const generateNameAttempts = 8;
/** How many times a read-modify-write is retried after losing a race (GuaranteedUpdate). */
const updateAttempts = 16;

/**
 * Every API verb with kube-apiserver's semantics, over a `Storage`. Both the
 * in-process client and the HTTP server call exactly this. Inputs are copied
 * (callers keep their objects); outputs are the stored objects themselves,
 * which callers must copy before handing out or treat as read-only.
 */
export class Registry {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #definitions: ResourceDefinitions;
  readonly #maxObjectBytes: number;
  readonly #bookmarkIntervalMs: number;
  readonly #ready: Promise<void> | undefined;
  readonly #serviceIPs: ClusterIPAllocator | undefined;
  /** How to stop each watch being served. */
  readonly #watches = new Set<() => void>();

  constructor(options: RegistryOptions) {
    this.#storage = options.storage;
    this.#clock = options.clock;
    this.#definitions =
      options.definitions ?? new ResourceDefinitions((options.resources ?? []).map(definitionFor));
    this.#maxObjectBytes = options.maxObjectBytes;
    this.#bookmarkIntervalMs = options.bookmarkIntervalMs;
    this.#ready = options.ready;
    this.#serviceIPs = options.serviceIPs;
  }

  /** The resources served now, in discovery order. */
  get resources(): readonly ResourceDescriptor[] {
    return this.#definitions.descriptors();
  }

  /** The live set of served kinds: add a definition to serve a kind from the next request on. */
  get definitions(): ResourceDefinitions {
    return this.#definitions;
  }

  /** The served resource for an owner reference's `apiVersion` and `kind`, if any. */
  resourceForKind(apiVersion: string, kind: string): ResourceDescriptor | undefined {
    return this.#definitions.forKind(apiVersion, kind)?.descriptor;
  }

  /** The storage key of one object. */
  keyOf(resource: ResourceDescriptor, namespace: string | undefined, name: string): string {
    return keyOf(resource, namespace, name);
  }

  async list(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    options: ListOptions = {},
  ): Promise<ObjectList> {
    await this.#ready;
    resource = this.#served(resource);
    const predicate = this.#predicate(resource, options.labelSelector, options.fieldSelector);
    const prefix = this.#collectionPrefix(resource, namespace);
    const rv = options.resourceVersion ?? "";
    const limit = parseLimit(options.limit);
    let revision: number | undefined;
    let startKey: string | undefined;
    // As kube-apiserver's ValidateListOptions.
    if (options.resourceVersionMatch !== undefined && options.continue)
      throw newBadRequest("resourceVersionMatch is forbidden when continue is provided");
    if (options.resourceVersionMatch === "NotOlderThan" && rv === "")
      throw newBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided");
    if (options.continue) {
      if (rv !== "" && rv !== "0")
        throw newBadRequest("specifying resource version is not allowed when using continue");
      const token = decodeContinue(options.continue);
      revision = token.revision;
      startKey = prefix + token.start;
    } else if (rv !== "" && rv !== "0") {
      const requested = parseResourceVersion(rv);
      const current = await this.#storage.currentRevision();
      if (requested > current)
        throw tooLargeResourceVersion(`Too large resource version: ${requested}, current: ${current}`);
      // A limit without resourceVersionMatch also means Exact, as kube-apiserver's legacy list semantics.
      const exact =
        options.resourceVersionMatch === "Exact" ||
        (options.resourceVersionMatch === undefined && limit !== undefined);
      if (exact) revision = requested;
    } else if (options.resourceVersionMatch === "Exact") {
      throw newBadRequest(`resourceVersionMatch "Exact" requires a resourceVersion other than "" and "0"`);
    }
    let result: Awaited<ReturnType<Storage["list"]>>;
    try {
      result = await this.#storage.list(prefix, {
        revision,
        startKey,
        limit,
        predicate: predicate?.matches,
      });
    } catch (error) {
      if (options.continue && StorageError.is(error, "Expired")) {
        throw new StatusError({ code: 410, reason: "Expired", message: continueExpiredMessage });
      }
      throw toStatusError(error, groupResourceOf(resource), "");
    }
    const metadata: ObjectList["metadata"] = { resourceVersion: String(result.revision) };
    if (result.nextKey !== undefined) {
      metadata.continue = encodeContinue({
        revision: result.revision,
        start: result.nextKey.slice(prefix.length),
      });
      if (result.remaining !== undefined) metadata.remainingItemCount = result.remaining;
    }
    return { apiVersion: apiVersionOf(resource), kind: resource.listKind, metadata, items: result.items };
  }

  async watch(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    options: WatchOptions = {},
  ): Promise<RegistryWatch> {
    await this.#ready;
    resource = this.#served(resource);
    const predicate = this.#predicate(resource, options.labelSelector, options.fieldSelector);
    const rv = options.resourceVersion ?? "";
    const fromRevision = rv === "" || rv === "0" ? undefined : parseResourceVersion(rv);
    if (fromRevision !== undefined) {
      // A version this server has not reached (say, from before it restarted): kube-apiserver waits
      // briefly for its cache and then answers "Too large resource version"; all our writes are
      // local, so the answer is known at once, and the client relists.
      const current = await this.#storage.currentRevision();
      if (fromRevision > current)
        throw tooLargeResourceVersion(`Too large resource version: ${fromRevision}, current: ${current}`);
    }
    const timeoutSeconds = options.timeoutSeconds;
    if (timeoutSeconds !== undefined && !(Number.isFinite(timeoutSeconds) && timeoutSeconds >= 0))
      throw newBadRequest(`timeoutSeconds: Invalid value: ${timeoutSeconds}: must be a non-negative number`);
    options.signal?.throwIfAborted();
    const watcher = this.#storage.watch(this.#collectionPrefix(resource, namespace), {
      fromRevision,
      predicate: predicate?.matches,
      bookmarkIntervalMs: options.allowWatchBookmarks ? this.#bookmarkIntervalMs : undefined,
    });
    const clock = this.#clock;
    const signal = options.signal;
    let timer: ReturnType<Clock["setTimeout"]> | undefined;
    let stopped = false;
    // Ends the watch and releases everything it holds: the timeout timer, the abort listener.
    const stop = () => {
      if (stopped) return;
      stopped = true;
      watcher.stop();
      if (timer !== undefined) clock.clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      this.#watches.delete(stop);
    };
    this.#watches.add(stop);
    // setTimeout holds at most 2^31-1 ms (about 24.8 days) and fires a longer delay at once.
    if (timeoutSeconds) timer = clock.setTimeout(stop, Math.min(timeoutSeconds * 1000, 2_147_483_647));
    signal?.addEventListener("abort", stop, { once: true });
    const bookmarkOf = (revision: number): KubeObject => ({
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      metadata: { resourceVersion: String(revision) },
    });
    const gr = groupResourceOf(resource);
    const iterator = watcher[Symbol.asyncIterator]();
    // A plain mapping iterator (no async generator): fan-out pays this per event per watcher.
    const events: AsyncIterator<WatchEvent> & RegistryWatch = {
      next: () =>
        iterator.next().then((next): IteratorResult<WatchEvent> => {
          if (next.done) {
            stop();
            return { done: true, value: undefined };
          }
          return { done: false, value: toWatchEvent(next.value, gr, bookmarkOf) };
        }),
      return: () => {
        stop();
        return Promise.resolve({ done: true, value: undefined });
      },
      [Symbol.asyncIterator]: () => events,
      stop,
    };
    return events;
  }

  /** Stops every watch served through this registry. */
  closeWatches(): void {
    for (const stop of [...this.#watches]) stop();
  }

  async get(resource: ResourceDescriptor, namespace: string | undefined, name: string): Promise<KubeObject> {
    await this.#ready;
    resource = this.#served(resource);
    const object = await this.#storage.get(this.#objectKey(resource, namespace, name));
    if (object === undefined) throw newNotFound(groupResourceOf(resource), name);
    return object;
  }

  async create(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    body: unknown,
    options: DryRunOption & { managedFieldsComputed?: boolean | undefined } = {},
  ): Promise<KubeObject> {
    await this.#ready;
    resource = this.#served(resource);
    const definition = this.#definitionOf(resource);
    const strategy = definition.strategy;
    const object = this.#decode(resource, body, options.fieldValidation);
    const meta = (object.metadata ??= {}) as MutableMeta;
    this.#reconcileNamespace(resource, meta, namespace);
    if (meta.resourceVersion)
      throw newBadRequest("resourceVersion should not be set on objects to be created");
    if (resource.namespaced && meta.namespace)
      await this.#checkNamespaceOpen(resource, meta.namespace, meta.name ?? "");
    strategy.prepareForCreate?.(object);
    strategy.applyDefaults?.(object);
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.#clock.now());
    if (definition.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    omitEmptyMetadata(meta);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (options.managedFieldsComputed) {
      // An apply that creates: the apply computed the ownership; defaulted fields stay unowned.
    } else {
      delete meta.managedFields;
      const tracked = this.#ownershipAfterUpdate(resource, undefined, object, options, "").metadata
        ?.managedFields;
      if (tracked !== undefined) meta.managedFields = tracked;
    }
    const generateName = meta.generateName;
    const explicitName = Boolean(meta.name);
    for (let attempt = 0; ; attempt++) {
      if (!explicitName && generateName) meta.name = generateName + randomSuffix();
      this.#validate(resource, strategy, object, undefined);
      const allocated = this.#allocate(resource, object);
      if (options.dryRun === "All") {
        this.#release(allocated);
        return object;
      }
      try {
        return await this.#storage.create(this.keyOf(resource, meta.namespace, meta.name!), object);
      } catch (error) {
        this.#release(allocated);
        const retry = StorageError.is(error, "KeyExists") && !explicitName && attempt < generateNameAttempts;
        if (!retry) throw toStatusError(error, groupResourceOf(resource), meta.name ?? "");
      }
    }
  }

  async update(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption & { subresource?: "status" | "finalize" | undefined } = {},
  ): Promise<KubeObject> {
    await this.#ready;
    resource = this.#served(resource);
    const object = this.#decode(resource, body, options.fieldValidation);
    const meta = (object.metadata ??= {});
    this.#reconcileNamespace(resource, meta, namespace);
    if (meta.name !== undefined && meta.name !== name)
      throw newBadRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    meta.name = name;
    const precondition = meta.resourceVersion || undefined;
    return this.#guaranteedUpdate(resource, meta.namespace, name, precondition, options, () => object);
  }

  async patch(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions = {},
  ): Promise<KubeObject> {
    return (await this.patchWithOutcome(resource, namespace, name, patchType, patch, options)).object;
  }

  /**
   * {@link patch}, telling whether the object was created (an apply patch of an
   * absent object: 201, not 200) from the write itself, not from a second read
   * that a concurrent writer could make wrong (genericregistry.Store's `created`).
   */
  async patchWithOutcome(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions = {},
  ): Promise<{ object: KubeObject; created: boolean }> {
    await this.#ready;
    resource = this.#served(resource);
    checkNesting(patch, "the patch");
    const size = jsonSize(patch);
    if (size > this.#maxObjectBytes) throw requestTooLarge(this.#maxObjectBytes);
    if (patchType === "apply") return this.#apply(resource, namespace, name, patch, options);
    const ns = resource.namespaced ? namespace : undefined;
    const object = await this.#guaranteedUpdate(resource, ns, name, undefined, options, (existing) => {
      const patched = applyPatch(patchType, existing, patch, this.#definitionOf(resource).mergeKeys);
      if (!isJsonObject(patched))
        throw newBadRequest("the patch made the object something other than a JSON object");
      const decoded = this.#decode(resource, patched, options.fieldValidation, "patch");
      // As kube-apiserver's checkName: a patch may not rename the object or move it.
      const meta = decoded.metadata ?? {};
      if (meta.name !== undefined && meta.name !== name)
        throw newBadRequest(
          `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
        );
      if (ns && meta.namespace !== undefined && meta.namespace !== ns)
        throw newBadRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      return decoded;
    });
    return { object, created: false };
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`): the configuration is
   * merged into the live object by the kind's list types and keys, fields the
   * manager dropped are removed, and a value another manager owns is a 409
   * unless `force` (see `apply/`). Creates the object when it is absent.
   */
  async #apply(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    if (!isJsonObject(patch)) throw newBadRequest("an apply patch must be a JSON object");
    const apiVersion = apiVersionOf(resource);
    if (patch.apiVersion !== apiVersion || patch.kind !== resource.kind) {
      const [group, version] = String(patch.apiVersion ?? "").includes("/")
        ? String(patch.apiVersion).split("/", 2)
        : ["", String(patch.apiVersion ?? "")];
      throw newBadRequest(`invalid object type: ${group}/${version}, Kind=${String(patch.kind ?? "")}`);
    }
    const meta = isJsonObject(patch.metadata) ? patch.metadata : {};
    if (meta.managedFields !== undefined && meta.managedFields !== null)
      throw newBadRequest("metadata.managedFields must be nil");
    if (meta.name !== name)
      throw newBadRequest(
        `the name of the object (${String(meta.name ?? "")}) does not match the name on the URL (${name})`,
      );
    const ns = resource.namespaced ? namespace : undefined;
    if (ns && meta.namespace !== undefined && meta.namespace !== null && meta.namespace !== ns)
      throw newBadRequest(
        `the namespace of the object (${String(meta.namespace)}) does not match the namespace on the request (${ns})`,
      );
    const subresource = options.subresource ?? "";
    const applyOptions = {
      manager: managerOf(options),
      apiVersion,
      force: options.force === true,
      now: new Date(this.#clock.now()),
      type: this.#applyTypeOf(resource),
      subresource,
      resetFields: resetFieldsOf(resource, subresource),
    };
    const key = this.#objectKey(resource, namespace, name);
    if ((await this.#storage.get(key)) === undefined) {
      if (meta.uid !== undefined && meta.uid !== null && meta.uid !== "")
        throw newConflict(
          groupResourceOf(resource),
          name,
          `uid mismatch: the provided object specified uid ${String(meta.uid)}, and no existing object was found`,
        );
      const config = this.#decode(resource, patch, undefined, "apply", ns ? `${ns}/${name}` : name);
      const applied = applyWithLastApplied({ ...applyOptions, live: undefined, config: asJson(config) });
      const object = await this.create(resource, namespace, applied, {
        ...options,
        managedFieldsComputed: true,
      });
      return { object, created: true };
    }
    const object = await this.#guaranteedUpdate(
      resource,
      ns,
      name,
      undefined,
      { ...options, managedFieldsComputed: true },
      (existing) => {
        const config = this.#decode(resource, patch, undefined, "apply", ns ? `${ns}/${name}` : name);
        return applyWithLastApplied({
          ...applyOptions,
          live: asJson(existing),
          config: asJson(config),
        }) as KubeObject;
      },
    );
    return { object, created: false };
  }

  /** `metadata.managedFields` after a write that is not an apply (kube-apiserver's field manager on Update). */
  #ownershipAfterUpdate(
    resource: ResourceDescriptor,
    existing: KubeObject | undefined,
    object: KubeObject,
    options: DryRunOption,
    subresource: string,
  ): KubeObject {
    return trackUpdate({
      before: existing === undefined ? undefined : asJson(existing),
      after: asJson(object),
      manager: managerOf(options),
      apiVersion: apiVersionOf(resource),
      now: new Date(this.#clock.now()),
      type: this.#applyTypeOf(resource),
      subresource,
      resetFields: resetFieldsOf(resource, subresource),
    }) as KubeObject;
  }

  /** The merge semantics apply uses for a kind: its definition's, else the built-in table's (deduced for unknown kinds). */
  #applyTypeOf(resource: ResourceDescriptor): TypeNode {
    return this.#definitionOf(resource).applyType ?? typeFor(apiVersionOf(resource), resource.kind);
  }

  async delete(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    options: RegistryDeleteOptions = {},
  ): Promise<KubeObject> {
    return (await this.deleteWithOutcome(resource, namespace, name, options)).object;
  }

  /**
   * {@link delete}, telling whether the object left storage (200) or was only
   * marked for graceful deletion or finalizers (202), from the write itself
   * rather than a second read (genericregistry.Store's `deleted`). A dry run
   * deletes nothing.
   */
  async deleteWithOutcome(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    options: RegistryDeleteOptions = {},
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    await this.#ready;
    resource = this.#served(resource);
    const gr = groupResourceOf(resource);
    // kube-apiserver's NamespaceLifecycle admission keeps these namespaces forever.
    if (resource.group === "" && resource.plural === "namespaces" && immortalNamespaces.has(name))
      throw newForbidden(gr, name, "this namespace may not be deleted");
    const policy = options.propagationPolicy;
    if (policy !== undefined && !propagationPolicies.includes(policy))
      throw newBadRequest(
        `propagationPolicy: Unsupported value: "${policy}": supported values: "Background", "Foreground", "Orphan"`,
      );
    const grace = options.gracePeriodSeconds;
    if (grace !== undefined && !Number.isInteger(grace))
      throw newBadRequest(`gracePeriodSeconds: Invalid value: ${grace}: must be an integer`);
    const key = this.#objectKey(resource, namespace, name);
    const strategy = this.#definitionOf(resource).strategy;
    for (let attempt = 0; ; attempt++) {
      const existing = await this.#storage.get(key);
      if (existing === undefined) throw newNotFound(gr, name);
      const meta = existing.metadata ?? {};
      const preconditions = options.preconditions ?? {};
      if (preconditions.uid !== undefined && preconditions.uid !== meta.uid)
        throw newConflict(
          gr,
          name,
          `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta.uid ?? ""}`,
        );
      if (
        preconditions.resourceVersion !== undefined &&
        preconditions.resourceVersion !== meta.resourceVersion
      )
        throw newConflict(
          gr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ""}`,
        );
      const revision = Number(meta.resourceVersion);
      const finalizers = new Set(meta.finalizers ?? []);
      if (meta.deletionTimestamp === undefined)
        for (const finalizer of strategy.deletionFinalizers ?? []) finalizers.add(finalizer);
      if (policy === "Orphan") {
        finalizers.add(orphanFinalizer);
        finalizers.delete(foregroundFinalizer);
      } else if (policy === "Foreground") {
        finalizers.add(foregroundFinalizer);
        finalizers.delete(orphanFinalizer);
      } else if (policy === "Background") {
        finalizers.delete(orphanFinalizer);
        finalizers.delete(foregroundFinalizer);
      }
      const period = strategy.gracePeriodSeconds?.(existing, grace) ?? 0;
      const pending = finalizers.size > 0 || strategy.holdsDeletion?.(existing) === true;
      try {
        if (!pending && period === 0) {
          if (options.dryRun === "All") return { object: existing, deleted: false };
          return {
            object: this.#removed(resource, await this.#storage.delete(key, revision)),
            deleted: true,
          };
        }
        // Graceful deletion (BeforeDelete): mark the object; it stays until its grace runs out
        // (a delete with grace 0) and its finalizers are cleared.
        const updated = copyJson(existing);
        const updatedMeta = (updated.metadata ??= {}) as MutableMeta;
        const now = this.#clock.now();
        if (!(now + period * 1000 <= latestTimestampMs)) throw gracePeriodTooLong(period);
        if (updatedMeta.deletionTimestamp === undefined) {
          updatedMeta.deletionTimestamp = rfc3339(now + period * 1000);
          updatedMeta.deletionGracePeriodSeconds = period;
          // BeforeDelete counts the deletion as a change only where generation is tracked.
          if ((updatedMeta.generation ?? 0) > 0) updatedMeta.generation = (updatedMeta.generation ?? 0) + 1;
          strategy.prepareForDelete?.(updated);
        } else if (period < (updatedMeta.deletionGracePeriodSeconds ?? 0)) {
          // A shorter grace period shortens a deletion already under way; a longer one does not extend it.
          updatedMeta.deletionTimestamp = rfc3339(now + period * 1000);
          updatedMeta.deletionGracePeriodSeconds = period;
        }
        if (pending) updatedMeta.finalizers = [...finalizers];
        else delete updatedMeta.finalizers;
        if (!pending && updatedMeta.deletionGracePeriodSeconds === 0) {
          if (options.dryRun === "All") return { object: existing, deleted: false };
          return {
            object: this.#removed(resource, await this.#storage.delete(key, revision)),
            deleted: true,
          };
        }
        if (jsonEqual(updated, existing) || options.dryRun === "All")
          return { object: existing, deleted: false };
        return { object: await this.#storage.update(key, updated, revision), deleted: false };
      } catch (error) {
        if (StorageError.is(error, "Conflict") && attempt < updateAttempts) continue;
        throw toStatusError(error, gr, name);
      }
    }
  }

  async deleteCollection(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    options: RegistryDeleteOptions & {
      labelSelector?: string | undefined;
      fieldSelector?: string | undefined;
    } = {},
  ): Promise<ObjectList> {
    const listed = await this.list(resource, namespace, {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    });
    const deleted: KubeObject[] = [];
    for (const item of listed.items) {
      try {
        deleted.push(
          await this.delete(resource, item.metadata?.namespace, item.metadata?.name ?? "", options),
        );
      } catch (error) {
        // Something else deleted it first: that is the outcome asked for.
        if (!(StatusError.isInstance(error) && error.reason === "NotFound")) throw error;
      }
    }
    return { ...listed, items: deleted };
  }

  /**
   * `POST pods/{name}/binding` (kube-apiserver's `BindingREST`): checks the
   * Binding, then sets the pod's `spec.nodeName` and `PodScheduled=True` in
   * one write (see `pod-binding.ts` for the rules and their errors).
   */
  /** `POST pods/{name}/binding`: assigns the pod to the Binding's node in one write. */
  async bindPod(namespace: string, name: string, body: unknown, options: DryRunOption = {}): Promise<void> {
    await this.createSubresource(pods, namespace, name, "binding", body, options);
  }

  /**
   * POSTs a body to a subresource its kind's definition handles (binding,
   * eviction…); 404 if the kind has no such subresource.
   */
  async createSubresource(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: unknown,
    options: DryRunOption = {},
  ): Promise<void> {
    await this.#ready;
    resource = this.#served(resource);
    const handler = Object.hasOwn(this.#definitionOf(resource).subresources, subresource)
      ? this.#definitionOf(resource).subresources[subresource]
      : undefined;
    if (handler === undefined) throw newNotFound(groupResourceOf(resource), `${name}/${subresource}`);
    const served = resource;
    await handler.create(
      {
        now: () => rfc3339(this.#clock.now()),
        update: (ns, objectName, tryUpdate, updateOptions) =>
          this.#rawUpdate(served, ns, objectName, tryUpdate, updateOptions),
        get: (ns, objectName) => this.get(served, ns, objectName),
        delete: async (ns, objectName, deleteOptions) => {
          await this.deleteWithOutcome(served, ns, objectName, deleteOptions);
        },
      },
      namespace,
      name,
      body,
      options,
    );
  }

  /** Takes a new Service's cluster IP (or the one it asks for); the address, to give back if the write fails. */
  #allocate(resource: ResourceDescriptor, object: KubeObject): string | undefined {
    if (this.#serviceIPs === undefined || !isServices(resource)) return undefined;
    return allocateServiceIP(this.#serviceIPs, object);
  }

  #release(ip: string | undefined): void {
    if (ip !== undefined) this.#serviceIPs?.release(ip);
  }

  /** An object gone from storage: a Service's cluster IP is free again. */
  #removed(resource: ResourceDescriptor, object: KubeObject): KubeObject {
    if (isServices(resource)) this.#release(serviceIPOf(object));
    return object;
  }

  /** GuaranteedUpdate without the strategy: what a subresource handler writes is stored as it is. */
  async #rawUpdate(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    tryUpdate: (existing: KubeObject) => KubeObject,
    options: DryRunOption,
  ): Promise<KubeObject> {
    const gr = groupResourceOf(resource);
    const key = this.#objectKey(resource, namespace, name);
    for (let attempt = 0; ; attempt++) {
      const existing = await this.#storage.get(key);
      if (existing === undefined) throw newNotFound(gr, name);
      const updated = tryUpdate(existing);
      if (options.dryRun === "All") return updated;
      try {
        return await this.#storage.update(key, updated, Number(existing.metadata?.resourceVersion));
      } catch (error) {
        if (StorageError.is(error, "Conflict") && attempt < updateAttempts) continue;
        throw toStatusError(error, gr, name);
      }
    }
  }

  async getScale(resource: ResourceDescriptor, namespace: string | undefined, name: string): Promise<Scale> {
    const scale = this.#scaleOf(resource);
    return toScale(scale, await this.get(resource, namespace, name));
  }

  async updateScale(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption = {},
  ): Promise<Scale> {
    await this.#ready;
    resource = this.#served(resource);
    const scale = this.#scaleOf(resource);
    if (!isJsonObject(body)) throw newBadRequest("the request body must be a Scale object");
    const requested = body as Scale;
    const problem = typeProblem(
      requested,
      { fields: { metadata: objectMetaSchema, spec: { fields: { replicas: "integer" } } } },
      "",
    );
    if (problem)
      throw newBadRequest(`Scale in version "autoscaling/v1" cannot be handled as a Scale: ${problem}`);
    if (requested.metadata?.name !== undefined && requested.metadata.name !== name)
      throw newBadRequest(
        `the name of the object (${requested.metadata.name}) does not match the name on the URL (${name})`,
      );
    const replicas = requested.spec?.replicas ?? 0;
    if (replicas < 0) {
      throw newInvalid({ group: "autoscaling", kind: "Scale" }, name, [
        {
          type: "FieldValueInvalid",
          field: "spec.replicas",
          message: `spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`,
        },
      ]);
    }
    const precondition = requested.metadata?.resourceVersion || undefined;
    const ns = resource.namespaced ? namespace : undefined;
    const scaleOptions = { ...options, subresource: "scale" as const };
    const updated = await this.#guaranteedUpdate(
      resource,
      ns,
      name,
      precondition,
      scaleOptions,
      (existing) => {
        const copy = copyJson(existing);
        scale.setReplicas(copy, replicas);
        return copy;
      },
    );
    return toScale(scale, updated);
  }

  /**
   * Read, modify, write, retried while another writer wins the race (kube-apiserver's
   * GuaranteedUpdate). `precondition` is the resourceVersion the caller based its
   * change on: a mismatch is a 409 Conflict, never retried.
   */
  async #guaranteedUpdate(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    precondition: string | undefined,
    options: DryRunOption & {
      subresource?: "status" | "scale" | "finalize" | undefined;
      /** The write is an apply: `tryUpdate` returns the object with its managedFields already computed. */
      managedFieldsComputed?: boolean | undefined;
    },
    tryUpdate: (existing: KubeObject) => KubeObject,
  ): Promise<KubeObject> {
    const gr = groupResourceOf(resource);
    const key = this.#objectKey(resource, namespace, name);
    const strategy = this.#definitionOf(resource).strategy;
    const statusOnly = options.subresource === "status";
    if (statusOnly && !resource.subresources.includes("status")) throw newNotFound(gr, `${name}/status`);
    const finalize = options.subresource === "finalize";
    if (finalize && strategy.prepareForFinalize === undefined) throw newNotFound(gr, `${name}/finalize`);
    for (let attempt = 0; ; attempt++) {
      const existing = await this.#storage.get(key);
      if (existing === undefined) throw newNotFound(gr, name);
      const existingMeta = existing.metadata ?? {};
      if (precondition !== undefined && precondition !== existingMeta.resourceVersion)
        throw newConflict(gr, name);
      const requested = tryUpdate(existing);
      const requestedUid = requested.metadata?.uid;
      if (requestedUid && requestedUid !== existingMeta.uid) {
        // The object was deleted and created again under the same name: this change was meant for the old one.
        throw newConflict(
          gr,
          name,
          `Precondition failed: UID in precondition: ${requestedUid}, UID in object meta: ${existingMeta.uid ?? ""}`,
        );
      }
      const patchedVersion = requested.metadata?.resourceVersion;
      if (precondition === undefined && patchedVersion && patchedVersion !== existingMeta.resourceVersion)
        throw newConflict(gr, name);
      const requestedFields = requested.metadata?.managedFields;
      let object = this.#prepareUpdate(resource, strategy, requested, existing, options.subresource);
      if (options.managedFieldsComputed) {
        const meta = (object.metadata ??= {}) as MutableMeta;
        if (requestedFields === undefined) delete meta.managedFields;
        else meta.managedFields = requestedFields;
      } else {
        const sent = {
          ...object,
          metadata: { ...object.metadata, managedFields: requestedFields },
        } as KubeObject;
        object = this.#ownershipAfterUpdate(resource, existing, sent, options, options.subresource ?? "");
      }
      if (jsonEqual(object, existing)) return existing; // nothing changed: no write, no event
      const finalized =
        object.metadata?.deletionTimestamp !== undefined &&
        (object.metadata.finalizers ?? []).length === 0 &&
        (object.metadata.deletionGracePeriodSeconds ?? 0) === 0 &&
        strategy.holdsDeletion?.(object) !== true;
      if (options.dryRun === "All") return object;
      try {
        const revision = Number(existingMeta.resourceVersion);
        // The last finalizer removed from an object being deleted: the update completes the delete.
        if (finalized) return this.#removed(resource, await this.#storage.delete(key, revision));
        return await this.#storage.update(key, object, revision);
      } catch (error) {
        if (StorageError.is(error, "Conflict") && precondition === undefined && attempt < updateAttempts)
          continue;
        throw toStatusError(error, gr, name);
      }
    }
  }

  /** The new state of an update: system fields kept, status or spec kept as the subresource rules say. */
  #prepareUpdate(
    resource: ResourceDescriptor,
    strategy: Strategy,
    requested: KubeObject,
    existing: KubeObject,
    subresource: string | undefined,
  ): KubeObject {
    const statusOnly = subresource === "status";
    const existingMeta = existing.metadata ?? {};
    let object: KubeObject & { spec?: unknown; status?: unknown };
    if (subresource === "finalize" && strategy.prepareForFinalize !== undefined) {
      object = requested as typeof object;
      strategy.prepareForFinalize(object, existing);
    } else if (statusOnly && strategy.prepareForStatusUpdate !== undefined) {
      object = requested as typeof object;
      strategy.prepareForStatusUpdate(object, existing);
    } else if (statusOnly) {
      // `/status` changes the status and nothing else.
      object = copyJson(existing) as typeof object;
      const status = (requested as { status?: unknown }).status;
      if (status === undefined) delete object.status;
      else object.status = status;
    } else {
      object = requested as typeof object;
      if (resource.subresources.includes("status")) {
        const status = (existing as { status?: unknown }).status;
        if (status === undefined) delete object.status;
        else object.status = copyJson(status);
      }
      strategy.prepareForUpdate?.(object, existing);
    }
    const meta = (object.metadata ??= {}) as MutableMeta;
    meta.name = existingMeta.name!;
    if (resource.namespaced) meta.namespace = existingMeta.namespace!;
    meta.uid = existingMeta.uid!;
    meta.creationTimestamp = existingMeta.creationTimestamp!;
    meta.resourceVersion = existingMeta.resourceVersion!;
    setOrDelete(meta, "deletionTimestamp", existingMeta.deletionTimestamp);
    setOrDelete(meta, "deletionGracePeriodSeconds", existingMeta.deletionGracePeriodSeconds);
    if (meta.generateName === undefined) setOrDelete(meta, "generateName", existingMeta.generateName);
    omitEmptyMetadata(meta);
    delete meta.managedFields;
    strategy.applyDefaults?.(object);
    const specChanged = !jsonEqual(
      (object as { spec?: unknown }).spec,
      (existing as { spec?: unknown }).spec,
    );
    if (this.#definitionOf(resource).tracksGeneration)
      meta.generation = (existingMeta.generation ?? 1) + (specChanged && !statusOnly ? 1 : 0);
    else delete meta.generation;
    if (existingMeta.deletionTimestamp !== undefined) {
      // An object being deleted may lose finalizers but not gain new ones (`ValidateObjectMetaUpdate`).
      const before = new Set(existingMeta.finalizers ?? []);
      const added = (meta.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        throw newForbidden(
          groupResourceOf(resource),
          meta.name,
          `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        );
      }
    }
    this.#validate(resource, strategy, object, existing);
    return object;
  }

  #validate(
    resource: ResourceDescriptor,
    strategy: Strategy,
    object: KubeObject,
    old: KubeObject | undefined,
  ): void {
    const errors = new FieldErrors();
    validateObjectMeta(object, strategy.nameRule ?? defaultNameRule, resource.namespaced, errors);
    strategy.validate?.(object, errors);
    if (old !== undefined) strategy.validateUpdate?.(object, old, errors);
    if (!errors.empty) throw newInvalid(groupKindOf(resource), object.metadata?.name ?? "", errors.list);
  }

  #decode(
    resource: ResourceDescriptor,
    body: unknown,
    fieldValidation?: FieldValidation,
    verb: DecodeVerb = "write",
    qualifiedName = "",
  ): KubeObject {
    return decodeObject(
      this.#definitionOf(resource),
      this.#maxObjectBytes,
      body,
      fieldValidation,
      verb,
      qualifiedName,
    );
  }

  /** The namespace of a write: the request's and the object's must agree. */
  #reconcileNamespace(
    resource: ResourceDescriptor,
    meta: NonNullable<KubeObject["metadata"]>,
    namespace: string | undefined,
  ): void {
    if (!resource.namespaced) {
      delete meta.namespace;
      return;
    }
    if (namespace && meta.namespace && namespace !== meta.namespace)
      throw newBadRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    const chosen = namespace || meta.namespace;
    if (!chosen)
      throw newBadRequest(
        `a namespace is required for ${resource.plural}: set metadata.namespace or bind the client to a namespace`,
      );
    meta.namespace = chosen;
  }

  /** NamespaceLifecycle admission on create: the namespace exists and is not being terminated. */
  async #checkNamespaceOpen(resource: ResourceDescriptor, namespace: string, name: string): Promise<void> {
    const ns = await this.#storage.get(`/core/namespaces/${namespace}`);
    if (ns === undefined) throw newNotFound({ group: "", resource: "namespaces" }, namespace);
    if (ns.metadata?.deletionTimestamp !== undefined) {
      const { status } = newForbidden(
        groupResourceOf(resource),
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      // Controllers recognise this cause and drop the create silently.
      const cause = {
        reason: "NamespaceTerminating",
        field: "metadata.namespace",
        message: `namespace ${namespace} is being terminated`,
      };
      throw new StatusError({ ...status, details: { ...status.details, causes: [cause] } });
    }
  }

  #served(resource: ResourceDescriptor): ResourceDescriptor {
    const served = this.#definitions.get(resource)?.descriptor;
    if (served === undefined)
      throw new StatusError({
        code: 404,
        reason: "NotFound",
        message: `the server could not find the requested resource (${resource.group ? `${resource.plural}.${resource.group}` : resource.plural})`,
        details: { group: resource.group, kind: resource.plural },
      });
    return served;
  }

  /** The definition a served resource is handled by (its built-in one if it was removed meanwhile). */
  #definitionOf(resource: ResourceDescriptor): ResourceDefinition {
    return this.#definitions.get(resource) ?? definitionFor(resource);
  }

  #scaleOf(resource: ResourceDescriptor): NonNullable<Strategy["scale"]> {
    const scale = this.#definitionOf(resource).strategy.scale;
    if (scale === undefined || !resource.subresources.includes("scale"))
      throw newMethodNotSupported(groupResourceOf(resource), "scale");
    return scale;
  }

  #objectKey(resource: ResourceDescriptor, namespace: string | undefined, name: string): string {
    return objectKey(resource, namespace, name);
  }

  #collectionPrefix(resource: ResourceDescriptor, namespace: string | undefined): string {
    return collectionPrefix(resource, namespace);
  }

  #predicate(
    resource: ResourceDescriptor,
    labelSelector: string | undefined,
    fieldSelector: string | undefined,
  ): { matches: (object: KubeObject) => boolean } | undefined {
    let labels: Selector | undefined;
    let fields: FieldSelector | undefined;
    try {
      if (labelSelector) labels = parseSelector(labelSelector);
      if (fieldSelector) fields = parseFieldSelector(fieldSelector);
    } catch (error) {
      throw newBadRequest((error as Error).message);
    }
    const selectable = this.#definitionOf(resource).selectableFields;
    if (fields !== undefined) {
      const problem = fieldSelectorError(resource, fields, selectable);
      if (problem) throw problem;
    }
    if (labels?.empty()) labels = undefined;
    if (fields?.empty()) fields = undefined;
    if (labels === undefined && fields === undefined) return undefined;
    return {
      matches: (object) =>
        (labels === undefined || labels.matches(object.metadata?.labels)) &&
        (fields === undefined || fields.matches(objectFieldSet(resource, object, selectable))),
    };
  }
}

const defaultNameRule = dnsSubdomainName;

type MutableMeta = Mutable<NonNullable<KubeObject["metadata"]>>;

function toWatchEvent(
  event: StorageEvent,
  gr: { group: string; resource: string },
  bookmarkOf: (revision: number) => KubeObject,
): WatchEvent {
  switch (event.type) {
    case "BOOKMARK":
      return { type: "BOOKMARK", object: bookmarkOf(event.revision) };
    case "ERROR": {
      const status: Status = toStatusError(event.error, gr, "").status;
      return { type: "ERROR", object: status };
    }
    default:
      return { type: event.type, object: event.object! };
  }
}

function toScale(scale: NonNullable<Strategy["scale"]>, object: KubeObject): Scale {
  const meta = object.metadata ?? {};
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: meta.name!,
      ...(meta.namespace === undefined ? {} : { namespace: meta.namespace }),
      uid: meta.uid!,
      resourceVersion: meta.resourceVersion!,
      creationTimestamp: meta.creationTimestamp!,
    },
    spec: { replicas: scale.replicas(object) },
    status: { replicas: scale.statusReplicas(object), selector: scale.selector(object) },
  };
}

/** RFC 3339 with seconds, as Kubernetes writes `metav1.Time`. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** What `generateName` appends: 5 characters of apimachinery's `utilrand` alphabet (no vowels, no 0/1/3). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";
function randomSuffix(): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)];
  return suffix;
}

function parseResourceVersion(rv: string): number {
  if (!/^[0-9]+$/.test(rv) || !Number.isSafeInteger(Number(rv)))
    throw newBadRequest(
      `resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`,
    );
  return Number(rv);
}

function parseLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isInteger(limit) || limit < 0)
    throw newBadRequest(`limit: Invalid value: ${limit}: must be a non-negative integer`);
  return limit === 0 ? undefined : limit;
}

/** The latest time RFC 3339 (and Go's metav1.Time) can write: the end of year 9999. */
const latestTimestampMs = Date.UTC(9999, 11, 31, 23, 59, 59);

function gracePeriodTooLong(period: number): StatusError {
  return newInvalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", [
    {
      type: "FieldValueInvalid",
      field: "gracePeriodSeconds",
      message: `gracePeriodSeconds: Invalid value: ${period}: the deletion time it gives is after 9999-12-31T23:59:59Z, the latest a timestamp can be`,
    },
  ]);
}

/**
 * Drops empty labels, annotations, ownerReferences and finalizers, as
 * kube-apiserver's encoding omits them (`omitempty`): a pod whose last owner
 * was released carries no `ownerReferences: []`.
 */
function omitEmptyMetadata(meta: MutableMeta): void {
  if (meta.labels !== undefined && Object.keys(meta.labels).length === 0) delete meta.labels;
  if (meta.annotations !== undefined && Object.keys(meta.annotations).length === 0) delete meta.annotations;
  if (meta.ownerReferences?.length === 0) delete meta.ownerReferences;
  if (meta.finalizers?.length === 0) delete meta.finalizers;
}

function setOrDelete<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/**
 * The paths an endpoint's strategy resets, so they are never owned through it
 * (kube-apiserver's `ResetFieldsStrategy`): a main resource with a status
 * subresource keeps its status; `/status` keeps the spec.
 */
function resetFieldsOf(resource: ResourceDescriptor, subresource: string): string[][] {
  if (subresource === "status") return [["spec"]];
  if (subresource === "" && resource.subresources.includes("status")) return [["status"]];
  return [];
}

/** An object as the apply engine reads it: plain JSON. */
function asJson(object: KubeObject): Record<string, unknown> {
  return object as unknown as Record<string, unknown>;
}

function isServices(resource: ResourceDescriptor): boolean {
  return resource.group === "" && resource.plural === "services";
}

/** The manager a write is credited to: `fieldManager`, else the User-Agent's product, else `unknown`. */
function managerOf(options: DryRunOption): string {
  return options.fieldManager || managerFromUserAgent(options.userAgent);
}
