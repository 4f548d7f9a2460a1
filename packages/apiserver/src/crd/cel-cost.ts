/**
 * CEL cost accounting for CRD validation rules, with apiextensions-apiserver's limits.
 *
 * cel-go counts cost units as it evaluates; the CEL library used here has no such hook, so the runtime cost is
 * one unit per evaluated expression node (comprehension bodies count once per iteration) plus the elements
 * that library functions traverse. The numbers approximate cel-go's, not reproduce them; the limits are
 * upstream's.
 */

/** Cost one rule evaluation may spend (apiextensions' PerCallLimit). */
export const PER_CALL_LIMIT = 1_000_000;
/** Cost all rules of one custom object validation share (RuntimeCELCostBudget). */
export const RUNTIME_COST_BUDGET = 10_000_000;

/** The remaining runtime budget of one object's validation. */
export class CostBudget {
  remaining: number;
  /** Set once a rule ran out of budget: no further rules run. */
  exhausted = false;
  constructor(total = RUNTIME_COST_BUDGET) {
    this.remaining = total;
  }
}

/** Thrown inside an evaluation that passed its per-call limit; cel-go's interrupt text. */
export class CostLimitExceeded extends Error {
  constructor() {
    super("operation cancelled: actual cost limit exceeded");
    this.name = "CostLimitExceeded";
  }
}

/** The cost of one evaluation in progress. */
export class CallCost {
  actual = 0;
  exceeded = false;
  constructor(readonly limit: number) {}
}

let current: CallCost | undefined;

/**
 * Runs `evaluate` while counting its cost. Evaluation is synchronous, so one counter at a time suffices. The
 * limit is checked as cost accrues; a comprehension that swallows the thrown error still leaves `exceeded`
 * set, so the caller must look at it rather than at the result alone.
 */
export function withCost<T>(
  limit: number,
  evaluate: () => T,
): { result?: T; error?: unknown; cost: CallCost } {
  const cost = new CallCost(limit);
  const previous = current;
  current = cost;
  try {
    return { result: evaluate(), cost };
  } catch (error) {
    return { error, cost };
  } finally {
    current = previous;
  }
}

/** Adds cost to the evaluation in progress (library functions charge the elements they traverse). */
export function chargeCost(units: number): void {
  if (!current) return;
  current.actual += Math.ceil(units);
  if (current.actual > current.limit) {
    current.exceeded = true;
    throw new CostLimitExceeded();
  }
}
