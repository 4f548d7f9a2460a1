import {
  type DeepReadonly,
  isNotFound,
  type Job,
  jobs,
  metaNamespaceKeyFunc,
  type RunOptions,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  type SyncResult,
} from "@reconcile/controller";
import { findCondition, isJobFinished } from "./job-conditions.js";

export interface TTLAfterFinishedControllerOptions extends ControllerContext {
  /** Deletes the Jobs. Required. */
  client: Client;
  /** Informer over Jobs. Required. */
  jobInformer: ControllerInformer<Job>;
}

/**
 * The TTL-after-finished controller (upstream `pkg/controller/ttlafterfinished`):
 * deletes a finished Job `ttlSecondsAfterFinished` after its Complete or
 * Failed condition, with background propagation (its pods follow through
 * the garbage collector), checking a fresh read before it deletes.
 */
export class TTLAfterFinishedController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #jobInformer: ControllerInformer<Job>;

  constructor(options: TTLAfterFinishedControllerOptions) {
    const { client, jobInformer } = options ?? {};
    this.#harness = defineController({
      name: "ttlafterfinished",
      owner: "TTLAfterFinishedController",
      context: options,
      required: { client, jobInformer },
      informers: { jobs: jobInformer },
      queues: [{ name: "ttl_jobs_to_delete", sync: (key) => this.syncJob(key) }],
    });
    [this.#client, this.#jobInformer] = [client, jobInformer];
    const enqueue = (job: DeepReadonly<Job>) => {
      if (job.metadata?.deletionTimestamp == null && needsCleanup(job))
        this.#harness.enqueue(metaNamespaceKeyFunc(job), "finished Job with a TTL");
    };
    jobInformer.addEventHandler({ onAdd: enqueue, onUpdate: (_, job) => enqueue(job) });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Deletes the Job if its TTL has passed, else looks again when it will have. */
  async syncJob(key: string): Promise<SyncResult> {
    const cached = this.#jobInformer.getIndexer().getByKey(key);
    if (cached === undefined || !needsCleanup(cached)) return;
    const remaining = expiresAt(cached) - this.#harness.clock.now();
    if (remaining > 0) return { requeueAfterMs: remaining };
    const { namespace, name } = splitMetaNamespaceKey(key);
    const resource = this.#client.resource(jobs, namespace);
    // The cache may be stale: the TTL or the Job may have changed.
    const fresh = await resource.get(name).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (fresh === undefined || !needsCleanup(fresh)) return;
    const freshRemaining = expiresAt(fresh) - this.#harness.clock.now();
    if (freshRemaining > 0) return { requeueAfterMs: freshRemaining };
    this.#harness.logger.info({ job: key }, "Cleaning up Job");
    await resource
      .delete(name, {
        propagationPolicy: "Background",
        preconditions: { uid: fresh.metadata?.uid, resourceVersion: fresh.metadata?.resourceVersion },
      })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    return;
  }
}

function needsCleanup(job: DeepReadonly<Job>): boolean {
  return job.spec?.ttlSecondsAfterFinished != null && isJobFinished(job);
}

/** When the TTL runs out: the finish time (Complete or Failed condition) plus the TTL. */
function expiresAt(job: DeepReadonly<Job>): number {
  const finished = findCondition(job, "Complete") ?? findCondition(job, "Failed");
  const at = Date.parse(finished?.lastTransitionTime ?? job.status?.completionTime ?? "") || 0;
  return at + (job.spec?.ttlSecondsAfterFinished ?? 0) * 1000;
}
