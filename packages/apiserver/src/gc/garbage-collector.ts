import {
  isConflict,
  isNotFound,
  type KubeObject,
  type Logger,
  noopLogger,
  type OwnerReference,
  type ResourceDescriptor,
} from "@reconcile/api";
import { copyJson } from "../json.js";
import { foregroundFinalizer, orphanFinalizer, type Registry } from "../registry/registry.js";
import type { Storage, StorageEvent, StorageWatcher } from "../storage/storage.js";

export interface GarbageCollectorOptions {
  registry: Registry;
  storage: Storage;
  /** Where the default `onError` reports failures. Default: `noopLogger`. */
  logger?: Logger | undefined;
  /**
   * Called with failures other than NotFound and Conflict (which are expected and retried).
   * Default: a `warn` record on `logger` with the failure as `err`.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * Who the collector's writes are, for admission (webhooks and policies see
 * it): the ServiceAccount kube-controller-manager runs the collector as.
 */
export const garbageCollectorUser = {
  username: "system:serviceaccount:kube-system:generic-garbage-collector",
  groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
} as const;

/** What the collector remembers of each object: enough to find owners and dependents. */
interface Node {
  uid: string;
  resource: ResourceDescriptor;
  namespace: string | undefined;
  name: string;
  owners: OwnerReference[];
  finalizers: string[];
  deleting: boolean;
}

/** How often a task that lost a race is retried before it is reported. */
const maxAttempts = 5;

/**
 * Deletion propagation through ownerReferences, as kube-controller-manager's
 * garbage collector does it, running inside the server on its own storage watch:
 * - Background: once an owner is gone, dependents whose owners are all gone are deleted
 *   (references to gone owners are dropped from dependents that still have a live owner);
 * - Foreground: an owner with the `foregroundDeletion` finalizer has its dependents
 *   deleted and keeps the finalizer until no dependent with `blockOwnerDeletion` remains;
 * - Orphan: an owner with the `orphan` finalizer has its reference removed from every
 *   dependent, then loses the finalizer.
 * Deleting a namespace deletes everything in it.
 */
export class GarbageCollector {
  readonly #registry: Registry;
  readonly #storage: Storage;
  readonly #onError: (error: unknown) => void;
  readonly #nodes = new Map<string, Node>();
  /** Owner uid → uids of the objects that name it. */
  readonly #dependents = new Map<string, Set<string>>();
  readonly #tasks = new Map<string, { run: () => Promise<void>; attempts: number }>();
  #watcher: StorageWatcher | undefined;
  #lastRevision = 0;
  #stopped = false;
  #started: (() => void) | undefined;
  readonly #startedPromise: Promise<void>;
  #loop: Promise<void> | undefined;
  #worker: Promise<void> | undefined;
  #progressWaiters: (() => void)[] = [];

