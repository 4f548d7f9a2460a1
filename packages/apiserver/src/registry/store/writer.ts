import type { KubeObject } from "@reconcile/api";
import type { DryRunOption, StoreCore } from "./context.js";

/**
 * The store's writes to storage. A dry run (`dryRun=All`) is this one
 * decorator: every check and every change is computed as for a real write,
 * and only here is nothing stored, as kube-apiserver's `DryRunnableStorage`.
 */
export interface Writer {
  /** Stores a new object; `undo` gives back what the create hook took if nothing is stored. */
  create(key: string, object: KubeObject, undo: (() => void) | undefined): Promise<KubeObject>;
  /** Writes an update at `revision`; a dry run answers `dryRunAnswer`. */
  update(key: string, object: KubeObject, revision: number, dryRunAnswer?: KubeObject): Promise<KubeObject>;
  /** Removes the object at `revision`; a dry run answers `dryRunAnswer`, not deleted. */
  remove(
    key: string,
    revision: number,
    dryRunAnswer: KubeObject,
  ): Promise<{ object: KubeObject; deleted: boolean }>;
}

/** The writer of one request: storage itself, or its dry-run decorator. */
export function writerFor(store: StoreCore, options: DryRunOption): Writer {
  return options.dryRun === "All" ? dryRunWriter() : storageWriter(store);
}

/** Runs the kind's create hook (a Service's cluster IP); what undoes it if nothing is stored. */
export function beginCreate(store: StoreCore, object: KubeObject): (() => void) | undefined {
  return store.definition.writeHooks?.beginCreate?.(object, store.context);
}

/** Runs the kind's update hook (a Service's node ports); what finishes it once the write is known. */
export function beginUpdate(
  store: StoreCore,
  object: KubeObject,
  existing: KubeObject,
): ((stored: boolean) => void) | undefined {
  return store.definition.writeHooks?.beginUpdate?.(object, existing, store.context);
}

function storageWriter(store: StoreCore): Writer {
  const storage = store.context.storage;
  return {
    async create(key, object, undo) {
      try {
        return await storage.create(key, object);
      } catch (error) {
        undo?.();
        throw error;
      }
    },
    update: (key, object, revision) => storage.update(key, object, revision),
    async remove(key, revision) {
      const object = await storage.delete(key, revision);
      // An object gone from storage: what it held (a Service's cluster IP) is free again.
      store.definition.writeHooks?.afterDelete?.(object, store.context);
      return { object, deleted: true };
    },
  };
}

function dryRunWriter(): Writer {
  return {
    create(_key, object, undo) {
      undo?.();
      return Promise.resolve(object);
    },
    update: (_key, object, _revision, dryRunAnswer = object) => Promise.resolve(dryRunAnswer),
    remove: (_key, _revision, dryRunAnswer) => Promise.resolve({ object: dryRunAnswer, deleted: false }),
  };
}
