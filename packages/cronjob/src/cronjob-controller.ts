import {
  CronSchedule,
  cronJobs,
  type DeepReadonly,
  errorMessage,
  formatInZone,
  getControllerOf,
  hasStatusCause,
  isAlreadyExists,
  isNotFound,
  isValidTimeZone,
  type Job,
  jobs,
  metaNamespaceKeyFunc,
  newControllerRef,
  type RunOptions,
  rfc3339,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  objectFromTombstone,
  ownerEventHandler,
  type SyncResult,
} from "@reconcile/controller";
import type { CronJob, CronJobStatus, JobSpec } from "kubernetes-types/batch/v1.js";
import type { ObjectReference } from "kubernetes-types/core/v1.js";
import { InvalidScheduleError, mostRecentScheduleTime, nextScheduleDelayMs } from "./schedule-times.js";

const controllerKind = { group: "batch", version: "v1", kind: "CronJob" } as const;
/** The Job index the controller adds: a Job under its controller's uid. */
export const jobsByControllerIndex = "jobsByController";
/** When the Job was scheduled, in the CronJob's time zone (RFC 3339). */
export const cronJobScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp";

export interface CronJobControllerOptions extends ControllerContext {
  /** Creates and deletes Jobs, writes CronJob status and Events. Required. */
  client: Client;
  /** Informer over Jobs. Required. */
  jobInformer: ControllerInformer<Job>;
  /** Informer over CronJobs. Required. */
  cronJobInformer: ControllerInformer<CronJob>;
}

type Recorded = { type: "Normal" | "Warning"; reason: string; message: string };

/**
 * The CronJob controller (upstream `pkg/controller/cronjob`, the v2 one):
 * each CronJob waits in the queue until its next activation (on the clock
 * it was given, so a FakeClock runs a day of schedules in milliseconds),
 * then creates the Job for the most recent missed time named
 * `<cronjob>-<minutes since the epoch>` — a name that makes a second create
 * of the same time fail — honouring `suspend`, `startingDeadlineSeconds`,
 * `concurrencyPolicy` (Allow, Forbid, Replace), `timeZone` and the history
 * limits, and keeps `status.active`, `lastScheduleTime` and
 * `lastSuccessfulTime`.
 */
