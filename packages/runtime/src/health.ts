import { type HealthResponse, healthzResponse } from "@reconcile/api";

export type { HealthResponse };
/** One named check on `/healthz` (component-base's `HealthChecker`). */
export interface HealthCheck {
  readonly name: string;
  /** Undefined (or nothing) when healthy, else why not. */
  check(): Error | undefined;
}

/**
 * Answers `/<endpoint>`, `/<endpoint>?verbose` and `/<endpoint>/<check>` as
 * component-base's healthz handler does (`healthzResponse` of
 * `@reconcile/api` writes the text). A sub-path runs that one check only.
 */
export function healthResponse(
  endpoint: string,
  subPath: string,
  verbose: boolean,
  checks: readonly HealthCheck[],
): HealthResponse {
  const chosen = subPath === "" ? checks : checks.filter((c) => c.name === subPath);
  return healthzResponse(
    endpoint,
    subPath,
    verbose,
    chosen.map((check) => ({ name: check.name, error: runCheck(check) })),
  );
}

/** A check that always passes: upstream's `NamedPingChecker`, one per started controller. */
export function pingCheck(name: string): HealthCheck {
  return { name, check: () => undefined };
}

function runCheck(check: HealthCheck): Error | undefined {
  try {
    return check.check() ?? undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
