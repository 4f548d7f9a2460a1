import type { Logger } from "@reconcile/controller";

/** pino's numeric levels. */
const levels = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export interface JsonLoggerOptions {
  /** Where each record goes, one JSON line. Default: `process.stderr`. */
  write?: ((line: string) => void) | undefined;
  /** Records below this level are dropped. Default `info`. */
  level?: keyof typeof levels | undefined;
  /** Bindings of every record, e.g. `{ component: "kube-controller-manager" }`. */
  bindings?: Record<string, unknown> | undefined;
  /** Default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * A `Logger` writing pino's line format (`{"level":30,"time":…,"msg":…,
 * …bindings, …fields}`), so pino tooling (`pino-pretty`, log shippers)
 * reads it, without depending on pino. Pass a real pino logger instead
 * where one is at hand: it has the same call shape.
 */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const threshold = levels[options.level ?? "info"];
  const now = options.now ?? Date.now;
  const make = (bindings: Record<string, unknown>): Logger => {
    const log = (level: keyof typeof levels) => (obj: Record<string, unknown>, msg?: string) => {
      if (levels[level] < threshold) return;
      const record = {
        level: levels[level],
        time: now(),
        ...bindings,
        ...obj,
        ...(msg === undefined ? {} : { msg }),
      };
      write(`${JSON.stringify(record, errorsAsText)}\n`);
    };
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make(options.bindings ?? {});
}

function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? { type: value.name, message: value.message } : value;
}