  constructor(options: GarbageCollectorOptions) {
    this.#registry = options.registry;
    this.#storage = options.storage;
    const logger = (options.logger ?? noopLogger).child({ controller: "garbagecollector" });
    this.#onError = options.onError ?? ((error) => logger.warn({ err: error }, "garbage collector failed"));
    this.#startedPromise = new Promise((resolve) => {
      this.#started = resolve;
    });
  }

  start(): void {
    if (this.#loop !== undefined || this.#stopped) return;
    this.#loop = this.#watchLoop().catch((error: unknown) => {
      // The storage failed under the collector: report it and stop collecting, rather than crash.
      this.#onError(error);
      this.#stopped = true;
      this.#progress();
    });
    this.#started?.();
  }

  /** Resolves when every change up to now has been seen and no work is left (see `ApiServer.flush`). */
  async flush(): Promise<void> {
    await this.#startedPromise;
    for (;;) {
      if (this.#stopped) return;
      const target = await this.#storage.currentRevision();
      if (this.#lastRevision >= target && this.#tasks.size === 0 && this.#worker === undefined) return;
      await new Promise<void>((resolve) => this.#progressWaiters.push(resolve));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#started?.();
    this.#watcher?.stop();
    await this.#loop;
    await this.#worker;
    this.#tasks.clear();
    this.#progress();
  }

  async #watchLoop(): Promise<void> {
    let fromRevision: number | undefined;
    while (!this.#stopped) {
      if (fromRevision === undefined) {
        // List first, as a reflector does, so that every owner is known before any dependent is judged.
        const list = await this.#storage.list("/");
        this.#nodes.clear();
        this.#dependents.clear();
        for (const object of list.items) this.#observe({ type: "ADDED", object, revision: list.revision });
        fromRevision = list.revision;
        this.#lastRevision = Math.max(this.#lastRevision, list.revision);
        this.#progress();
      }
      const watcher = this.#storage.watch("/", { fromRevision });
      this.#watcher = watcher;
      let expired = false;
      for await (const event of watcher) {
        if (event.type === "ERROR") {
          // Out of the history: list again. Fell behind: resume where it stopped.
          expired = event.error?.storageCode !== "WatcherTooSlow";
          break;
        }
        this.#observe(event);
        this.#lastRevision = Math.max(this.#lastRevision, event.revision);
        this.#progress();
      }
      if (this.#stopped || watcher.closeReason === "storage closed") return;
      // Fell behind (resume where it stopped) or out of the history (list again).
      fromRevision = expired ? undefined : this.#lastRevision;
    }
  }

  #observe(event: StorageEvent): void {
    const object = event.object;
    const uid = object?.metadata?.uid;
    if (object === undefined || uid === undefined) return;
    const previous = this.#nodes.get(uid);
    // As upstream's graph builder: an update that leaves owners, finalizers and deletion as they
    // were (a status write, say) changes nothing here.
    if (previous !== undefined && event.type !== "DELETED" && !graphChanged(previous, object.metadata ?? {}))
      return;
    const resource =
      previous?.resource ?? this.#registry.resourceForKind(object.apiVersion ?? "", object.kind ?? "");
    if (resource === undefined || isIgnored(resource)) return;
    if (previous !== undefined) for (const ref of previous.owners) this.#dependents.get(ref.uid)?.delete(uid);
    if (event.type === "DELETED") {
      this.#nodes.delete(uid);
      for (const dependent of this.#dependents.get(uid) ?? [])
        this.#schedule(`dependent:${dependent}`, () => this.#checkDependent(dependent));
      for (const ref of previous?.owners ?? []) this.#scheduleOwner(ref.uid);
      if (resource.kind === "Namespace" && resource.group === "") {
        const namespace = object.metadata?.name ?? "";
        this.#schedule(`namespace:${namespace}`, () => this.#emptyNamespace(namespace));
      }
      return;
    }
    const meta = object.metadata ?? {};
    const node: Node = {
      uid,
      resource,
      namespace: meta.namespace,
      name: meta.name ?? "",
      owners: meta.ownerReferences ?? [],
      finalizers: meta.finalizers ?? [],
      deleting: meta.deletionTimestamp !== undefined,
    };
    this.#nodes.set(uid, node);
    for (const ref of node.owners) {
      let set = this.#dependents.get(ref.uid);
      if (set === undefined) this.#dependents.set(ref.uid, (set = new Set()));
      set.add(uid);
    }
    // A dependent is looked at when it appears and when its owners, finalizers or deletion change,
    // unless every owner is already known and standing: the owners' own changes schedule it then.
    if (node.owners.length > 0 && !this.#ownersStand(node))
      this.#schedule(`dependent:${uid}`, () => this.#checkDependent(uid));
    if (node.deleting) this.#scheduleOwner(uid);
    // An owner waiting for its dependents may be waiting for this one no longer.
    for (const ref of previous?.owners ?? []) this.#scheduleOwner(ref.uid);
  }

  /** Whether every owner of `node` is solid: in the graph, in its namespace, not deleting in the foreground. */
  #ownersStand(node: Node): boolean {
    for (const ref of node.owners) if (this.#ownerState(node, ref) !== "solid") return false;
    return true;
  }

  /**
   * What `node`'s owner `ref` is to it: gone (absent, or a namespaced owner in
   * another namespace, which counts as absent), waiting (deleting in the
   * foreground) or solid.
   */
  #ownerState(node: Node, ref: OwnerReference): "gone" | "waiting" | "solid" {
    const owner = this.#nodes.get(ref.uid);
    if (owner === undefined || (owner.resource.namespaced && owner.namespace !== node.namespace))
      return "gone";
    return owner.deleting && owner.finalizers.includes(foregroundFinalizer) ? "waiting" : "solid";
  }

  #scheduleOwner(uid: string): void {
    const node = this.#nodes.get(uid);
    if (node === undefined || !node.deleting) return;
    if (node.finalizers.includes(orphanFinalizer))
      this.#schedule(`orphan:${uid}`, () => this.#orphanDependents(uid));
    if (node.finalizers.includes(foregroundFinalizer))
      this.#schedule(`foreground:${uid}`, () => this.#deleteDependents(uid));
  }

  /** `attemptToDeleteItem`: a dependent whose owners are gone (or going, in foreground) goes too. */
  async #checkDependent(uid: string): Promise<void> {
    const node = this.#nodes.get(uid);
    if (node === undefined || node.owners.length === 0) return;
    if (node.deleting && !node.finalizers.includes(foregroundFinalizer)) return;
    // An owner of a kind this server does not serve cannot be looked up: kube-apiserver's collector
    // fails to resolve it and leaves the dependent alone, rather than taking the owner for gone.
    if (node.owners.some((ref) => this.#registry.resourceForKind(ref.apiVersion, ref.kind) === undefined))
      return;
    const solid: OwnerReference[] = [];
    const gone: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of node.owners) {
      const state = this.#ownerState(node, ref);
      (state === "gone" ? gone : state === "waiting" ? waiting : solid).push(ref);
    }
    if (solid.length > 0) {
      if (gone.length === 0 && waiting.length === 0) return;
      const drop = new Set([...gone, ...waiting].map((ref) => ref.uid));
      await this.#removeOwnerReferences(node, drop);
      return;
    }
    if (node.deleting) return;
    const hasDependents = (this.#dependents.get(uid)?.size ?? 0) > 0;
    const policy =
      waiting.length > 0 && hasDependents
        ? "Foreground"
        : node.finalizers.includes(orphanFinalizer)
          ? "Orphan"
          : "Background";
    await this.#registry.delete(node.resource, node.namespace, node.name, {
      propagationPolicy: policy,
      preconditions: { uid },
      user: garbageCollectorUser,
    });
  }

  /** Foreground: delete the dependents; drop the finalizer once no blocking dependent remains. */
  async #deleteDependents(uid: string): Promise<void> {
    const owner = this.#nodes.get(uid);
    if (owner === undefined || !owner.finalizers.includes(foregroundFinalizer)) return;
    let blocking = 0;
    for (const dependentUid of this.#dependents.get(uid) ?? []) {
      const dependent = this.#nodes.get(dependentUid);
      if (dependent === undefined) continue;
      if (dependent.owners.some((ref) => ref.uid === uid && ref.blockOwnerDeletion)) blocking++;
      this.#schedule(`dependent:${dependentUid}`, () => this.#checkDependent(dependentUid));
    }
    if (blocking === 0) await this.#removeFinalizer(owner, foregroundFinalizer);
  }

  /** Orphan: remove the owner's reference from every dependent, then the finalizer. */
  async #orphanDependents(uid: string): Promise<void> {
    const owner = this.#nodes.get(uid);
    if (owner === undefined || !owner.finalizers.includes(orphanFinalizer)) return;
    for (const dependentUid of [...(this.#dependents.get(uid) ?? [])]) {
      const dependent = this.#nodes.get(dependentUid);
      if (dependent !== undefined) await this.#removeOwnerReferences(dependent, new Set([uid]));
    }
    await this.#removeFinalizer(owner, orphanFinalizer);
  }

  async #emptyNamespace(namespace: string): Promise<void> {
    for (const node of [...this.#nodes.values()]) {
      if (node.namespace !== namespace || !node.resource.namespaced) continue;
      await ignoreNotFound(
        this.#registry.delete(node.resource, namespace, node.name, {
          gracePeriodSeconds: 0,
          preconditions: { uid: node.uid },
          user: garbageCollectorUser,
        }),
      );
    }
    // Events are not in the graph: they go by collection.
    for (const resource of this.#registry.resources) {
      if (resource.namespaced && isIgnored(resource))
        await ignoreNotFound(
          this.#registry.deleteCollection(resource, namespace, {
            gracePeriodSeconds: 0,
            user: garbageCollectorUser,
          }),
        );
    }
  }

  async #removeOwnerReferences(node: Node, uids: Set<string>): Promise<void> {
    const current = await this.#registry.get(node.resource, node.namespace, node.name);
    if (current.metadata?.uid !== node.uid) return;
    const refs = current.metadata.ownerReferences ?? [];
    const kept = refs.filter((ref) => !uids.has(ref.uid));
    if (kept.length === refs.length) return;
    const updated = copyJson(current);
    if (kept.length === 0) delete updated.metadata!.ownerReferences;
    else updated.metadata!.ownerReferences = kept;
    await this.#registry.update(node.resource, node.namespace, node.name, updated, {
      user: garbageCollectorUser,
    });
  }

  async #removeFinalizer(node: Node, finalizer: string): Promise<void> {
    const current = await this.#registry.get(node.resource, node.namespace, node.name);
    if (current.metadata?.uid !== node.uid || !(current.metadata.finalizers ?? []).includes(finalizer))
      return;
    const updated = copyJson(current);
    updated.metadata!.finalizers = updated.metadata!.finalizers!.filter((f) => f !== finalizer);
    await this.#registry.update(node.resource, node.namespace, node.name, updated, {
      user: garbageCollectorUser,
    });
  }

  #schedule(key: string, run: () => Promise<void>): void {
    if (this.#stopped) return;
    const existing = this.#tasks.get(key);
    this.#tasks.set(key, { run, attempts: existing?.attempts ?? 0 });
    this.#worker ??= this.#work();
  }

  async #work(): Promise<void> {
    // Let the watch loop take in the events written together before acting on them.
    await Promise.resolve();
    while (!this.#stopped && this.#tasks.size > 0) {
      const [key, task] = this.#tasks.entries().next().value as [
        string,
        { run: () => Promise<void>; attempts: number },
      ];
      this.#tasks.delete(key);
      try {
        await task.run();
      } catch (error) {
        if (isNotFound(error)) continue;
        if (isConflict(error) && task.attempts + 1 < maxAttempts && !this.#tasks.has(key)) {
          this.#tasks.set(key, { run: task.run, attempts: task.attempts + 1 });
          continue;
        }
        this.#onError(error);
      }
    }
    this.#worker = undefined;
    this.#progress();
  }

  #progress(): void {
    const waiters = this.#progressWaiters;
    this.#progressWaiters = [];
    for (const wake of waiters) wake();
  }
}

