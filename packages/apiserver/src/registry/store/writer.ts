import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import { allocateServiceIP, serviceIPOf } from "../../kinds/service-ips.js";
import type { DryRunOption, StoreCore } from "./context.js";

/**
 * The store's writes to storage. A dry run (`dryRun=All`) is this one
 * decorator: every check and every change is computed as for a real write,
 * and only here is nothing stored, as kube-apiserver's `DryRunnableStorage`.
 */
export interface Writer {
  /** Stores a new object; a Service's cluster IP taken for it is given back if nothing is stored. */
  create(key: string, object: KubeObject, allocatedIP: string | undefined): Promise<KubeObject>;
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
  return options.dryRun === "All" ? dryRunWriter(store) : storageWriter(store);
}

/** Takes a new Service's cluster IP (or the one it asks for); the address, to give back if the write fails. */
export function allocateIP(store: StoreCore, object: KubeObject): string | undefined {
  const serviceIPs = store.context.serviceIPs;
  if (serviceIPs === undefined || !isServices(store.resource)) return undefined;
  return allocateServiceIP(serviceIPs, object);
}

function storageWriter(store: StoreCore): Writer {
  const storage = store.context.storage;
  return {
    async create(key, object, allocatedIP) {
      try {
        return await storage.create(key, object);
      } catch (error) {
        releaseIP(store, allocatedIP);
        throw error;
      }
    },
    update: (key, object, revision) => storage.update(key, object, revision),
    async remove(key, revision) {
      const object = await storage.delete(key, revision);
      // An object gone from storage: a Service's cluster IP is free again.
      if (isServices(store.resource)) releaseIP(store, serviceIPOf(object));
      return { object, deleted: true };
    },
  };
}

function dryRunWriter(store: StoreCore): Writer {
  return {
    create(_key, object, allocatedIP) {
      releaseIP(store, allocatedIP);
      return Promise.resolve(object);
    },
    update: (_key, object, _revision, dryRunAnswer = object) => Promise.resolve(dryRunAnswer),
    remove: (_key, _revision, dryRunAnswer) => Promise.resolve({ object: dryRunAnswer, deleted: false }),
  };
}

function releaseIP(store: StoreCore, ip: string | undefined): void {
  if (ip !== undefined) store.context.serviceIPs?.release(ip);
}

function isServices(resource: ResourceDescriptor): boolean {
  return resource.group === "" && resource.plural === "services";
}
