import { type Clock, realClock } from "@reconcile/clock";
import type { Etcd3 } from "etcd3";

/** The key, at the root of etcd's keyspace, through which API servers agree on compactions. */
export const compactRevisionKey = "compact_rev_key";

export interface CompactorOptions {
  client: Etcd3;
  /** Time between rounds. Default: 300,000 ms (kube-apiserver's 5 minutes). */
  intervalMs?: number | undefined;
  clock?: Clock | undefined;
  /** Called with a round's failure (the next round still runs). Default: ignore. */
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * Keeps etcd's history bounded as kube-apiserver's compactor does. Each round
 * compares the version of `compact_rev_key` with the one this compactor last
 * saw: if they match, it writes the revision it remembered from the previous
 * round and compacts etcd to it, then remembers the new current revision; if
 * another API server got there first, it adopts that round. So at least one
 * interval of history is kept, the first round never compacts, and several
 * servers over one etcd compact once per interval between them.
 */
export class Compactor {
  readonly #client: Etcd3;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  #version = 0;
  #lastRevision = 0;

  constructor(options: CompactorOptions) {
    this.#client = options.client;
    this.#intervalMs = options.intervalMs ?? 300_000;
    if (!(this.#intervalMs > 0)) throw new RangeError(`intervalMs must be positive, got ${this.#intervalMs}`);
    this.#clock = options.clock ?? realClock;
    this.#onError = options.onError ?? (() => {});
  }

  /** Runs a round every interval until `signal` aborts; settles once no round is in flight. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = this.#clock.setTimeout(done, this.#intervalMs);
        function done() {
          signal.removeEventListener("abort", cancel);
          resolve();
        }
        const cancel = () => {
          this.#clock.clearTimeout(timer);
          done();
        };
        signal.addEventListener("abort", cancel, { once: true });
      });
      if (signal.aborted) return;
      try {
        await this.compactOnce();
      } catch (error) {
        this.#onError(error);
      }
    }
  }

  /** One round; resolves with the revision compacted to, or undefined when this round compacted nothing. */
  async compactOnce(): Promise<number | undefined> {
    const key = Buffer.from(compactRevisionKey);
    const response = await this.#client.kv.txn({
      compare: [{ key, target: "Version", result: "Equal", version: this.#version }],
      success: [{ request_put: { key, value: Buffer.from(String(this.#lastRevision)) } }],
      failure: [{ request_range: { key } }],
    });
    const current = Number(response.header.revision);
    if (!response.succeeded) {
      // Another server compacted this round: follow its clock.
      const kv = response.responses[0]?.response_range?.kvs[0];
      this.#version = kv === undefined ? 0 : Number(kv.version);
      this.#lastRevision = current;
      return undefined;
    }
    this.#version++;
    const target = this.#lastRevision;
    this.#lastRevision = current;
    if (target === 0) return undefined;
    await this.#client.kv.compact({ revision: target });
    return target;
  }
}
