/** Options of {@link parallelizeUntil}. */
export interface ParallelizeOptions {
  /** How many pieces may run at once (a positive integer). */
  workers: number;
  /** How many pieces there are: `fn` is called with 0 .. pieces − 1 (a non-negative integer). */
  pieces: number;
  /** Pieces a worker takes at a time. Default: 1. */
  chunkSize?: number | undefined;
  /** Stops handing out pieces once aborted; pieces not started are skipped. Default: none. */
  signal?: AbortSignal | undefined;
}

/**
 * Calls `fn` once for every piece with at most `workers` calls in flight
 * (client-go's `ParallelizeUntil`), and settles when every worker has
 * stopped. Aborting the signal skips the pieces not yet started and still
 * resolves. If `fn` throws or rejects, no further pieces start and the
 * promise rejects with the first error once the running pieces have ended.
 */
export async function parallelizeUntil(
  options: ParallelizeOptions,
  fn: (piece: number) => void | Promise<void>,
): Promise<void> {
  const where = "parallelizeUntil";
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${where}: options must be an object, got ${String(options)}`);
  }
  const { workers, pieces, chunkSize = 1, signal } = options;
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`${where}: workers must be a positive integer, got ${String(workers)}`);
  }
  if (!Number.isInteger(pieces) || pieces < 0) {
    throw new RangeError(`${where}: pieces must be a non-negative integer, got ${String(pieces)}`);
  }
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new RangeError(`${where}: chunkSize must be a positive integer, got ${String(chunkSize)}`);
  }
  if (typeof fn !== "function") throw new TypeError(`${where}: fn must be a function`);
  if (pieces === 0) return;

  const chunks = Math.ceil(pieces / chunkSize);
  let nextChunk = 0;
  let failed = false;
  let firstError: unknown;

  const worker = async () => {
    while (nextChunk < chunks && !failed && !signal?.aborted) {
      const start = nextChunk++ * chunkSize;
      const end = Math.min(start + chunkSize, pieces);
      for (let piece = start; piece < end; piece++) {
        if (failed || signal?.aborted) return;
        try {
          const result = fn(piece);
          // Only asynchronous pieces cost an await; synchronous ones run straight through.
          if (result !== undefined) await result;
        } catch (error) {
          if (!failed) {
            failed = true;
            firstError = error;
          }
          return;
        }
      }
    }
  };

  const running: Promise<void>[] = [];
  for (let i = 0; i < Math.min(workers, chunks); i++) running.push(worker());
  await Promise.all(running);
  if (failed) throw firstError;
}
