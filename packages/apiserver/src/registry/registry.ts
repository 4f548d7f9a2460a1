import {
  type KubeObject,
  type ListOptions,
  newMethodNotSupported,
  type ObjectList,
  pods,
  type ResourceDescriptor,
  type Scale,
  StatusError,
  type WatchOptions,
} from "@reconcile/api";
import { type Clock, type Random, realRandom } from "@reconcile/clock";
import type { Storage } from "../storage/storage.js";
import type { Admission } from "./admission.js";
import type { ClusterIPAllocator } from "./cluster-ip-allocator.js";
import type { ResourceDefinitions } from "./definitions.js";
import type { NodePortAllocator } from "./node-port-allocator.js";
import type { PatchType } from "./patch.js";
import type { ResourceDefinition } from "./resource-definition.js";
import type { DryRunOption, PatchOptions, RegistryDeleteOptions, StoreContext } from "./store/context.js";
import { decodeObject } from "./store/decode.js";
import { keyOf } from "./store/keys.js";
import type { RegistryWatch } from "./store/reads.js";
import { Store } from "./store/store.js";

export type { DryRunOption, PatchOptions, RegistryDeleteOptions } from "./store/context.js";
export { foregroundFinalizer, orphanFinalizer } from "./store/delete.js";
export type { RegistryWatch } from "./store/reads.js";

/** Everything a registry needs; `ApiServer` fills these from its own options and defaults. */
export interface RegistryOptions {
  /** Where objects live. */
  storage: Storage;
  /** Time for timestamps and watch timeouts. */
  clock: Clock;
  /** Where uids and generated names draw from. Default `Math.random` (uids from `crypto.randomUUID`). */
  random?: Random | undefined;
  /** The kinds served, live: adding one serves it at once; requests for any other resource are 404. */
  definitions: ResourceDefinitions;
  /** Largest accepted object, in bytes of JSON. */
  maxObjectBytes: number;
  /** Bookmark interval for watches that allow bookmarks. */
  bookmarkIntervalMs: number;
  /** Resolves once the storage holds the initial namespaces; every request waits for it. */
  ready?: Promise<void>;
  /** Where Services take their cluster IPs from; without it, Services get none. */
  serviceIPs?: ClusterIPAllocator | undefined;
  /** Where Services take their node ports from; without it, they get none. */
  serviceNodePorts?: NodePortAllocator | undefined;
  /** The admission chain every write passes; without it, every write is admitted. */
  admission?: Admission | undefined;
}

/**
 * Every API verb with kube-apiserver's semantics, over a `Storage`. Both the
 * in-process client and the HTTP server call exactly this. Inputs are copied
 * (callers keep their objects); outputs are the stored objects themselves,
 * which callers must copy before handing out or treat as read-only.
 *
 * A dispatcher: each request waits for the initial namespaces, finds the
 * served kind's definition (404 if none) and hands the verb to that
 * definition's {@link Store}.
 */
export class Registry {
  readonly #definitions: ResourceDefinitions;
  readonly #ready: Promise<void> | undefined;
  readonly #context: StoreContext;
  /** One store per definition, made on first use; a definition removed takes its store with it. */
  readonly #stores = new WeakMap<ResourceDefinition, Store>();

  /** Whether the storage has a health check (`etcd`), and running it. */
  get storageHealth(): (() => Promise<void>) | undefined {
    const storage = this.#context.storage;
    return storage.checkHealth === undefined ? undefined : () => storage.checkHealth!();
  }

  constructor(options: RegistryOptions) {
    this.#definitions = options.definitions;
    this.#ready = options.ready;
    this.#context = {
      storage: options.storage,
      clock: options.clock,
      random: options.random ?? realRandom,
      maxObjectBytes: options.maxObjectBytes,
      bookmarkIntervalMs: options.bookmarkIntervalMs,
      serviceIPs: options.serviceIPs,
      serviceNodePorts: options.serviceNodePorts,
      admission: options.admission,
      watches: new Set(),
      definitionFor: (apiVersion, kind) => this.#definitions.forKind(apiVersion, kind),
      peer: (resource) => (this.#definitions.get(resource) === undefined ? undefined : this.#store(resource)),
    };
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
    return this.#store(resource).list(namespace, options);
  }

