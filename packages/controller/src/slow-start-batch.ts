/** The first batch size of {@link slowStartBatch} in the controllers here (`SlowStartInitialBatchSize`). */
export const slowStartInitialBatchSize = 1;

/** What {@link slowStartBatch} reports: how many calls succeeded and the first error, if any. */
export interface SlowStartBatchResult {
  successes: number;
  /** The first error of the first batch that had a failure; undefined when every call succeeded. */
  error: unknown;
}

/**
 * Calls `fn` `count` times in batches that double in size (`initialBatchSize`,
 * then twice that, …), each batch running concurrently and awaited as a
 * whole. It stops after the first batch with a failure, so a call that is
 * doomed (quota exceeded, namespace terminating) is not hammered `count`
 * times. Upstream: `slowStartBatch` in the ReplicaSet controller.
 *
 * `fn` receives the index of the call (0-based) across all batches.
 */
export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: (index: number) => Promise<void>,
): Promise<SlowStartBatchResult> {
  if (!Number.isInteger(count) || count < 0) {
    throw new RangeError(`slowStartBatch: count must be a non-negative integer, got ${count}`);
  }
  if (!Number.isInteger(initialBatchSize) || initialBatchSize < 1) {
    throw new RangeError(
      `slowStartBatch: initialBatchSize must be a positive integer, got ${initialBatchSize}`,
    );
  }
  let remaining = count;
  let successes = 0;
  let started = 0;
  for (let batchSize = Math.min(remaining, initialBatchSize); batchSize > 0; ) {
    const calls: Promise<void>[] = [];
    for (let i = 0; i < batchSize; i++) calls.push(invoke(fn, started++));
    const outcomes = await Promise.allSettled(calls);
    let firstError: { error: unknown } | undefined;
    for (const outcome of outcomes) {
      if (outcome.status === "fulfilled") successes++;
      else firstError ??= { error: outcome.reason };
    }
    if (firstError !== undefined) return { successes, error: firstError.error };
    remaining -= batchSize;
    batchSize = Math.min(2 * batchSize, remaining);
  }
  return { successes, error: undefined };
}

// A synchronous throw from fn counts as that call's failure, like a rejection.
async function invoke(fn: (index: number) => Promise<void>, index: number): Promise<void> {
  await fn(index);
}
