import {
  type DeepReadonly,
  type KubeObject,
  type Lease,
  leases,
  newAlreadyExists,
  newConflict,
  newInvalid,
  newMethodNotSupported,
  newNotFound,
  type ResourceDescriptor,
  rfc3339,
} from "@reconcile/api";
import type { CallOptions, Client, ResourceClient } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";

/** One call the fake served, in order. */
export interface LeaseAction {
  verb: "get" | "create" | "update";
  namespace: string;
  name: string;
}

export interface FakeLeaseClientOptions {
  /** Stamps creationTimestamp. Default `realClock`. */
  clock?: Clock | undefined;
}

const leaseResource = { group: leases.group, resource: leases.plural };
const leaseKind = { group: leases.group, kind: leases.kind };

/**
 * An in-memory `Client` that serves only Leases, with what leader election
 * relies on: get / create / update, a global resourceVersion, 409 Conflict
 * on a stale resourceVersion, AlreadyExists, NotFound, and Lease validation
 * of leaseDurationSeconds. Objects go in and out as copies.
 */
export class FakeLeaseClient implements Client {
  /** Every call served, in order. */
  readonly actions: LeaseAction[] = [];
  readonly #clock: Clock;
  readonly #store = new Map<string, Lease>();
  #resourceVersion = 0;

  constructor(options: FakeLeaseClientOptions = {}) {
    this.#clock = options.clock ?? realClock;
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    if (resource.plural !== leases.plural || resource.group !== leases.group) {
      throw new Error(`FakeLeaseClient serves only leases, not ${resource.plural}`);
    }
    if (namespace === undefined) throw new Error("FakeLeaseClient: a namespace is required");
    return new FakeLeases(this, namespace) as unknown as ResourceClient<T>;
  }

  /** The stored Lease (a copy), if any. */
  stored(namespace: string, name: string): Lease | undefined {
    const lease = this.#store.get(`${namespace}/${name}`);
    return lease && structuredClone(lease);
  }

  /** @internal */
  serve(
    action: LeaseAction,
    object: DeepReadonly<Lease> | undefined,
    options: CallOptions | undefined,
  ): Lease {
    options?.signal?.throwIfAborted();
    this.actions.push(action);
    const key = `${action.namespace}/${action.name}`;
    const existing = this.#store.get(key);
    switch (action.verb) {
      case "get":
        if (existing === undefined) throw newNotFound(leaseResource, action.name);
        return structuredClone(existing);
      case "create": {
        if (existing !== undefined) throw newAlreadyExists(leaseResource, action.name);
        const lease = structuredClone(object as Lease);
        validate(lease, action.name);
        lease.metadata = {
          ...lease.metadata,
          namespace: action.namespace,
          resourceVersion: String(++this.#resourceVersion),
          uid: `uid-${this.#resourceVersion}`,
          creationTimestamp: rfc3339(this.#clock.now()),
        };
        this.#store.set(key, lease);
        return structuredClone(lease);
      }
      case "update": {
        if (existing === undefined) throw newNotFound(leaseResource, action.name);
        const lease = structuredClone(object as Lease);
        const precondition = lease.metadata?.resourceVersion;
        if (precondition && precondition !== existing.metadata?.resourceVersion) {
          throw newConflict(leaseResource, action.name);
        }
        validate(lease, action.name);
        lease.metadata = {
          ...existing.metadata,
          ...lease.metadata,
          resourceVersion: String(++this.#resourceVersion),
        };
        this.#store.set(key, lease);
        return structuredClone(lease);
      }
    }
  }
}

function validate(lease: Lease, name: string): void {
  const seconds = lease.spec?.leaseDurationSeconds;
  if (seconds !== undefined && seconds <= 0) {
    throw newInvalid(leaseKind, name, [
      {
        type: "FieldValueInvalid",
        field: "spec.leaseDurationSeconds",
        message: `spec.leaseDurationSeconds: Invalid value: ${seconds}: must be greater than 0`,
      },
    ]);
  }
}

class FakeLeases implements ResourceClient<Lease> {
  readonly resource = leases;
  readonly #client: FakeLeaseClient;
  readonly namespace: string;

  constructor(client: FakeLeaseClient, namespace: string) {
    this.#client = client;
    this.namespace = namespace;
  }

  async get(name: string, options?: CallOptions): Promise<Lease> {
    return this.#client.serve({ verb: "get", namespace: this.namespace, name }, undefined, options);
  }

  async create(object: Lease | DeepReadonly<Lease>, options?: CallOptions): Promise<Lease> {
    const name = object.metadata?.name ?? "";
    return this.#client.serve({ verb: "create", namespace: this.namespace, name }, object, options);
  }

  async update(object: Lease | DeepReadonly<Lease>, options?: CallOptions): Promise<Lease> {
    const name = object.metadata?.name ?? "";
    return this.#client.serve({ verb: "update", namespace: this.namespace, name }, object, options);
  }

  list(): never {
    throw newMethodNotSupported(leaseResource, "list");
  }
  watch(): never {
    throw newMethodNotSupported(leaseResource, "watch");
  }
  updateStatus(): never {
    throw newMethodNotSupported(leaseResource, "updateStatus");
  }
  patch(): never {
    throw newMethodNotSupported(leaseResource, "patch");
  }
  delete(): never {
    throw newMethodNotSupported(leaseResource, "delete");
  }
  deleteCollection(): never {
    throw newMethodNotSupported(leaseResource, "deleteCollection");
  }
  getScale(): never {
    throw newMethodNotSupported(leaseResource, "getScale");
  }
  updateScale(): never {
    throw newMethodNotSupported(leaseResource, "updateScale");
  }
}
