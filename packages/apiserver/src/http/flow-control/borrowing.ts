import type { Clock } from "@reconcile/clock";

// Seat borrowing between priority levels, as kube-apiserver's APF config
// controller does it (k8s.io/apiserver/pkg/util/flowcontrol: apf_controller.go
// `updateBorrowingLocked`, conc_alloc.go, fairqueuing's integrator): every
// level's seat demand (seats executing plus seats waiting) is integrated over
// time; every 10 s each level's demand statistics are taken and the
// server's nominal seats are dealt out again in proportion to the smoothed
// demand, each level kept between its nominal limit less what it lends and
// its nominal limit plus what it may borrow.

/** How often the current limits are derived again (upstream's `borrowingAdjustmentPeriod`). */
export const borrowingAdjustmentPeriodMs = 10_000;

/** The weight of the past in the smoothed demand (upstream's `seatDemandSmoothingCoefficient`). */
const seatDemandSmoothingCoefficient = 0.977;

/** What an integrator saw since it was last reset. */
export interface IntegratorResults {
  /** Seconds integrated over. */
  readonly duration: number;
  readonly average: number;
  /** The standard deviation; NaN when undefined. */
  readonly deviation: number;
  readonly min: number;
  readonly max: number;
}

/**
 * The time-weighted average, deviation and extremes of a value that changes
 * in steps (upstream's `fairqueuing.Integrator`): a level's seat demand.
 */
