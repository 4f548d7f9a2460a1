import { rfc3339 } from "@reconcile/api";
import type {
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerCondition,
  MetricStatus,
} from "kubernetes-types/autoscaling/v2.js";
import type { ConditionUpdate } from "./normalize.js";

type HPA = HorizontalPodAutoscaler;

/** Sets a condition, keeping its transition time when its status did not change (upstream `setConditionInList`). */
export function setCondition(hpa: HPA, now: number, update: ConditionUpdate): void {
  const status = (hpa.status ??= { desiredReplicas: 0 });
  const conditions = (status.conditions ??= []);
  const existing = conditions.find((c) => c.type === update.type);
  if (existing === undefined) {
    conditions.push({ ...update, lastTransitionTime: rfc3339(now) } as HorizontalPodAutoscalerCondition);
    return;
  }
  if (existing.status !== update.status) existing.lastTransitionTime = rfc3339(now);
  existing.status = update.status;
  if (update.reason !== undefined) existing.reason = update.reason;
  if (update.message !== undefined) existing.message = update.message;
}

/** The status after a look (upstream `setStatus`): replicas, metrics, conditions, and the scale time on a rescale. */
export function setStatus(
  hpa: HPA,
  current: number,
  desired: number,
  metrics: MetricStatus[],
  rescale: boolean,
  now: number,
): void {
  const previous = hpa.status;
  hpa.status = {
    currentReplicas: current,
    desiredReplicas: desired,
    ...(rescale
      ? { lastScaleTime: rfc3339(now) }
      : previous?.lastScaleTime !== undefined
        ? { lastScaleTime: previous.lastScaleTime }
        : {}),
    ...(metrics.length > 0 ? { currentMetrics: metrics } : {}),
    ...(previous?.conditions !== undefined ? { conditions: previous.conditions } : {}),
  };
}

export function milliText(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
