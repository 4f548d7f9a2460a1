import { setMaxListeners } from "node:events";
import {
  type DeepReadonly,
  getControllerOf,
  hasStatusCause,
  isNotFound,
  type Job,
  jobs,
  metaNamespaceKeyFunc,
  newControllerRef,
  type Pod,
  podKey,
  pods,
  type RunOptions,
  rfc3339,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  ClientPodControl,
  type ControllerContext,
  type ControllerEventHandler,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  type PodControl,
  type SyncContext,
  type SyncResult,
  slowStartBatch,
  slowStartInitialBatchSize,
} from "@reconcile/controller";
import { outstandingOf, UIDTrackingControllerExpectations } from "@reconcile/expectations";
import type { JobStatus } from "kubernetes-types/batch/v1.js";
import { formatIndexes } from "./indexes.js";
import { claimJobPods, jobPodsIndex } from "./job-claim.js";
import {
  completionModeOf,
  type JobMetrics,
  recordCreations,
  recordWritten,
  type SyncOutcome,
  syncAction,
} from "./job-metrics.js";

export { jobPodsIndex };

import {
  type BackoffRecord,
  encodeStatus,
  failureBackoffMs,
  isConditionTrue,
  isJobFinished,
  messages,
  newBackoffRecord,
  normalise,
  reasons,
  recordFinished,
  setCondition,
} from "./job-conditions.js";
import { hasTrackingFinalizer, isFinished, jobTrackingFinalizer, podTemplateFor } from "./job-pods.js";
import { onlyReplaceFailedPods } from "./job-policies.js";
import {
  completedIndexesText,
  indexesToCreate,
  type JobState,
  jobState,
  podsToDelete,
  wantActive,
} from "./job-state.js";
import { terminalTarget } from "./job-target.js";

const controllerKind = { group: "batch", version: "v1", kind: "Job" } as const;
/** The `spec.managedBy` value that means this controller (also what an unset one means). */
export const jobControllerName = "kubernetes.io/job-controller";

/** Whether this controller runs `job`: `spec.managedBy` unset or naming it. */
export function managedByJobController(job: DeepReadonly<Job>): boolean {
  const managedBy = job.spec?.managedBy;
  return managedBy == null || managedBy === jobControllerName;
}

export interface JobControllerOptions extends ControllerContext {
  /** Writes pods, Job status and Events. Required. */
  client: Client;
  /** Informer over pods. Required. */
  podInformer: ControllerInformer<Pod>;
  /** Informer over Jobs. Required. */
  jobInformer: ControllerInformer<Job>;
  /** Default: `ClientPodControl` over `client`, recording Events as "job-controller". */
  podControl?: PodControl | undefined;
  /** Most pods one sync creates (upstream's `MaxPodCreateDeletePerSync`). Default 500. */
  burstReplicas?: number | undefined;
  /** Upstream's `job_controller_*` metrics. Default: none. */
  metrics?: JobMetrics | undefined;
  /**
   * How long a Job waits after a pod event or a status-only change of its
   * own before it is synced, so that a burst of events leads to one sync
   * (upstream's `syncJobBatchPeriod`). A Job's creation, deletion and spec
   * changes sync at once. Default 1,000 ms, as upstream.
   */
  syncBatchPeriodMs?: number | undefined;
}

/**
 * The Job controller (upstream `pkg/controller/job`): runs a Job's pods to
 * `completions` successes, `parallelism` at a time (NonIndexed, or Indexed
 * with one success per index), replaces failed pods after an exponential
 * delay until `backoffLimit`, stops at `activeDeadlineSeconds`, honours
 * `suspend`, and tracks finished pods with the `batch.kubernetes.io/job-tracking`
 * finalizer through `status.uncountedTerminatedPods`, so no success or
 * failure is counted twice or lost across restarts. Terminal conditions come
 * in two steps, as in v1.32: SuccessCriteriaMet or FailureTarget first,
 * Complete or Failed once no pod of the Job is left running.
 */