export class SeatDemandIntegrator {
  readonly #clock: Clock;
  #value = 0;
  #since: number;
  #seconds = 0;
  #integral = 0;
  #integralOfSquares = 0;
  #min = 0;
  #max = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#since = clock.now();
  }

  /** The value from now on. */
  set(value: number): void {
    this.#advance();
    this.#value = value;
    if (value < this.#min) this.#min = value;
    if (value > this.#max) this.#max = value;
  }

  /** What was seen since the last reset; the next period starts now, from the value now. */
  reset(): IntegratorResults {
    this.#advance();
    const seconds = this.#seconds;
    const average = seconds > 0 ? this.#integral / seconds : Number.NaN;
    const variance = seconds > 0 ? this.#integralOfSquares / seconds - average * average : Number.NaN;
    const results = {
      duration: seconds,
      average,
      deviation: variance >= 0 ? Math.sqrt(variance) : Number.NaN,
      min: this.#min,
      max: this.#max,
    };
    this.#seconds = 0;
    this.#integral = 0;
    this.#integralOfSquares = 0;
    this.#min = this.#value;
    this.#max = this.#value;
    return results;
  }

  #advance(): void {
    const now = this.#clock.now();
    const seconds = (now - this.#since) / 1000;
    this.#since = now;
    this.#seconds += seconds;
    this.#integral += this.#value * seconds;
    this.#integralOfSquares += this.#value * this.#value * seconds;
  }
}

/** A level's seat demand statistics, taken every period (upstream's `seatDemandStats`). */
export class SeatDemandStats {
  average = 0;
  deviation = 0;
  highWatermark = 0;
  smoothed = 0;

  update(results: IntegratorResults): void {
    this.highWatermark = Math.round(results.max);
    if (results.duration <= 0) return;
    const deviation = Number.isNaN(results.deviation) ? 0 : results.deviation;
    this.average = results.average;
    this.deviation = deviation;
    const envelope = results.average + deviation;
    this.smoothed = Math.max(
      envelope,
      seatDemandSmoothingCoefficient * this.smoothed + (1 - seatDemandSmoothingCoefficient) * envelope,
    );
  }
}

/** One level's limits and demand, as the borrowing sees and sets them. */
export interface LevelLimits {
  readonly exempt: boolean;
  /** Seats by the level's share of the server's (`nominal_limit_seats`). */
  nominal: number;
  /** The nominal limit less what the level lends (`lower_limit_seats`). */
  lower: number;
  /** The nominal limit plus what the level may borrow (`upper_limit_seats`). */
  upper: number;
  /** The limit now (`current_limit_seats`). */
  current: number;
  /** What the last adjustment aimed at (`target_seats`). */
  target: number;
  readonly stats: SeatDemandStats;
  readonly demand: SeatDemandIntegrator;
}

/**
 * Derives every level's current limit again (upstream's `updateBorrowingLocked`):
 * each level's demand statistics are taken; an exempt level keeps what its
 * demand peaked at; the limited levels share the nominal seats (the sum of
 * every level's nominal limit) in proportion to their smoothed demand, each
 * within its bounds. Returns the fair fraction (`seat_fair_frac`).
 */
export function updateBorrowing(levels: readonly LevelLimits[]): number {
  const limited: LevelLimits[] = [];
  const items: AllocationItem[] = [];
  let nominalSum = 0;
  let exemptSum = 0;
  let lowerSum = 0;
  let floorSum = 0;
  for (const level of levels) {
    nominalSum += level.nominal;
    level.stats.update(level.demand.reset());
    const highWatermark = level.stats.highWatermark;
    if (level.exempt) {
      level.current = Math.max(level.lower, highWatermark);
      level.target = level.current;
      exemptSum += level.current;
      continue;
    }
    // The lesser of the demand's peak and the nominal limit, but never below what the level keeps.
    const floor = Math.max(level.lower, Math.min(level.nominal, highWatermark));
    level.target = Math.max(floor, level.stats.smoothed);
    limited.push(level);
    items.push({ lowerBound: floor, upperBound: level.upper, target: level.target });
    lowerSum += level.lower;
    floorSum += floor;
  }
  // What the exempt levels took leaves the rest to the limited ones.
  const remaining = nominalSum - exemptSum;
  if (remaining <= lowerSum) {
    for (const level of limited) level.current = level.lower;
    return 0;
  }
  if (remaining <= floorSum) {
    const share = (remaining - lowerSum) / (floorSum - lowerSum);
    for (const [i, level] of limited.entries())
      level.current = level.lower + Math.round((items[i]!.lowerBound - level.lower) * share);
    return 0;
  }
  // No allocation fits the bounds: the limits stay as they are.
  const solved = computeConcurrencyAllocation(nominalSum, items);
  if (solved === undefined) return 0;
  for (const [i, level] of limited.entries()) level.current = Math.round(solved.allocations[i]!);
  return solved.fairFrac;
}

/** One limited level in the allocation: its bounds and what it would like. */
export interface AllocationItem {
  readonly lowerBound: number;
  readonly upperBound: number;
  readonly target: number;
}

const minTarget = 0.001;
const epsilon = 0.0000001;

/**
 * The allocations summing to `requiredSum` where each is its target times
 * one fair proportion, unless its bounds hold it (upstream's
 * `computeConcurrencyAllocation`, 1.32); undefined where no allocation fits
 * the bounds.
 */
export function computeConcurrencyAllocation(
  requiredSum: number,
  items: readonly AllocationItem[],
): { allocations: number[]; fairFrac: number } | undefined {
  if (requiredSum < 0) return undefined;
  let lowSum = 0;
  let highSum = 0;
  let targetSum = 0;
  let lowMin = Number.MAX_VALUE;
  let lowMax = 0;
  let highMin = Number.MAX_VALUE;
  let highMax = 0;
  const relative: { target: number; lower: number; upper: number }[] = [];
  for (const item of items) {
    if (item.lowerBound < 0 || item.target < item.lowerBound || item.upperBound < item.lowerBound)
      return undefined;
    const target = Math.max(item.target, minTarget);
    lowSum += item.lowerBound;
    highSum += item.upperBound;
    targetSum += target;
    const entry = { target, lower: item.lowerBound / target, upper: item.upperBound / target };
    lowMin = Math.min(lowMin, entry.lower);
    lowMax = Math.max(lowMax, entry.lower);
    highMin = Math.min(highMin, entry.upper);
    highMax = Math.max(highMax, entry.upper);
    relative.push(entry);
  }
  if (lowMax > 1 || lowSum - requiredSum > epsilon || requiredSum - highSum > epsilon) return undefined;
  if (requiredSum === 0) return { allocations: items.map(() => 0), fairFrac: 0 };
  if (lowSum - requiredSum > -epsilon)
    return { allocations: items.map((item) => item.lowerBound), fairFrac: lowMin };
  if (requiredSum - highSum > -epsilon)
    return { allocations: items.map((item) => item.upperBound), fairFrac: highMax };
  let fairProp = requiredSum / targetSum;
  if (lowMax <= fairProp && fairProp <= highMin)
    return { allocations: relative.map((entry) => entry.target * fairProp), fairFrac: fairProp };
  // Some bounds hold: raise the proportion from the lowest bound, bound by bound.
  const bounds = relative
    .flatMap((entry, index) => [
      { bound: entry.lower, index, lower: true },
      { bound: entry.upper, index, lower: false },
    ])
    .sort((a, b) => a.bound - b.bound);
  let sumSoFar = lowSum;
  fairProp = lowMin;
  let sensitiveTargetSum = 0;
  let sensitiveClasses = 0;
  let deltaTargetSum = 0;
  let deltaClasses = 0;
  let next = 0;
  while (sumSoFar < requiredSum) {
    let nextBound = 0;
    for (;;) {
      sensitiveTargetSum += deltaTargetSum;
      sensitiveClasses += deltaClasses;
      if (next >= bounds.length) return undefined;
      const { bound, index, lower } = bounds[next]!;
      nextBound = bound;
      deltaClasses = lower ? 1 : -1;
      deltaTargetSum = lower ? relative[index]!.target : -relative[index]!.target;
      next++;
      if (nextBound > fairProp) break;
    }
    if (sensitiveClasses === 0) {
      fairProp = nextBound;
      continue;
    }
    const nextProp = fairProp + (requiredSum - sumSoFar) / sensitiveTargetSum;
    if (nextProp <= nextBound) {
      fairProp = nextProp;
      break;
    }
    sumSoFar += (nextBound - fairProp) * sensitiveTargetSum;
    fairProp = nextBound;
  }
  return {
    allocations: items.map((item, index) =>
      Math.max(item.lowerBound, Math.min(item.upperBound, fairProp * relative[index]!.target)),
    ),
    fairFrac: fairProp,
  };
}
