import {
  ageColumn,
  ageOf,
  column,
  type Loose,
  nameColumn,
  nameOf,
  num,
  type Printer,
  templateCells,
} from "./columns.js";
import { humanDuration } from "./human-duration.js";

// The workload kinds' tables (apps, batch): each ends with its pod template's wide columns.

export const deploymentPrinter: Printer = {
  columns: [
    nameColumn,
    column("Ready", "string", "Number of the pod with ready state."),
    column(
      "Up-to-date",
      "integer",
      "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
    ),
    column("Available", "integer", "Total number of available pods (ready for at least minReadySeconds)."),
    ageColumn,
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
    column("Selector", "string", "Label selector for pods.", 1),
  ],
  cells(deployment: Loose, now) {
    return [
      nameOf(deployment),
      `${num(deployment.status?.readyReplicas)}/${num(deployment.spec?.replicas ?? 1)}`,
      num(deployment.status?.updatedReplicas),
      num(deployment.status?.availableReplicas),
      ageOf(deployment, now),
      ...templateCells(deployment),
    ];
  },
};

export const replicaSetPrinter: Printer = {
  columns: [
    nameColumn,
    column("Desired", "integer", "Number of desired pods."),
    column("Current", "integer", "Number of actually running pods."),
    column("Ready", "integer", "Number of ready pods."),
    ageColumn,
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
    column("Selector", "string", "Label selector for pods.", 1),
  ],
  cells(rs: Loose, now) {
    return [
      nameOf(rs),
      num(rs.spec?.replicas ?? 1),
      num(rs.status?.replicas),
      num(rs.status?.readyReplicas),
      ageOf(rs, now),
      ...templateCells(rs),
    ];
  },
};

export const jobPrinter: Printer = {
  columns: [
    nameColumn,
    column("Status", "string", "Status of the job."),
    column("Completions", "string", "The completed pods against the desired ones."),
    column("Duration", "string", "Time the job took, or has been running."),
    ageColumn,
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
    column("Selector", "string", "Label selector for pods.", 1),
  ],
  cells(job: Loose, now) {
    const succeeded = num(job.status?.succeeded);
    const completions = job.spec?.completions;
    const parallelism = num(job.spec?.parallelism ?? 1);
    const completionText =
      typeof completions === "number"
        ? `${succeeded}/${completions}`
        : parallelism > 1
          ? `${succeeded}/1 of ${parallelism}`
          : `${succeeded}/1`;
    const start = Date.parse(job.status?.startTime ?? "");
    const end = Date.parse(job.status?.completionTime ?? "");
    const duration = Number.isNaN(start) ? "" : humanDuration((Number.isNaN(end) ? now : end) - start);
    return [nameOf(job), jobStatus(job), completionText, duration, ageOf(job, now), ...templateCells(job)];
  },
};

/** The STATUS of a job, as kubectl 1.32 prints it. */
function jobStatus(job: Loose): string {
  const conditions: Loose[] = Array.isArray(job.status?.conditions) ? job.status.conditions : [];
  const holds = (type: string) => conditions.some((c) => c?.type === type && c?.status === "True");
  if (holds("Complete")) return "Complete";
  if (holds("Failed")) return "Failed";
  if (job.metadata?.deletionTimestamp) return "Terminating";
  if (holds("SuccessCriteriaMet")) return "SuccessCriteriaMet";
  if (holds("FailureTarget")) return "FailureTarget";
  if (job.spec?.suspend === true) return "Suspended";
  return "Running";
}
