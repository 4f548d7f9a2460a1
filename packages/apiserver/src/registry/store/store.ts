import {
  apiVersionOf,
  type GroupResource,
  groupResourceOf,
  type KubeObject,
  type ListOptions,
  newMethodNotSupported,
  newNotFound,
  type ObjectList,
  type ResourceDescriptor,
  rfc3339,
  type WatchOptions,
} from "@reconcile/api";
import type { PatchType } from "../patch.js";
import type { ResourceDefinition } from "../resource-definition.js";
import type { SubresourceHandler, SubresourceStore } from "../subresource-handler.js";
import { admissionOf, mutate, validateAdmission } from "./admit.js";
import type {
  DryRunOption,
  PatchOptions,
  RegistryDeleteOptions,
  StoreContext,
  StoreCore,
} from "./context.js";
import { type CreateOptions, createObject } from "./create.js";
import { deleteCollection, deleteObject } from "./delete.js";
import { patchObject } from "./patch.js";
import {
  getComputed,
  getObject,
  listComputed,
  listObjects,
  type RegistryWatch,
  watchObjects,
} from "./reads.js";
import { atVersion, rekeyed, storageView } from "./storage-view.js";
import { guaranteedUpdate, rawUpdate, updateObject, updateWithOutcome } from "./update.js";

/**
 * Every verb for one kind, with kube-apiserver's semantics (its
 * `genericregistry.Store`): preconditions, generation, graceful deletion and
 * finalizers over the shared storage, the kind's strategy for what differs.
 * One per served definition; the registry makes it when the kind is first
 * used and forgets it with the definition.
 */
export class Store implements StoreCore {
  readonly definition: ResourceDefinition;
  readonly resource: ResourceDescriptor;
  readonly gr: GroupResource;
  readonly context: StoreContext;

  constructor(definition: ResourceDefinition, context: StoreContext) {
    this.definition = definition;
    this.resource = definition.descriptor;
    this.gr = groupResourceOf(definition.descriptor);
    this.context = viewedContext(definition, context);
  }

  get(namespace: string | undefined, name: string): Promise<KubeObject> {
    if (this.definition.source !== undefined) return Promise.resolve(getComputed(this, namespace, name));
    return getObject(this, namespace, name);
  }

  list(namespace: string | undefined, options: ListOptions): Promise<ObjectList> {
    if (this.definition.source !== undefined) return Promise.resolve(listComputed(this, namespace, options));
    return listObjects(this, namespace, options);
  }

  watch(namespace: string | undefined, options: WatchOptions): Promise<RegistryWatch> {
    this.#stored("watch");
    return watchObjects(this, namespace, options);
  }

  create(namespace: string | undefined, body: unknown, options: CreateOptions): Promise<KubeObject> {
    this.#stored("create");
    return createObject(this, namespace, body, options);
  }

  /** PUT of the object itself; `created` when it created it (a kind that allows create on update). */
  update(
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption,
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.#stored("update");
    return updateWithOutcome(this, namespace, name, body, withSubresource(options, undefined));
  }

  patch(
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.#stored("patch");
    return patchObject(this, namespace, name, patchType, patch, withSubresource(options, undefined));
  }

  delete(
    namespace: string | undefined,
    name: string,
    options: RegistryDeleteOptions,
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    this.#stored("delete");
    return deleteObject(this, namespace, name, options);
  }

  /** `deleteOne` deletes each listed object (the registry's `delete`, so it stays one code path). */
  deleteCollection(
    namespace: string | undefined,
    options: RegistryDeleteOptions & {
      labelSelector?: string | undefined;
      fieldSelector?: string | undefined;
    },
    deleteOne: (namespace: string | undefined, name: string) => Promise<KubeObject>,
  ): Promise<ObjectList> {
    this.#stored("deletecollection");
    return deleteCollection(this, namespace, options, deleteOne);
  }

