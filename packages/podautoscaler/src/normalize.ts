import type { HorizontalPodAutoscalerCondition, HPAScalingRules } from "kubernetes-types/autoscaling/v2.js";

// From a metric's recommendation to the replicas the autoscaler sets (upstream
// horizontal.go's normalizeDesiredReplicas[WithBehaviors]): stabilization
// windows over recent recommendations, the scaling policies' rate limits over
// recent scale events, and min/max, each reported as a condition.

/** A condition to set: type, status, reason and message. */
export type ConditionUpdate = Pick<
  HorizontalPodAutoscalerCondition,
  "type" | "status" | "reason" | "message"
>;

interface Timestamped {
  value: number;
  at: number;
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/** Per autoscaler key: recent recommendations, and recent scale-ups and scale-downs. */
export class ScalingHistory {
  readonly recommendations = new Map<string, Timestamped[]>();
  readonly scaleUpEvents = new Map<string, ScaleEvent[]>();
  readonly scaleDownEvents = new Map<string, ScaleEvent[]>();

  /** The first recommendation of an autoscaler is the current size (upstream `recordInitialRecommendation`). */
  recordInitial(key: string, currentReplicas: number, now: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ value: currentReplicas, at: now }]);
  }

  forget(key: string): void {
    this.recommendations.delete(key);
    this.scaleUpEvents.delete(key);
    this.scaleDownEvents.delete(key);
  }

  /** Records a recommendation, reusing the slot of one older than every window (upstream's sample reuse). */
  #record(key: string, value: number, now: number, isOld: (at: number) => boolean): void {
    const list = this.recommendations.get(key) ?? [];
    const old = list.findLastIndex((rec) => isOld(rec.at));
    if (old >= 0) list[old] = { value, at: now };
    else list.push({ value, at: now });
    this.recommendations.set(key, list);
  }

  /** The highest recommendation of the downscale window (upstream `stabilizeRecommendation`). */
  stabilize(key: string, desired: number, windowMs: number, now: number): number {
    let max = desired;
    const cutoff = now - windowMs;
    for (const rec of this.recommendations.get(key) ?? [])
      if (rec.at >= cutoff && rec.value > max) max = rec.value;
    this.#record(key, desired, now, (at) => at < cutoff);
    return max;
  }

  /**
   * The recommendation held within the lowest of the scale-up window and the
   * highest of the scale-down window (upstream `stabilizeRecommendationWithBehaviors`).
   */
  stabilizeWithBehaviors(
    key: string,
    current: number,
    desired: number,
    upWindowMs: number,
    downWindowMs: number,
    now: number,
  ): { replicas: number; reason: string; message: string } {
    let up = desired;
    let down = desired;
    const upCutoff = now - upWindowMs;
    const downCutoff = now - downWindowMs;
    for (const rec of this.recommendations.get(key) ?? []) {
      if (rec.at > upCutoff) up = Math.min(rec.value, up);
      if (rec.at > downCutoff) down = Math.max(rec.value, down);
    }
    let replicas = current;
    if (replicas < up) replicas = up;
    if (replicas > down) replicas = down;
    this.#record(key, desired, now, (at) => at < upCutoff && at < downCutoff);
    return desired >= current
      ? {
          replicas,
          reason: "ScaleUpStabilized",
          message:
            "recent recommendations were lower than current one, applying the lowest recent recommendation",
        }
      : {
          replicas,
          reason: "ScaleDownStabilized",
          message:
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        };
  }

  /** Records a scale, for the policies' periods (upstream `storeScaleEvent`). */
  storeScaleEvent(
    key: string,
    rules: { up: HPAScalingRules; down: HPAScalingRules },
    from: number,
    to: number,
    now: number,
  ): void {
    const up = to > from;
    const events = (up ? this.scaleUpEvents : this.scaleDownEvents).get(key) ?? [];
    const longest =
      Math.max(0, ...((up ? rules.up : rules.down).policies ?? []).map((p) => p.periodSeconds)) * 1000;
    for (const event of events) if (event.at < now - longest) event.outdated = true;
    const fresh = { change: Math.abs(to - from), at: now, outdated: false };
    const old = events.findLastIndex((event) => event.outdated);
    if (old >= 0) events[old] = fresh;
    else events.push(fresh);
    (up ? this.scaleUpEvents : this.scaleDownEvents).set(key, events);
  }

  /** The replicas added (or removed) within the last `periodSeconds` (upstream `getReplicasChangePerPeriod`). */
  changeInPeriod(events: readonly ScaleEvent[] | undefined, periodSeconds: number, now: number): number {
    const cutoff = now - periodSeconds * 1000;
    let sum = 0;
    for (const event of events ?? []) if (event.at > cutoff) sum += event.change;
    return sum;
  }
}

