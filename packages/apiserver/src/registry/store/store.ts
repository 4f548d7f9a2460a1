import {
  type GroupResource,
  groupResourceOf,
  type KubeObject,
  type ListOptions,
  newNotFound,
  type ObjectList,
  type ResourceDescriptor,
  rfc3339,
  type Scale,
  type WatchOptions,
} from "@reconcile/api";
import type { ResourceDefinition, SubresourceStore } from "../../kinds/definition.js";
import type { PatchType } from "../patch.js";
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
import { getObject, listObjects, type RegistryWatch, watchObjects } from "./reads.js";
import { getScale, updateScale } from "./scale.js";
import { rawUpdate, updateObject } from "./update.js";

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
    this.context = context;
  }

  get(namespace: string | undefined, name: string): Promise<KubeObject> {
    return getObject(this, namespace, name);
  }

  list(namespace: string | undefined, options: ListOptions): Promise<ObjectList> {
    return listObjects(this, namespace, options);
  }

  watch(namespace: string | undefined, options: WatchOptions): Promise<RegistryWatch> {
    return watchObjects(this, namespace, options);
  }

  create(namespace: string | undefined, body: unknown, options: CreateOptions): Promise<KubeObject> {
    return createObject(this, namespace, body, options);
  }

  update(
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption & { subresource?: "status" | "finalize" | undefined },
  ): Promise<KubeObject> {
    return updateObject(this, namespace, name, body, options);
  }

  patch(
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    return patchObject(this, namespace, name, patchType, patch, options);
  }

  delete(
    namespace: string | undefined,
    name: string,
    options: RegistryDeleteOptions,
  ): Promise<{ object: KubeObject; deleted: boolean }> {
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
    return deleteCollection(this, namespace, options, deleteOne);
  }

  getScale(namespace: string | undefined, name: string): Promise<Scale> {
    return getScale(this, namespace, name);
  }

  updateScale(
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: DryRunOption,
  ): Promise<Scale> {
    return updateScale(this, namespace, name, body, options);
  }

  /** POSTs a body to a subresource the definition handles (binding, eviction…); 404 if it has none by that name. */
  async createSubresource(
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: unknown,
    options: DryRunOption,
  ): Promise<void> {
    const handlers = this.definition.subresources;
    const handler = Object.hasOwn(handlers, subresource) ? handlers[subresource] : undefined;
    if (handler === undefined) throw newNotFound(this.gr, `${name}/${subresource}`);
    await handler.create(this.#subresourceStore, namespace, name, body, options);
  }

  /** What a subresource handler may do with objects of this kind. */
  readonly #subresourceStore: SubresourceStore = {
    now: () => rfc3339(this.context.clock.now()),
    update: (namespace, name, tryUpdate, options) => rawUpdate(this, namespace, name, tryUpdate, options),
    get: (namespace, name) => this.get(namespace, name),
    delete: async (namespace, name, options) => {
      await this.delete(namespace, name, options);
    },
  };
}
