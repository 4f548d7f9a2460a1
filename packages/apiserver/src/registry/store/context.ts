import type { GroupResource, ResourceDescriptor } from "@reconcile/api";
import type { Clock, Random } from "@reconcile/clock";
import type { Storage } from "../../storage/storage.js";
import type { Admission } from "../admission.js";
import type { ClusterIPAllocator } from "../cluster-ip-allocator.js";
import type { NodePortAllocator } from "../node-port-allocator.js";
import type { ResourceDefinition } from "../resource-definition.js";
import type { SubresourceStore } from "../subresource-handler.js";

// The options of the verbs live in a module of their own, which kinds may import without reaching the store.
export type { DryRunOption, PatchOptions, RegistryDeleteOptions, UpdateOptions } from "./request-options.js";

/** What every store of one registry shares. */
export interface StoreContext {
  /** Where objects live. */
  readonly storage: Storage;
  /** Time for timestamps and watch timeouts. */
  readonly clock: Clock;
  /** Where uids and generated names draw from. */
  readonly random: Random;
  /** Largest accepted object, in bytes of JSON. */
  readonly maxObjectBytes: number;
  /** Bookmark interval for watches that allow bookmarks. */
  readonly bookmarkIntervalMs: number;
  /** Where Services take their cluster IPs from; without it, Services get none. */
  readonly serviceIPs: ClusterIPAllocator | undefined;
  /** Where Services take their node ports from; without it, they get none. */
  readonly serviceNodePorts: NodePortAllocator | undefined;
  /** The admission chain every write passes through; undefined admits everything. */
  readonly admission?: Admission | undefined;
  /** How to stop each watch being served, so the registry can stop them all. */
  readonly watches: Set<() => void>;
  /** The definition serving a kind at an apiVersion, if any (a kind's other versions). */
  readonly definitionFor?: ((apiVersion: string, kind: string) => ResourceDefinition | undefined) | undefined;
  /** Another served kind's store (an Eviction consults PodDisruptionBudgets); undefined when not served. */
  readonly peer?:
    | ((resource: ResourceDescriptor) => { readonly subresources: SubresourceStore } | undefined)
    | undefined;
}

/** One kind's store as the verbs' functions see it: the definition and the shared context. */
export interface StoreCore {
  readonly definition: ResourceDefinition;
  /** The served descriptor (the definition's). */
  readonly resource: ResourceDescriptor;
  /** The group and resource named in errors. */
  readonly gr: GroupResource;
  readonly context: StoreContext;
}