async function ignoreNotFound(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}

/**
 * Kinds the collector leaves out of its graph, as upstream's
 * `DefaultIgnoredResources`: Events, the most numerous objects, are never
 * collected through owner references (a namespace being emptied loses them by
 * collection).
 */
function isIgnored(resource: ResourceDescriptor): boolean {
  return resource.kind === "Event" && (resource.group === "" || resource.group === "events.k8s.io");
}

/** Whether an update changes what the collector decides on: the object's owners, finalizers or deletion. */
function graphChanged(node: Node, meta: NonNullable<KubeObject["metadata"]>): boolean {
  if (node.deleting !== (meta.deletionTimestamp !== undefined)) return true;
  const finalizers = meta.finalizers ?? [];
  if (node.finalizers.length !== finalizers.length) return true;
  for (let i = 0; i < finalizers.length; i++) if (node.finalizers[i] !== finalizers[i]) return true;
  const owners = meta.ownerReferences ?? [];
  if (node.owners.length !== owners.length) return true;
  for (let i = 0; i < owners.length; i++) {
    const a = node.owners[i]!;
    const b = owners[i]!;
    if (
      a.uid !== b.uid ||
      a.apiVersion !== b.apiVersion ||
      a.kind !== b.kind ||
      a.name !== b.name ||
      a.controller !== b.controller ||
      a.blockOwnerDeletion !== b.blockOwnerDeletion
    )
      return true;
  }
  return false;
}
