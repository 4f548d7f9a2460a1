/**
 * The one logging interface of reconcile: pino's `(obj, msg)` call shape and
 * `child(bindings)`, so a pino logger fits as is. Every component that logs
 * takes one as its `logger` option and defaults to {@link noopLogger}; no
 * package writes to the console or imports a logging library. Records use
 * controller-runtime's keys where they apply (`controller`, `namespace`,
 * `name`, `reconcileID`) and `err` for an error.
 */
export interface Logger {
  debug(obj: Record<string, unknown>, msg?: string): void;
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
  /** A logger that adds `bindings` to every record. */
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything: the default everywhere. */
export const noopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return noopLogger;
  },
};
