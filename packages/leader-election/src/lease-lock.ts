import { type Lease, leases } from "@reconcile/api";
import type { CallOptions, Client, ResourceClient } from "@reconcile/client";
import { LeaderElectionError } from "./errors.js";
import {
  type LeaderElectionRecord,
  leaderElectionRecordToLeaseSpec,
  leaseSpecToLeaderElectionRecord,
  rawRecord,
} from "./record.js";
import type { EventRecorder, LockRecord, ResourceLock } from "./resource-lock.js";

export interface LeaseLockOptions {
  /** The client to reach the API server with. Required. */
  client: Client;
  /** Namespace of the Lease. Required. */
  namespace: string;
  /** Name of the Lease. Required. */
  name: string;
  /** The unique identity of this participant (e.g. hostname + random suffix). Checked non-empty by the elector. */
  identity: string;
  /** Where "became leader" / "stopped leading" events go. Default: none. */
  eventRecorder?: EventRecorder | undefined;
  /** Labels set on the Lease when this participant creates or updates it. Default: none. */
  labels?: Readonly<Record<string, string>> | undefined;
}

/**
 * A lock on a `coordination.k8s.io/v1` Lease, as client-go's `LeaseLock`.
 * `get` and `create` remember the Lease; `update` writes the remembered Lease
 * with the new spec, so its `resourceVersion` makes the write conditional:
 * if anyone else wrote in between, the API server answers 409 Conflict.
 */
export class LeaseLock implements ResourceLock {
  readonly #leases: ResourceClient<Lease>;
  readonly #namespace: string;
  readonly #name: string;
  readonly #identity: string;
  readonly #eventRecorder: EventRecorder | undefined;
  readonly #labels: Readonly<Record<string, string>> | undefined;
  #lease: Lease | undefined;

  constructor(options: LeaseLockOptions) {
    if (typeof options?.client?.resource !== "function") {
      throw new LeaderElectionError("leader-election.invalid-config", "LeaseLock: client must be a Client");
    }
    for (const field of ["namespace", "name"] as const) {
      if (typeof options[field] !== "string" || options[field] === "") {
        throw new LeaderElectionError(
          "leader-election.invalid-config",
          `LeaseLock: ${field} must be a non-empty string, got ${JSON.stringify(options[field])}`,
        );
      }
    }
    if (typeof options.identity !== "string") {
      throw new LeaderElectionError(
        "leader-election.invalid-config",
        `LeaseLock: identity must be a string, got ${typeof options.identity}`,
      );
    }
    this.#leases = options.client.resource(leases, options.namespace);
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#identity = options.identity;
    this.#eventRecorder = options.eventRecorder;
    this.#labels = options.labels;
  }

  async get(options?: CallOptions): Promise<LockRecord> {
    const lease = await this.#leases.get(this.#name, callOptions(options));
    this.#lease = lease;
    const record = leaseSpecToLeaderElectionRecord(lease.spec);
    return { record, raw: rawRecord(record) };
  }

  async create(record: LeaderElectionRecord, options?: CallOptions): Promise<void> {
    const lease: Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        namespace: this.#namespace,
        name: this.#name,
        ...(this.#labels ? { labels: { ...this.#labels } } : {}),
      },
      spec: leaderElectionRecordToLeaseSpec(record),
    };
    this.#lease = await this.#leases.create(lease, callOptions(options));
  }

  async update(record: LeaderElectionRecord, options?: CallOptions): Promise<void> {
    const cached = this.#lease;
    if (cached === undefined) {
      throw new LeaderElectionError(
        "leader-election.lock-not-initialized",
        "lease not initialized, call get or create first",
      );
    }
    const metadata = { ...cached.metadata };
    // Only the labels this lock owns are overwritten; others stay.
    if (this.#labels) metadata.labels = { ...metadata.labels, ...this.#labels };
    const lease: Lease = { ...cached, metadata, spec: leaderElectionRecordToLeaseSpec(record) };
    this.#lease = await this.#leases.update(lease, callOptions(options));
  }

  recordEvent(message: string): void {
    if (this.#eventRecorder === undefined) return;
    const subject: Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: this.#lease?.metadata ?? { namespace: this.#namespace, name: this.#name },
    };
    this.#eventRecorder.event(subject, "Normal", "LeaderElection", `${this.#identity} ${message}`);
  }

  identity(): string {
    return this.#identity;
  }

  describe(): string {
    return `${this.#namespace}/${this.#name}`;
  }
}

function callOptions(options: CallOptions | undefined): CallOptions | undefined {
  return options?.signal ? { signal: options.signal } : undefined;
}
