/**
 * The one lifecycle shape of reconcile: everything long-running has
 * `run({ signal })`, which resolves only after the component has fully
 * stopped (timers cleared, watches closed, workers drained) once `signal`
 * aborts. A manager's runnables (controller-runtime's `manager.Runnable`,
 * kube-controller-manager's controllers) are the same shape with a name;
 * a controller's `run` also takes `workers` (`RunOptions & { workers }`).
 */
export interface Runnable<Options extends RunOptions = RunOptions> {
  /** Names it in a manager's logs and health checks. */
  readonly name?: string | undefined;
  /** Under a manager: run only while it leads (every controller). Default true. */
  readonly needLeaderElection?: boolean | undefined;
  run(options: Options): Promise<void>;
}

/** What every `run` takes. */
export interface RunOptions {
  /** Stops the component; `run` settles after it has fully stopped. Required. */
  signal: AbortSignal;
}

/**
 * The signal of a `run` call that takes `{ signal }` or, as some entry points
 * did before `{ signal }` was the one shape, the signal itself (deprecated).
 * Anything without a `signal` property is taken to be the signal.
 */
export function runSignal(options: RunOptions | AbortSignal): AbortSignal {
  const signal = "signal" in options ? options.signal : options;
  if (typeof signal !== "object" || signal === null || typeof signal.aborted !== "boolean") {
    throw new TypeError(`run needs { signal: AbortSignal }, got ${String(signal)}`);
  }
  return signal;
}
