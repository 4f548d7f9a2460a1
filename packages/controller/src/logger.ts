/**
 * The logging interface controllers write to: pino's `(obj, msg)` call shape
 * and `child(bindings)`, so a pino logger fits as is. The default is
 * {@link noopLogger}; core packages never import a logging library.
 */
export interface Logger {
  debug(obj: Record<string, unknown>, msg?: string): void;
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
  /** A logger that adds `bindings` to every record. */
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything. */
export const noopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return noopLogger;
  },
};