/** How far a scale-up may go now under the policies (upstream `calculateScaleUpLimitWithScalingRules`). */
export function scaleUpLimit(
  history: ScalingHistory,
  key: string,
  current: number,
  rules: HPAScalingRules,
  now: number,
): number {
  if (rules.selectPolicy === "Disabled") return current;
  const pick = rules.selectPolicy === "Min" ? Math.min : Math.max;
  let result = rules.selectPolicy === "Min" ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  for (const policy of rules.policies ?? []) {
    const start = current - history.changeInPeriod(history.scaleUpEvents.get(key), policy.periodSeconds, now);
    const proposed =
      policy.type === "Pods" ? start + policy.value : Math.ceil(start * (1 + policy.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/** How far a scale-down may go now under the policies (upstream `calculateScaleDownLimitWithBehaviors`). */
export function scaleDownLimit(
  history: ScalingHistory,
  key: string,
  current: number,
  rules: HPAScalingRules,
  now: number,
): number {
  if (rules.selectPolicy !== "Min" && rules.selectPolicy !== "Max" && rules.selectPolicy !== undefined)
    return current;
  // The lowest change ('Min') is the highest count.
  const pick = rules.selectPolicy === "Min" ? Math.max : Math.min;
  let result = rules.selectPolicy === "Min" ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  for (const policy of rules.policies ?? []) {
    const start =
      current + history.changeInPeriod(history.scaleDownEvents.get(key), policy.periodSeconds, now);
    const proposed =
      policy.type === "Pods" ? start - policy.value : Math.trunc(start * (1 - policy.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/**
 * Bounds without a behavior (upstream `convertDesiredReplicasWithRules`):
 * at least minReplicas; at most maxReplicas and twice the current count (or 4).
 */
export function boundsWithRules(
  current: number,
  desired: number,
  min: number,
  max: number,
): { replicas: number; reason: string; message: string } {
  const limit = Math.max(2 * current, 4);
  const [maximum, reason, message] =
    max > limit
      ? [limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"]
      : [max, "TooManyReplicas", "the desired replica count is more than the maximum replica count"];
  if (desired < min)
    return {
      replicas: min,
      reason: "TooFewReplicas",
      message: "the desired replica count is less than the minimum replica count",
    };
  if (desired > maximum) return { replicas: maximum, reason, message };
  return {
    replicas: desired,
    reason: "DesiredWithinRange",
    message: "the desired count is within the acceptable range",
  };
}

/** Bounds with a behavior's rate limits (upstream `convertDesiredReplicasWithBehaviorRate`). */
export function boundsWithBehavior(
  history: ScalingHistory,
  key: string,
  args: {
    current: number;
    desired: number;
    min: number;
    max: number;
    up: HPAScalingRules;
    down: HPAScalingRules;
  },
  now: number,
): { replicas: number; reason: string; message: string } {
  const { current, desired } = args;
  if (desired > current) {
    const limit = Math.max(scaleUpLimit(history, key, current, args.up, now), current);
    const [maximum, reason, message] =
      args.max > limit
        ? [
            limit,
            "ScaleUpLimit",
            "the desired replica count is increasing faster than the maximum scale rate",
          ]
        : [args.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count"];
    if (desired > maximum) return { replicas: maximum, reason, message };
  } else if (desired < current) {
    const limit = Math.min(scaleDownLimit(history, key, current, args.down, now), current);
    const [minimum, reason, message] =
      args.min < limit
        ? [
            limit,
            "ScaleDownLimit",
            "the desired replica count is decreasing faster than the maximum scale rate",
          ]
        : [args.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count"];
    if (desired < minimum) return { replicas: minimum, reason, message };
  }
  return {
    replicas: desired,
    reason: "DesiredWithinRange",
    message: "the desired count is within the acceptable range",
  };
}
