// The node lease controller (component-helpers `apimachinery/lease`): the
// kubelet's heartbeat is a Lease `kube-node-lease/<node>` held by the node,
// 40 s long, renewed every quarter of that, owned by the Node so that
// deleting the Node collects it. A lease is never created before its Node.
import {
  type DeepReadonly,
  isConflict,
  isNotFound,
  type Lease,
  leases,
  nodes,
  rfc3339Micro,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { Logger } from "@reconcile/controller";

export const nodeLeaseNamespace = "kube-node-lease";

export interface NodeLeaseOptions {
  client: Client;
  nodeName: string;
  /** `nodeLeaseDurationSeconds`. Default 40. */
  leaseDurationSeconds?: number | undefined;
  clock: Clock;
  logger: Logger;
}

/** See the file comment. */
export class NodeLease {
  /** Lease writes sent, for benchmarks. */
  writes = 0;
  readonly #o: NodeLeaseOptions;
  readonly #duration: number;
  #lease: DeepReadonly<Lease> | undefined;

  constructor(options: NodeLeaseOptions) {
    this.#o = options;
    this.#duration = options.leaseDurationSeconds ?? 40;
  }

  /** The renew interval: 25 % of the lease duration. */
  get renewIntervalMs(): number {
    return this.#duration * 250;
  }

  /**
   * Renews the lease every {@link renewIntervalMs} (jittered by 4 %) until
   * `signal` aborts, once `ready` says the Node is registered; a failed
   * renewal is retried after 200 ms, doubling up to 7 s (upstream's
   * nodelease controller).
   */
  async run({
    signal,
    ready,
    random = Math.random,
  }: {
    signal: AbortSignal;
    ready: () => boolean;
    random?: (() => number) | undefined;
  }): Promise<void> {
    let retryMs = 200;
    while (!signal.aborted) {
      let waitMs = this.renewIntervalMs + random() * 0.04 * this.renewIntervalMs;
      if (ready()) {
        try {
          await this.sync(signal);
          retryMs = 200;
        } catch (error) {
          if (signal.aborted) return;
          this.#o.logger.error({ err: error, node: this.#o.nodeName }, "failed to renew the node lease");
          waitMs = retryMs;
          retryMs = Math.min(retryMs * 2, 7000);
        }
      } else {
        waitMs = 100;
      }
      try {
        await this.#o.clock.sleep(waitMs, { signal });
      } catch {
        return;
      }
    }
  }

  /** One renewal (`sync`): update the last lease; on failure re-read it, or create it if it is missing. */
  async sync(signal: AbortSignal): Promise<void> {
    if (this.#lease !== undefined) {
      try {
        await this.#renew(this.#lease, signal);
        return;
      } catch (error) {
        if (!isConflict(error) && !isNotFound(error)) throw error;
        this.#lease = undefined;
      }
    }
    await this.#ensure(signal);
  }

  async #renew(lease: DeepReadonly<Lease>, signal: AbortSignal): Promise<void> {
    // A new top and spec over the read-only lease: nothing nested is changed, so nothing is copied.
    const next = { ...lease, spec: { ...lease.spec, renewTime: microTime(this.#o.clock.now()) } } as Lease;
    if (!next.metadata?.ownerReferences?.length) {
      const owner = await this.#ownerReference(signal);
      if (owner !== undefined) next.metadata = { ...next.metadata, ownerReferences: [owner] };
    }
    this.#lease = await this.#o.client.resource(leases, nodeLeaseNamespace).update(next, { signal });
    this.writes++;
  }

  async #ensure(signal: AbortSignal): Promise<void> {
    const client = this.#o.client.resource(leases, nodeLeaseNamespace);
    try {
      const existing = await client.get(this.#o.nodeName, { signal });
      await this.#renew(existing, signal);
      return;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const owner = await this.#ownerReference(signal);
    if (owner === undefined) return; // no Node yet: no lease either
    this.#lease = await client.create(
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.#o.nodeName, namespace: nodeLeaseNamespace, ownerReferences: [owner] },
        spec: {
          holderIdentity: this.#o.nodeName,
          leaseDurationSeconds: this.#duration,
          renewTime: microTime(this.#o.clock.now()),
        },
      },
      { signal },
    );
    this.writes++;
  }

  async #ownerReference(signal: AbortSignal) {
    try {
      const node = await this.#o.client.resource(nodes).get(this.#o.nodeName, { signal });
      if (!node.metadata?.uid) return undefined;
      return { apiVersion: "v1", kind: "Node", name: this.#o.nodeName, uid: node.metadata.uid };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return rfc3339Micro(ms);
}