export class CronJobController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #jobInformer: ControllerInformer<Job>;
  readonly #cronJobInformer: ControllerInformer<CronJob>;

  constructor(options: CronJobControllerOptions) {
    const { client, jobInformer, cronJobInformer } = options ?? {};
    this.#harness = defineController({
      name: "cronjob",
      owner: "CronJobController",
      context: options,
      required: { client, jobInformer, cronJobInformer },
      events: { component: "cronjob-controller", client },
      informers: { jobs: jobInformer, cronjobs: cronJobInformer },
      queues: [{ name: "cronjob", workers: 5, sync: (key) => this.syncCronJob(key) }],
    });
    [this.#client, this.#jobInformer, this.#cronJobInformer] = [client, jobInformer, cronJobInformer];
    ensureIndex(jobInformer.getIndexer(), jobsByControllerIndex, (job) => {
      const ref = getControllerOf(job);
      return ref === undefined ? [] : [ref.uid];
    });
    const jobHandler = ownerEventHandler<Job, CronJob>({
      ownerKind: { kind: controllerKind.kind, group: controllerKind.group },
      owners: cronJobInformer.getIndexer(),
      childKind: "Job",
      enqueue: (key, _owner, reason) => this.#harness.enqueue(key, reason),
    });
    jobInformer.addEventHandler(jobHandler);
    cronJobInformer.addEventHandler({
      onAdd: (cj) => this.#harness.enqueue(metaNamespaceKeyFunc(cj), "CronJob added"),
      onUpdate: (old, cj) => this.#updated(old, cj),
      onDelete: (obj) => {
        const cj = objectFromTombstone(obj);
        if (cj?.metadata !== undefined) this.#harness.enqueue(metaNamespaceKeyFunc(cj), "CronJob deleted");
      },
    });
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof jobs): ControllerInformer<Job>;
      forResource(resource: typeof cronJobs): ControllerInformer<CronJob>;
    },
    options: Omit<CronJobControllerOptions, "jobInformer" | "cronJobInformer">,
  ): CronJobController {
    return new CronJobController({
      ...options,
      jobInformer: factory.forResource(jobs),
      cronJobInformer: factory.forResource(cronJobs),
    });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** A changed schedule or time zone requeues at the new next activation; anything else at once. */
  #updated(old: DeepReadonly<CronJob>, cj: DeepReadonly<CronJob>): void {
    const key = metaNamespaceKeyFunc(cj);
    if (old.spec?.schedule === cj.spec?.schedule && old.spec?.timeZone === cj.spec?.timeZone) {
      this.#harness.enqueue(key, "CronJob updated");
      return;
    }
    let schedule: CronSchedule;
    try {
      schedule = parseSchedule(cj);
    } catch {
      this.#harness.recorder.event(
        cj,
        "Warning",
        "UnParseableCronJobSchedule",
        `unparseable schedule for cronjob: ${cj.spec?.schedule}`,
      );
      return;
    }
    const delay = nextScheduleDelayMs(cj, this.#harness.clock.now(), schedule);
    if (delay !== undefined) this.#harness.enqueueAfter(key, Math.max(0, delay), "schedule changed");
  }

  /**
   * Reconciles one CronJob: tidies `status.active` from its Jobs, starts the
   * Job of the most recent missed activation if it may, removes finished
   * Jobs beyond the history limits, writes the status, and asks to be
   * synced again after the next activation.
   */
  async syncCronJob(key: string): Promise<SyncResult> {
    const cached = this.#cronJobInformer.getIndexer().getByKey(key);
    if (cached === undefined) return;
    const cronJob = structuredClone(cached) as CronJob;
    const owned = this.#jobInformer.getIndexer().byIndex(jobsByControllerIndex, cronJob.metadata?.uid ?? "");
    const events: Recorded[] = [];
    let changed = await this.#reconcileActive(cronJob, owned, events);
    let delay: number | undefined;
    let failure: unknown;
    try {
      const result = await this.#startIfDue(cronJob, events);
      delay = result.delay;
      changed ||= result.changed;
    } catch (error) {
      failure = error;
    }
    if (cronJob.metadata?.deletionTimestamp == null)
      changed = (await this.#cleanupFinished(cronJob, owned, events)) || changed;
    for (const event of events) this.#harness.recorder.event(cached, event.type, event.reason, event.message);
    if (changed) {
      const status = cronJob.status ?? {};
      if (status.active?.length === 0) delete status.active;
      await this.#client.resource(cronJobs, cronJob.metadata?.namespace).updateStatus({ ...cronJob, status });
    }
    if (failure !== undefined) throw failure;
    return delay !== undefined ? { requeueAfterMs: Math.max(0, delay) } : undefined;
  }

  /** Drops finished and vanished Jobs from `status.active`, and records the last success. */
  async #reconcileActive(
    cronJob: CronJob,
    owned: readonly DeepReadonly<Job>[],
    events: Recorded[],
  ): Promise<boolean> {
    const status: CronJobStatus = (cronJob.status ??= {});
    let changed = false;
    const children = new Set<string>();
    for (const job of owned) {
      const uid = job.metadata?.uid ?? "";
      children.add(uid);
      const active = (status.active ?? []).some((ref) => ref.uid === uid);
      const finished = finishedType(job);
      if (!active && finished === undefined) {
        events.push({
          type: "Warning",
          reason: "UnexpectedJob",
          message: `Saw a job that the controller did not create or forgot: ${job.metadata?.name}`,
        });
      } else if (active && finished !== undefined) {
        status.active = (status.active ?? []).filter((ref) => ref.uid !== uid);
        events.push({
          type: "Normal",
          reason: "SawCompletedJob",
          message: `Saw completed job: ${job.metadata?.name}, condition: ${finished}`,
        });
        changed = true;
      }
      const completion = job.status?.completionTime;
      if (finished === "Complete" && completion != null) {
        const last = status.lastSuccessfulTime;
        if (last == null || Date.parse(completion) > Date.parse(last)) {
          status.lastSuccessfulTime = completion;
          changed = true;
        }
      }
    }
    for (const ref of [...(status.active ?? [])]) {
      if (children.has(ref.uid ?? "")) continue;
      // The cache may lag: ask the server before calling a Job missing.
      const found = await this.#client
        .resource(jobs, ref.namespace)
        .get(ref.name ?? "")
        .then(() => true)
        .catch((error: unknown) => {
          if (isNotFound(error)) return false;
          throw error;
        });
      if (found) continue;
      events.push({ type: "Normal", reason: "MissingJob", message: `Active job went missing: ${ref.name}` });
      status.active = (status.active ?? []).filter((r) => r.uid !== ref.uid);
      changed = true;
    }
    return changed;
  }

  /** Starts the Job of the most recent activation if one is due; the delay until the next sync. */
  async #startIfDue(
    cronJob: CronJob,
    events: Recorded[],
  ): Promise<{ delay: number | undefined; changed: boolean }> {
    const none = { delay: undefined, changed: false };
    if (cronJob.metadata?.deletionTimestamp != null) return none;
    const zone = cronJob.spec?.timeZone;
    if (zone != null && !isValidTimeZone(zone)) {
      events.push({
        type: "Warning",
        reason: "UnknownTimeZone",
        message: `invalid timeZone: "${zone}": unknown time zone ${zone}`,
      });
      return none;
    }
    if (cronJob.spec?.suspend === true) return none;
    let schedule: CronSchedule;
    try {
      schedule = parseSchedule(cronJob);
    } catch (error) {
      const message = `unparseable schedule: "${cronJob.spec?.schedule}" : ${errorMessage(error)}`;
      events.push({ type: "Warning", reason: "UnparseableSchedule", message });
      return none;
    }
    const now = this.#harness.clock.now();
    const next = () => ({ delay: nextScheduleDelayMs(cronJob, now, schedule), changed: false });
    let scheduled: number | undefined;
    try {
      const recent = mostRecentScheduleTime(cronJob, now, schedule, true);
      if (recent.mostRecent !== undefined && recent.missed === "many")
        events.push({
          type: "Warning",
          reason: "TooManyMissedTimes",
          message:
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
        });
      scheduled = recent.mostRecent;
    } catch (error) {
      if (!(error instanceof InvalidScheduleError)) throw error;
      events.push({
        type: "Warning",
        reason: "InvalidSchedule",
        message: `invalid schedule: ${cronJob.spec?.schedule} : ${error.message}`,
      });
      return none;
    }
    if (scheduled === undefined) return next();
    const deadline = cronJob.spec?.startingDeadlineSeconds;
    if (deadline != null && scheduled + deadline * 1000 < now) {
      events.push({
        type: "Warning",
        reason: "MissSchedule",
        message: `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`,
      });
      return next();
    }
    const name = jobName(cronJob, scheduled);
    const status: CronJobStatus = (cronJob.status ??= {});
    const lastSchedule = status.lastScheduleTime != null ? Date.parse(status.lastScheduleTime) : undefined;
    if ((status.active ?? []).some((ref) => ref.name === name) || lastSchedule === scheduled) return next();
    const policy = cronJob.spec?.concurrencyPolicy ?? "Allow";
    if (policy === "Forbid" && (status.active?.length ?? 0) > 0) {
      events.push({
        type: "Normal",
        reason: "JobAlreadyActive",
        message: "Not starting job because prior execution is running and concurrency policy is Forbid",
      });
      return next();
    }
    let changed = false;
    if (policy === "Replace") {
      for (const ref of [...(status.active ?? [])]) {
        await this.#deleteJob(cronJob, ref.namespace ?? "", ref.name ?? "", ref.uid ?? "", events);
        changed = true;
      }
    }
    const created = await this.#createJob(cronJob, name, scheduled, events);
    if (created === undefined) return { delay: undefined, changed };
    status.active = [...(status.active ?? []), referenceTo(created)];
    status.lastScheduleTime = rfc3339(scheduled);
    return { delay: nextScheduleDelayMs(cronJob, now, schedule), changed: true };
  }

  async #createJob(
    cronJob: CronJob,
    name: string,
    scheduled: number,
    events: Recorded[],
  ): Promise<Job | undefined> {
    const template = cronJob.spec?.jobTemplate;
    const job: Job = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name,
        namespace: cronJob.metadata?.namespace ?? "",
        labels: { ...template?.metadata?.labels },
        annotations: {
          ...template?.metadata?.annotations,
          [cronJobScheduledTimestampAnnotation]: formatInZone(scheduled, cronJob.spec?.timeZone ?? "UTC"),
        },
        ownerReferences: [newControllerRef(cronJob, controllerKind)],
      },
      spec: structuredClone(template?.spec ?? { template: {} }) as JobSpec,
    };
    if (Object.keys(job.metadata?.labels ?? {}).length === 0) delete job.metadata?.labels;
    try {
      const created = await this.#client.resource(jobs, cronJob.metadata?.namespace).create(job);
      events.push({
        type: "Normal",
        reason: "SuccessfulCreate",
        message: `Created job ${created.metadata?.name}`,
      });
      return created;
    } catch (error) {
      if (hasStatusCause(error, "NamespaceTerminating")) return undefined;
      // Someone (an earlier sync whose status write was lost) made it: the name is the lock.
      if (isAlreadyExists(error)) throw error;
      events.push({
        type: "Warning",
        reason: "FailedCreate",
        message: `Error creating job: ${errorMessage(error)}`,
      });
      throw error;
    }
  }

  async #deleteJob(
    cronJob: CronJob,
    namespace: string,
    name: string,
    uid: string,
    events: Recorded[],
  ): Promise<boolean> {
    try {
      await this.#client.resource(jobs, namespace).delete(name, { propagationPolicy: "Background" });
    } catch (error) {
      if (!isNotFound(error)) {
        events.push({
          type: "Warning",
          reason: "FailedDelete",
          message: `Deleted job: ${errorMessage(error)}`,
        });
        return false;
      }
    }
    const status = (cronJob.status ??= {});
    status.active = (status.active ?? []).filter((ref) => ref.uid !== uid);
    events.push({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted job ${name}` });
    return true;
  }

  /** Deletes the oldest finished Jobs beyond `successfulJobsHistoryLimit` and `failedJobsHistoryLimit`. */
  async #cleanupFinished(
    cronJob: CronJob,
    owned: readonly DeepReadonly<Job>[],
    events: Recorded[],
  ): Promise<boolean> {
    const limits = {
      Complete: cronJob.spec?.successfulJobsHistoryLimit,
      Failed: cronJob.spec?.failedJobsHistoryLimit,
    };
    let changed = false;
    for (const type of ["Complete", "Failed"] as const) {
      const limit = limits[type];
      if (limit == null) continue;
      const finished = owned.filter(
        (job) => finishedType(job) === type && job.metadata?.deletionTimestamp == null,
      );
      const excess = finished.length - limit;
      if (excess <= 0) continue;
      finished.sort(byStartTime);
      for (const job of finished.slice(0, excess)) {
        const meta = job.metadata ?? {};
        if (await this.#deleteJob(cronJob, meta.namespace ?? "", meta.name ?? "", meta.uid ?? "", events))
          changed = true;
      }
    }
    return changed;
  }
}

function parseSchedule(cronJob: DeepReadonly<CronJob>): CronSchedule {
  const spec = cronJob.spec?.schedule ?? "";
  // CRON_TZ= / TZ= prefixes are rejected at write time; a stored one still works, as upstream.
  const prefix = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(spec);
  if (prefix !== null) return CronSchedule.parse(prefix[2] as string, prefix[1]);
  return CronSchedule.parse(spec, cronJob.spec?.timeZone ?? "UTC");
}

/** `<cronjob>-<minutes since the epoch of the scheduled time>` (`getJobName`). */
export function jobName(cronJob: DeepReadonly<CronJob>, scheduled: number): string {
  return `${cronJob.metadata?.name ?? ""}-${Math.floor(scheduled / 60_000)}`;
}

function finishedType(job: DeepReadonly<Job>): "Complete" | "Failed" | undefined {
  for (const condition of job.status?.conditions ?? []) {
    if ((condition.type === "Complete" || condition.type === "Failed") && condition.status === "True")
      return condition.type;
  }
  return undefined;
}

function referenceTo(job: Job): ObjectReference {
  const meta = job.metadata ?? {};
  return {
    kind: "Job",
    namespace: meta.namespace ?? "",
    name: meta.name ?? "",
    uid: meta.uid ?? "",
    apiVersion: "batch/v1",
    resourceVersion: meta.resourceVersion ?? "",
  };
}

/** Jobs without a start time first, then by start time, then by name (`byJobStartTime`). */
function byStartTime(a: DeepReadonly<Job>, b: DeepReadonly<Job>): number {
  const [sa, sb] = [a.status?.startTime, b.status?.startTime];
  if (sa == null && sb != null) return -1;
  if (sa != null && sb == null) return 1;
  if (sa === sb) return (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");
  return Date.parse(sa ?? "") - Date.parse(sb ?? "");
}

/** Go's time.RFC1123Z in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`. */
function rfc1123z(instant: number): string {
  return new Date(instant).toUTCString().replace("GMT", "+0000");
}
