import { type Logger, noopLogger } from "@reconcile/api";

/**
 * The logger shape the elector took before it took `@reconcile/api`'s
 * `Logger`: `info` and `error`, with `debug` and `warn` optional. A full
 * `Logger` is one.
 * @deprecated Use `Logger` from `@reconcile/api` (or `@reconcile/controller`).
 */
export type LeaderElectionLogger = Pick<Logger, "info" | "error"> & Partial<Omit<Logger, "info" | "error">>;

/** A full `Logger` from either shape: the missing methods of an old-style logger drop their records. */
export function completeLogger(logger: Logger | LeaderElectionLogger | undefined): Logger {
  if (logger === undefined) return noopLogger;
  if (
    typeof logger.debug === "function" &&
    typeof logger.warn === "function" &&
    typeof logger.child === "function"
  ) {
    return logger as Logger;
  }
  const partial = logger;
  return {
    debug: (obj, msg) => partial.debug?.(obj, msg),
    info: (obj, msg) => partial.info(obj, msg),
    warn: (obj, msg) => partial.warn?.(obj, msg),
    error: (obj, msg) => partial.error(obj, msg),
    child: (bindings) => partial.child?.(bindings) ?? completeLogger(partial),
  };
}
