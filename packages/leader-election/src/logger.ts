/**
 * Where the elector reports what it does, in pino's `(obj, msg)` shape, so a
 * pino logger (or `console`-backed adapter) fits as is. Default: silent.
 */
export interface LeaderElectionLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
  debug?(obj: Record<string, unknown>, msg: string): void;
}

export const silentLogger: LeaderElectionLogger = { info() {}, error() {} };