  async watch(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    options: WatchOptions = {},
  ): Promise<RegistryWatch> {
    await this.#ready;
    return this.#store(resource).watch(namespace, options);
  }

  /** Stops every watch served through this registry. */
  closeWatches(): void {
    for (const stop of [...this.#context.watches]) stop();
  }

  /** GET of an object, or of one of its subresources (`status`, `scale`…) as its kind's definition serves it. */
  async get(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    options: { subresource?: string | undefined } = {},
  ): Promise<KubeObject> {
    await this.#ready;
    const store = this.#store(resource);
    return options.subresource
      ? store.getSubresource(namespace, name, options.subresource)
      : store.get(namespace, name);
  }

  async create(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    body: unknown,
    options: DryRunOption & { managedFieldsComputed?: boolean | undefined } = {},
  ): Promise<KubeObject> {
    await this.#ready;
    const definition = this.#definitions.get(resource);
    if (definition?.source?.create !== undefined) {
      // Decoded as its kind first, as any body: a wrongly typed field is the decoder's 400.
      const object = decodeObject(definition, this.#context.maxObjectBytes, body, options.fieldValidation);
      return definition.source.create(namespace, object, options, (...post) =>
        this.createSubresource(...post),
      );
    }
    return this.#store(resource).create(namespace, body, options);
  }

  async update(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: PatchOptions = {},
  ): Promise<KubeObject> {
    return (await this.updateWithOutcome(resource, namespace, name, body, options)).object;
  }

  /** {@link update}, telling whether the PUT created the object (201, not 200), from the write itself. */
  async updateWithOutcome(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: PatchOptions = {},
  ): Promise<{ object: KubeObject; created: boolean }> {
    await this.#ready;
    const store = this.#store(resource);
    if (!options.subresource) return store.update(namespace, name, body, options);
    const object = await store.updateSubresource(namespace, name, options.subresource, body, options);
    return { object, created: false };
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
    const store = this.#store(resource);
    if (!options.subresource) return store.patch(namespace, name, patchType, patch, options);
    const object = await store.patchSubresource(
      namespace,
      name,
      options.subresource,
      patchType,
      patch,
      options,
    );
    return { object, created: false };
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
    return this.#store(resource).delete(namespace, name, options);
  }

  async deleteCollection(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    options: RegistryDeleteOptions & {
      labelSelector?: string | undefined;
      fieldSelector?: string | undefined;
    } = {},
  ): Promise<ObjectList> {
    await this.#ready;
    return this.#store(resource).deleteCollection(namespace, options, (ns, name) =>
      this.delete(resource, ns, name, options),
    );
  }

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
    return this.#store(resource).createSubresource(namespace, name, subresource, body, options);
  }

  /** GET of a `scale` subresource as an `autoscaling/v1` Scale; 405 for a kind without one. */
  async getScale(resource: ResourceDescriptor, namespace: string | undefined, name: string): Promise<Scale> {
    await this.#ready;
    const store = this.#scalable(resource);
    return (await store.getSubresource(namespace, name, "scale")) as Scale;
  }

  /** PUT of a `scale` subresource; 405 for a kind without one. */
  async updateScale(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption = {},
  ): Promise<Scale> {
    await this.#ready;
    const store = this.#scalable(resource);
    return (await store.updateSubresource(namespace, name, "scale", body, options)) as Scale;
  }

  /** The store of a kind with a scale subresource; a 405 naming `scale` otherwise. */
  #scalable(resource: ResourceDescriptor): Store {
    const store = this.#store(resource);
    if (!Object.hasOwn(store.definition.subresources, "scale"))
      throw newMethodNotSupported(store.gr, "scale");
    return store;
  }

  /** The store of a served kind; 404 for a kind not served. Callers wait for `#ready` first. */
  #store(resource: ResourceDescriptor): Store {
    const definition = this.#definitions.get(resource);
    if (definition === undefined)
      throw new StatusError({
        code: 404,
        reason: "NotFound",
        message: `the server could not find the requested resource (${resource.group ? `${resource.plural}.${resource.group}` : resource.plural})`,
        details: { group: resource.group, kind: resource.plural },
      });
    let store = this.#stores.get(definition);
    if (store === undefined) {
      store = new Store(definition, this.#context);
      this.#stores.set(definition, store);
    }
    return store;
  }
}
