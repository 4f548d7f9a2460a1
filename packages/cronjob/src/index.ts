/** Re-exported from `@reconcile/api`, where cron schedules live (the API server validates them too). */
export { CronSchedule, CronScheduleError, formatInZone, isValidTimeZone } from "@reconcile/api";
export {
  CronJobController,
  type CronJobControllerOptions,
  cronJobScheduledTimestampAnnotation,
  jobName,
  jobsByControllerIndex,
} from "./cronjob-controller.js";
export {
  InvalidScheduleError,
  type MissedSchedules,
  type MostRecent,
  mostRecentScheduleTime,
  nextScheduleDelayMs,
  nextScheduleDeltaMs,
} from "./schedule-times.js";