  /** A computed kind is read only: every other verb is a 405 (thrown, so callers see it as they would a failed write). */
  #stored(verb: string): void {
    if (this.definition.source !== undefined) throw newMethodNotSupported(this.gr, verb);
  }

  /** GET of a subresource (`status`, `scale`…); 404 if the kind has none by that name, 405 if it is not read. */
  getSubresource(namespace: string | undefined, name: string, subresource: string): Promise<KubeObject> {
    const get = this.#handler(name, subresource).get;
    if (get === undefined) throw newMethodNotSupported(this.gr, "get");
    return get(this.#subresourceStore, namespace, name);
  }

  /** PUT of a subresource; 404 if the kind has none by that name, 405 if it is not written whole. */
  updateSubresource(
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: unknown,
    options: PatchOptions,
  ): Promise<KubeObject> {
    const update = this.#handler(name, subresource).update;
    if (update === undefined) throw newMethodNotSupported(this.gr, "update");
    return update(this.#subresourceStore, namespace, name, body, options);
  }

  /** PATCH of a subresource; 404 if the kind has none by that name, 405 if it is not patched. */
  patchSubresource(
    namespace: string | undefined,
    name: string,
    subresource: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<KubeObject> {
    const patchSubresource = this.#handler(name, subresource).patch;
    if (patchSubresource === undefined) throw newMethodNotSupported(this.gr, "patch");
    return patchSubresource(this.#subresourceStore, namespace, name, patchType, patch, options);
  }

  /** POSTs a body to a subresource (binding, eviction…); 404 if the kind has none by that name, 405 if it takes none. */
  async createSubresource(
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: unknown,
    options: DryRunOption,
  ): Promise<void> {
    const create = this.#handler(name, subresource).create;
    if (create === undefined) throw newMethodNotSupported(this.gr, "create");
    // A binding or an eviction passes admission as a CREATE of the subresource, the body its object.
    const object =
      body !== null && typeof body === "object" && !Array.isArray(body) ? (body as KubeObject) : undefined;
    const admission = admissionOf(this, "CREATE", { subresource, namespace, name, object }, options);
    await mutate(this, admission);
    const validating = validateAdmission(this, admission);
    if (validating !== undefined) await validating;
    await create(this.#subresourceStore, namespace, name, body, options);
  }

  /** The definition's handler of a subresource; a 404 naming `{name}/{subresource}` if it has none. */
  #handler(name: string, subresource: string): SubresourceHandler {
    const handlers = this.definition.subresources;
    const handler = Object.hasOwn(handlers, subresource) ? handlers[subresource] : undefined;
    if (handler === undefined) throw newNotFound(this.gr, `${name}/${subresource}`);
    return handler;
  }

  /** What a subresource handler may do with objects of this kind. */
  readonly #subresourceStore: SubresourceStore = {
    now: () => rfc3339(this.context.clock.now()),
    update: (namespace, name, tryUpdate, options) => rawUpdate(this, namespace, name, tryUpdate, options),
    updateAs: (subresource, namespace, name, precondition, tryUpdate, options) =>
      guaranteedUpdate(
        this,
        this.resource.namespaced ? namespace : undefined,
        name,
        precondition,
        withSubresource(options, subresource),
        tryUpdate,
      ),
    replaceAs: (subresource, namespace, name, body, options) =>
      updateObject(this, namespace, name, body, withSubresource(options, subresource)),
    patchAs: async (subresource, namespace, name, patchType, patch, options) =>
      (await patchObject(this, namespace, name, patchType, patch, withSubresource(options, subresource)))
        .object,
    get: (namespace, name) => this.get(namespace, name),
    list: async (namespace) => (await this.list(namespace, {})).items,
    peer: (resource) => this.context.peer?.(resource)?.subresources,
    delete: async (namespace, name, options) => {
      await this.delete(namespace, name, options);
    },
  };

  /** What a subresource handler may do with objects of this kind (also another kind's handler, as a peer). */
  get subresources(): SubresourceStore {
    return this.#subresourceStore;
  }
}

/**
 * The context a kind's store works in: the shared one, or one whose storage
 * converts objects on the way in and out (another storage version, defaults
 * on read).
 */
function viewedContext(definition: ResourceDefinition, context: StoreContext): StoreContext {
  const { storageVersion, onRead, conversion, storedAs, descriptor } = definition;
  if (storageVersion === undefined && onRead === undefined && storedAs === undefined) return context;
  const servedVersion = apiVersionOf(descriptor);
  const storedVersion = apiVersionOf({
    group: (storedAs ?? descriptor).group,
    version: storageVersion ?? descriptor.version,
  });
  const read = (object: KubeObject) => {
    const converted = atVersion(object, servedVersion);
    return onRead === undefined ? converted : onRead(converted);
  };
  const storage = storageView(
    storedAs === undefined ? context.storage : rekeyed(context.storage, descriptor, storedAs),
    conversion === undefined
      ? { served: read, stored: (object) => atVersion(object, storedVersion) }
      : {
          served: async (object) => read(await conversion.fromStorage(object)),
          stored: async (object) => atVersion(await conversion.toStorage(object), storedVersion),
          ...(conversion.fromStorageMany === undefined
            ? {}
            : { servedMany: async (objects) => (await conversion.fromStorageMany!(objects)).map(read) }),
        },
  );
  return { ...context, storage };
}

/**
 * `options` for `subresource` (undefined: the main resource). Object.assign,
 * not a spread: on Node 20 a member added to a spread's copy costs a new
 * hidden class each time.
 */
function withSubresource<O extends object, S extends string | undefined>(
  options: O,
  subresource: S,
): O & { subresource: S } {
  return Object.assign({}, options, { subresource });
}
