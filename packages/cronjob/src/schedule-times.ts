import type { CronSchedule, DeepReadonly } from "@reconcile/api";
import type { CronJob } from "kubernetes-types/batch/v1.js";

// When a CronJob should have started a Job (upstream's
// mostRecentScheduleTime, nextScheduleTime and nextScheduleTimeDuration).

/** Added to every requeue so that the sync lands just after the scheduled minute (`nextScheduleDelta`). */
export const nextScheduleDeltaMs = 100;

export type MissedSchedules = "none" | "few" | "many";

export interface MostRecent {
  earliest: number;
  /** The latest activation at or before now and after `earliest`, if any. */
  mostRecent: number | undefined;
  missed: MissedSchedules;
}

/** A schedule whose activations come less than a second apart (an impossible date, `59 23 31 2 *`). */
export class InvalidScheduleError extends Error {}

/**
 * The latest activation between the CronJob's last schedule (else its
 * creation) and `now`, and whether more than 100 were missed;
 * `withDeadline` moves the start up to `now - startingDeadlineSeconds`.
 */
export function mostRecentScheduleTime(
  cronJob: DeepReadonly<CronJob>,
  now: number,
  schedule: CronSchedule,
  withDeadline: boolean,
): MostRecent {
  let earliest = Date.parse(cronJob.metadata?.creationTimestamp ?? "") || 0;
  const last = cronJob.status?.lastScheduleTime;
  if (last != null) earliest = Date.parse(last);
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  if (withDeadline && deadline != null) earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = schedule.next(earliest);
  if (t1 === undefined) throw new InvalidScheduleError("invalid cron expression");
  const t2 = schedule.next(t1);
  if (now < t1) return { earliest, mostRecent: undefined, missed: "none" };
  if (t2 === undefined || now < t2) return { earliest, mostRecent: t1, missed: "few" };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1)
    throw new InvalidScheduleError("time difference between two schedules is less than 1 second");
  // A rough count: how many intervals of the first two fit between them and now.
  const missedCount = Math.floor(Math.floor((now - t1) / 1000) / between) + 1;
  // Walk from one interval before the estimate, for schedules whose intervals vary.
  let mostRecent: number | undefined;
  const from = t1 + (missedCount - 2) * between * 1000;
  for (let t = schedule.next(from); t !== undefined && t <= now; t = schedule.next(t)) mostRecent = t;
  return { earliest, mostRecent, missed: missedCount > 100 ? "many" : "few" };
}

/** How long until the sync after the next activation. */
export function nextScheduleDelayMs(
  cronJob: DeepReadonly<CronJob>,
  now: number,
  schedule: CronSchedule,
): number | undefined {
  let base: number;
  try {
    const { earliest, mostRecent, missed } = mostRecentScheduleTime(cronJob, now, schedule, false);
    base = mostRecent ?? (missed === "none" ? earliest : now);
  } catch {
    base = now;
  }
  const next = schedule.next(base);
  return next === undefined ? undefined : next + nextScheduleDeltaMs - now;
}