export class JobController {
  readonly expectations = new UIDTrackingControllerExpectations();
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #jobInformer: ControllerInformer<Job>;
  readonly #podControl: PodControl;
  readonly #burst: number;
  readonly #batchPeriodMs: number;
  readonly #metrics: JobMetrics | undefined;
  /** What the sync of each Job key in progress did (one sync per key at a time), for its metrics. */
  readonly #outcomes = new Map<string, SyncOutcome>();
  /** Per Job key, pod UIDs whose finalizer removal is in flight. */
  readonly #finalizerRemovals = new Map<string, Set<string>>();
  /** Per Job key: failures since the last success, and when the last one finished. */
  readonly #backoff = new Map<string, BackoffRecord>();
  /** Per Job key, the resourceVersion of the last status this controller wrote. */
  readonly #written = new Map<string, number>();
  #podHandler!: ControllerEventHandler<Pod>;

  constructor(options: JobControllerOptions) {
    const { client, podInformer, jobInformer, podControl } = options ?? {};
    this.#harness = defineController({
      name: "job",
      owner: "JobController",
      context: options,
      required: { client, podInformer, jobInformer },
      events: podControl === undefined ? { component: "job-controller", client } : undefined,
      informers: { pods: podInformer, jobs: jobInformer },
      queues: [
        { name: "job", workers: 5, sync: (key, context) => this.syncJob(key, context) },
        { name: "orphan_pod", workers: 1, sync: (key, context) => this.#syncOrphanPod(key, context) },
      ],
      inspect: () => ({ expectations: outstandingOf(this.expectations) }),
    });
    [this.#client, this.#podInformer, this.#jobInformer] = [client, podInformer, jobInformer];
    this.#podControl = podControl ?? new ClientPodControl({ client, recorder: this.#harness.recorder });
    this.#burst = options.burstReplicas ?? 500;
    this.#batchPeriodMs = options.syncBatchPeriodMs ?? 1000;
    this.#metrics = options.metrics;
    this.#addEventHandlers();
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof jobs): ControllerInformer<Job>;
    },
    options: Omit<JobControllerOptions, "podInformer" | "jobInformer">,
  ): JobController {
    return new JobController({
      ...options,
      podInformer: factory.forResource(pods),
      jobInformer: factory.forResource(jobs),
    });
  }

  /** Waits for the caches, then runs the workers until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  #addEventHandlers(): void {
    this.#jobInformer.addEventHandler({
      onAdd: (job) => this.#harness.enqueue(metaNamespaceKeyFunc(job), "Job added"),
      onUpdate: (oldJob, job) => {
        if (oldJob.metadata?.uid !== job.metadata?.uid) this.#jobDeleted(oldJob);
        // A status write (often this controller's own) waits for the batch; a spec change does not.
        if (oldJob.metadata?.generation === job.metadata?.generation)
          this.#enqueueBatched(metaNamespaceKeyFunc(job), "Job status updated");
        else this.#harness.enqueue(metaNamespaceKeyFunc(job), "Job updated");
        // A new deadline: look again when it passes.
        const deadline = job.spec?.activeDeadlineSeconds;
        const start = job.status?.startTime;
        if (deadline != null && start != null && !isJobFinished(job)) {
          const remaining = Date.parse(start) + deadline * 1000 - this.#harness.clock.now();
          if (remaining > 0)
            this.#harness.enqueueAfter(metaNamespaceKeyFunc(job), remaining, "active deadline");
        }
      },
      onDelete: (obj) => this.#jobDeleted(objectFromTombstone(obj)),
    });
    ensureIndex(this.#podInformer.getIndexer(), jobPodsIndex, (pod) => {
      const ref = getControllerOf(pod);
      return [ref === undefined ? `orphan/${pod.metadata?.namespace ?? ""}` : ref.uid];
    });
    this.#podHandler = ownerEventHandler<Pod, Job>({
      ownerKind: { kind: controllerKind.kind, group: controllerKind.group },
      owners: this.#jobInformer.getIndexer(),
      childKind: "Pod",
      enqueue: (key, _job, reason) => this.#enqueueBatched(key, reason),
      observe: {
        created: (key) => this.expectations.creationObserved(key),
        deleted: (key, pod) => this.expectations.deletionObserved(key, podKey(pod as DeepReadonly<Pod>)),
      },
      ownersOfOrphan: (pod) => ownersSelecting<Job>(this.#jobInformer.getIndexer(), pod),
    });
    this.#podInformer.addEventHandler({
      onAdd: (pod) => {
        this.#podHandler.onAdd?.(pod, false);
        this.#checkOrphan(pod);
      },
      onUpdate: (oldPod, pod) => {
        if (!hasTrackingFinalizer(pod)) this.#finalizerRemoved(pod);
        this.#podHandler.onUpdate?.(oldPod, pod);
        this.#checkOrphan(pod);
      },
      onDelete: (obj) => {
        const pod = objectFromTombstone(obj);
        if (pod?.metadata !== undefined) this.#finalizerRemoved(pod);
        this.#podHandler.onDelete?.(obj);
      },
    });
  }

  /** Syncs `key` once the batch period has passed (upstream's `enqueueSyncJobBatched`). */
  #enqueueBatched(key: string, reason: string): void {
    this.#harness.enqueueAfter(key, this.#batchPeriodMs, reason);
  }

  #jobDeleted(job: DeepReadonly<Job> | undefined): void {
    if (job?.metadata?.name === undefined) return;
    const key = metaNamespaceKeyFunc(job);
    this.expectations.deleteExpectations(key);
    this.#finalizerRemovals.delete(key);
    this.#backoff.delete(key);
    this.#written.delete(key);
    // Its pods keep their tracking finalizers: release them.
    for (const pod of this.#podInformer.getIndexer().byIndex(jobPodsIndex, job.metadata.uid ?? "")) {
      if (hasTrackingFinalizer(pod)) this.#harness.queues.get("orphan_pod")?.add(podKey(pod));
    }
  }

  /** A pod with the tracking finalizer whose Job is gone or finished goes to the orphan queue. */
  #checkOrphan(pod: DeepReadonly<Pod>): void {
    if (!hasTrackingFinalizer(pod)) return;
    const ref = getControllerOf(pod);
    const job =
      ref?.kind === "Job"
        ? this.#jobInformer.getIndexer().getByKey(`${pod.metadata?.namespace ?? ""}/${ref.name}`)
        : undefined;
    if (job === undefined || job.metadata?.uid !== ref?.uid || (isJobFinished(job) && isFinished(pod)))
      this.#harness.queues.get("orphan_pod")?.add(podKey(pod));
  }

  #finalizerRemoved(pod: DeepReadonly<Pod>): void {
    const ref = getControllerOf(pod);
    if (ref === undefined) return;
    const key = `${pod.metadata?.namespace ?? ""}/${ref.name}`;
    const pending = this.#finalizerRemovals.get(key);
    if (pending?.delete(pod.metadata?.uid ?? "") && pending.size === 0) this.#finalizerRemovals.delete(key);
  }

  /** Removes the tracking finalizer of a pod whose Job no longer needs it. */
  async #syncOrphanPod(key: string, context: SyncContext): Promise<void> {
    const pod = this.#podInformer.getIndexer().getByKey(key);
    if (pod === undefined || !hasTrackingFinalizer(pod)) return;
    const ref = getControllerOf(pod);
    const job = ref
      ? this.#jobInformer.getIndexer().getByKey(`${pod.metadata?.namespace ?? ""}/${ref.name}`)
      : undefined;
    const owned = job !== undefined && job.metadata?.uid === ref?.uid;
    // The pods of a Job another controller manages are its business, finalizers included.
    if (owned && !managedByJobController(job)) return;
    // A live Job's pods are counted by the Job's own sync first.
    if (owned && !(isJobFinished(job) && isFinished(pod))) return;
    await this.#removeFinalizer(pod, context.signal);
  }

  /**
   * Reconciles one Job (upstream `syncJob`): counts its finished pods through
   * the tracking finalizer, decides whether it has succeeded or failed,
   * creates or deletes pods toward `wantActive`, and writes its status.
   */
  async syncJob(key: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const job = this.#jobInformer.getIndexer().getByKey(key);
    if (this.#metrics === undefined || job === undefined) return this.#sync(key, context);
    const started = this.#harness.clock.now();
    const outcome: SyncOutcome = { created: false, deleted: false, tracked: false };
    this.#outcomes.set(key, outcome);
    let result: "success" | "error" = "error";
    try {
      const synced = await this.#sync(key, context);
      result = "success";
      return synced;
    } finally {
      this.#outcomes.delete(key);
      const seconds = (this.#harness.clock.now() - started) / 1000;
      this.#metrics.jobSync(completionModeOf(job), result, syncAction(outcome), seconds);
    }
  }

  async #sync(key: string, context: Partial<SyncContext>): Promise<SyncResult> {
    const { signal } = context;
    // One sync may have a request per pod in flight, each listening to the signal.
    if (signal !== undefined) setMaxListeners(0, signal);
    const job = this.#jobInformer.getIndexer().getByKey(key);
    if (job === undefined) {
      this.expectations.deleteExpectations(key);
      this.#finalizerRemovals.delete(key);
      this.#backoff.delete(key);
      this.#written.delete(key);
      return;
    }
    if (isJobFinished(job)) return;
    // Another controller runs this Job (`spec.managedBy`, JobManagedBy, on in 1.32): hands off.
    if (!managedByJobController(job)) return;
    // A cache older than our own last status write would count its pods again or lose them: wait
    // for the informer to deliver that write (its update event syncs the Job again).
    if (Number(job.metadata?.resourceVersion) < (this.#written.get(key) ?? 0)) return;
    // Only pod creations and deletions gate new pods, as upstream: finished pods whose finalizer
    // removal is in flight are already in the status this cache holds (see the check above).
    const satisfied = this.expectations.satisfiedExpectations(key);
    const jobPods = await claimJobPods(
      { client: this.#client, podInformer: this.#podInformer, podControl: this.#podControl },
      job,
      signal,
    );
    const state = jobState(job, jobPods, this.#finalizerRemovals.get(key) ?? new Set());
    const now = this.#harness.clock.now();
    if (state.newlyFinished.length > 0) {
      const record = this.#backoff.get(key) ?? newBackoffRecord();
      recordFinished(record, state.newlyFinished, now);
      this.#backoff.set(key, record);
    }
    const status: JobStatus = structuredClone(job.status ?? {}) as JobStatus;
    const conditions = (status.conditions ??= []);
    let requeueAfterMs: number | undefined;

    const target = terminalTarget(job, state, now);
    if (target !== undefined) {
      if (setCondition(conditions, target.type, "True", target.reason, target.message, now) && target.event)
        this.#harness.recorder.event(job, "Warning", target.reason, target.message);
      await this.#deletePods(key, job, state.active, signal);
    } else if (job.spec?.suspend === true) {
      if (setCondition(conditions, "Suspended", "True", reasons.suspended, messages.suspended, now))
        this.#harness.recorder.event(job, "Normal", "Suspended", messages.suspended);
      await this.#deletePods(key, job, state.active, signal);
    } else {
      if (setCondition(conditions, "Suspended", "False", reasons.resumed, messages.resumed, now)) {
        this.#harness.recorder.event(job, "Normal", "Resumed", messages.resumed);
        status.startTime = rfc3339(now);
      }
      status.startTime ??= rfc3339(now);
      if (satisfied) requeueAfterMs = await this.#manage(key, job, state, now, signal);
      const deadline = job.spec?.activeDeadlineSeconds;
      if (deadline != null) {
        const remaining = Date.parse(status.startTime) + deadline * 1000 - now;
        requeueAfterMs = Math.min(requeueAfterMs ?? remaining, remaining);
      }
    }
    const counted = await this.#track(key, job, state, status, signal);
    this.#fillStatus(job, state, status, counted, now);
    await this.#writeStatus(counted.job, status, signal);
    recordWritten(this.#metrics, job, status, counted);
    return requeueAfterMs !== undefined && requeueAfterMs > 0 ? { requeueAfterMs } : undefined;
  }

  /** Creates or deletes pods toward `wantActive` (upstream `manageJob`); a requeue delay while in backoff. */
  async #manage(
    key: string,
    job: DeepReadonly<Job>,
    state: JobState,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<number | undefined> {
    const want = wantActive(state);
    const active = state.active.length;
    if (active > want) {
      await this.#deletePods(key, job, podsToDelete(state, active - want), signal);
      return undefined;
    }
    if (active === want) return undefined;
    const record = this.#backoff.get(key);
    if (record !== undefined && record.failures > 0) {
      const remaining = record.lastFailure + failureBackoffMs(record.failures) - now;
      // Never sooner than the batch period (upstream's `enqueueSyncJobWithDelay`).
      if (remaining > 0) return Math.max(remaining, this.#batchPeriodMs);
    }
    // Where only failed pods are replaced, a terminating pod still holds its place.
    const holding = onlyReplaceFailedPods(job) ? state.terminating : 0;
    let count = Math.min(want - active - holding, this.#burst);
    if (count <= 0) return undefined;
    const indexes = state.indexed ? indexesToCreate(state, count) : undefined;
    if (indexes !== undefined) count = indexes.length;
    if (count === 0) return undefined;
    this.expectations.expectCreations(key, count);
    const namespace = job.metadata?.namespace ?? "";
    const controllerRef = newControllerRef(job, controllerKind);
    const target = { apiVersion: "batch/v1", kind: "Job", metadata: job.metadata ?? {} };
    let next = 0;
    const { successes, error } = await slowStartBatch(count, slowStartInitialBatchSize, async () => {
      const index = indexes?.[next++];
      const generateName = `${job.metadata?.name ?? ""}-${index === undefined ? "" : `${index}-`}`;
      try {
        await this.#podControl.createPodsWithGenerateName(
          namespace,
          podTemplateFor(
            job,
            index,
            index !== undefined && state.failedIndexes !== undefined
              ? (state.indexFailures.get(index) ?? 0)
              : undefined,
          ),
          target,
          controllerRef,
          generateName,
          { signal },
        );
      } catch (err) {
        if (hasStatusCause(err, "NamespaceTerminating")) return;
        throw err;
      }
    });
    for (let i = successes; i < count; i++) this.expectations.creationObserved(key);
    recordCreations(this.#metrics, this.#outcomes.get(key), state, successes, count - successes);
    if (error !== undefined) throw error;
    return undefined;
  }

  async #deletePods(
    key: string,
    job: DeepReadonly<Job>,
    victims: readonly DeepReadonly<Pod>[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (victims.length === 0) return;
    const outcome = this.#outcomes.get(key);
    if (outcome !== undefined) outcome.deleted = true;
    this.expectations.expectDeletions(key, victims.map(podKey));
    const target = { apiVersion: "batch/v1", kind: "Job", metadata: job.metadata ?? {} };
    const errors: unknown[] = [];
    await Promise.all(
      victims.map(async (pod) => {
        try {
          await this.#podControl.deletePod(pod.metadata?.namespace ?? "", pod.metadata?.name ?? "", target, {
            signal,
          });
        } catch (error) {
          this.expectations.deletionObserved(key, podKey(pod));
          if (!isNotFound(error)) errors.push(error);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  /**
   * Finished pods are counted in three steps (upstream
   * `trackJobStatusAndRemoveFinalizers`): their UIDs go into
   * `uncountedTerminatedPods` (written), then their finalizers are removed,
   * then they move into `succeeded`/`failed`. A crash between steps loses
   * nothing and counts nothing twice. Returns the Job as last written and the
   * UIDs now counted.
   */
  async #track(
    key: string,
    job: DeepReadonly<Job>,
    state: JobState,
    status: JobStatus,
    signal: AbortSignal | undefined,
  ): Promise<{ job: DeepReadonly<Job>; succeeded: Set<string>; failed: Set<string> }> {
    let current = job;
    if (state.newlyFinished.length > 0) {
      const step: JobStatus = structuredClone(job.status ?? {}) as JobStatus;
      step.uncountedTerminatedPods = {
        succeeded: [...state.uncountedSucceeded],
        failed: [...state.uncountedFailed],
      };
      current = await this.#writeStatus(job, step, signal);
    }
    const uncounted = new Set([...state.uncountedSucceeded, ...state.uncountedFailed]);
    // Pods an Ignore rule matched lose their finalizer without being counted.
    const holding = [
      ...state.pods.filter((p) => uncounted.has(p.metadata?.uid ?? "") && hasTrackingFinalizer(p)),
      ...state.ignored,
    ];
    const pending = this.#finalizerRemovals.get(key) ?? new Set<string>();
    for (const pod of holding) pending.add(pod.metadata?.uid ?? "");
    if (pending.size > 0) this.#finalizerRemovals.set(key, pending);
    const removed = await Promise.allSettled(holding.map((pod) => this.#removeFinalizer(pod, signal)));
    if (holding.length > 0) {
      const outcome = this.#outcomes.get(key);
      if (outcome !== undefined) outcome.tracked = true;
      const done = removed.filter((r) => r.status === "fulfilled").length;
      if (done > 0) this.#metrics?.trackingFinalizer("delete", done);
    }
    const stuck = new Set<string>();
    removed.forEach((result, i) => {
      if (result.status === "rejected") {
        const uid = holding[i]?.metadata?.uid ?? "";
        stuck.add(uid);
        this.#finalizerRemovals.get(key)?.delete(uid);
      }
    });
    const succeeded = new Set([...state.uncountedSucceeded].filter((uid) => !stuck.has(uid)));
    const failed = new Set([...state.uncountedFailed].filter((uid) => !stuck.has(uid)));
    status.uncountedTerminatedPods = {
      succeeded: [...state.uncountedSucceeded].filter((uid) => stuck.has(uid)),
      failed: [...state.uncountedFailed].filter((uid) => stuck.has(uid)),
    };
    const rejected = removed.find((r) => r.status === "rejected");
    if (rejected !== undefined && stuck.size === holding.length && holding.length > 0)
      throw (rejected as PromiseRejectedResult).reason;
    return { job: current, succeeded, failed };
  }

  async #removeFinalizer(pod: DeepReadonly<Pod>, signal: AbortSignal | undefined): Promise<void> {
    const finalizers = pod.metadata?.finalizers ?? [];
    const at = finalizers.indexOf(jobTrackingFinalizer);
    if (at === -1) return;
    const patch = [
      { op: "test", path: `/metadata/finalizers/${at}`, value: jobTrackingFinalizer },
      { op: "remove", path: `/metadata/finalizers/${at}` },
    ];
    try {
      await this.#client
        .resource(pods, pod.metadata?.namespace)
        .patch(pod.metadata?.name ?? "", patch, { type: "json", signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** The counts, conditions and times of the status this sync writes. */
  #fillStatus(
    job: DeepReadonly<Job>,
    state: JobState,
    status: JobStatus,
    counted: { succeeded: Set<string>; failed: Set<string> },
    now: number,
  ): void {
    status.succeeded = (job.status?.succeeded ?? 0) + counted.succeeded.size;
    status.failed = (job.status?.failed ?? 0) + counted.failed.size;
    // Pods of a Job that met its target are being deleted: they count as terminating.
    const deleting = status.conditions?.some(
      (c) => c.status === "True" && (c.type === "FailureTarget" || c.type === "SuccessCriteriaMet"),
    );
    status.active = deleting ? 0 : state.active.length;
    status.ready = state.ready;
    status.terminating = state.terminating + (deleting ? state.active.length : 0);
    const indexes = completedIndexesText(state);
    if (indexes !== undefined) status.completedIndexes = indexes;
    if (state.failedIndexes !== undefined) status.failedIndexes = formatIndexes(state.failedIndexes);
    const conditions = (status.conditions ??= []);
    const nothingLeft =
      state.active.length === 0 &&
      state.terminating === 0 &&
      (status.uncountedTerminatedPods?.succeeded?.length ?? 0) === 0 &&
      (status.uncountedTerminatedPods?.failed?.length ?? 0) === 0;
    const failure = conditions.find((c) => c.type === "FailureTarget" && c.status === "True");
    const success = conditions.find((c) => c.type === "SuccessCriteriaMet" && c.status === "True");
    if (!nothingLeft || (failure === undefined && success === undefined)) return;
    if (failure !== undefined) {
      setCondition(conditions, "Failed", "True", failure.reason ?? "", failure.message ?? "", now);
      this.#harness.recorder.event(job, "Warning", failure.reason ?? "Failed", failure.message ?? "");
    } else if (success !== undefined) {
      setCondition(conditions, "Complete", "True", success.reason ?? "", success.message ?? "", now);
      status.completionTime = rfc3339(now);
      this.#harness.recorder.event(job, "Normal", "Completed", "Job completed");
    }
    if (isConditionTrue({ status }, "Suspended"))
      setCondition(conditions, "Suspended", "False", reasons.resumed, messages.resumed, now);
  }

  async #writeStatus(
    job: DeepReadonly<Job>,
    status: JobStatus,
    signal: AbortSignal | undefined,
  ): Promise<DeepReadonly<Job>> {
    encodeStatus(status);
    if (JSON.stringify(normalise(job.status)) === JSON.stringify(normalise(status))) return job;
    const written = await this.#client
      .resource(jobs, job.metadata?.namespace)
      .updateStatus({ ...(job as Job), status }, { signal });
    this.#written.set(metaNamespaceKeyFunc(job), Number(written.metadata?.resourceVersion) || 0);
    return written;
  }
}
