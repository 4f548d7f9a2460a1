/** One named check on `/healthz` (component-base's `HealthChecker`). */
export interface HealthCheck {
  readonly name: string;
  /** Undefined (or nothing) when healthy, else why not. */
  check(): Error | undefined;
}

/** An HTTP answer: status, `text/plain` body. */
export interface HealthResponse {
  status: number;
  body: string;
}

/**
 * Answers `/<endpoint>`, `/<endpoint>?verbose` and `/<endpoint>/<check>` as
 * component-base's healthz handler does: `ok` when every check passes; else
 * 500 with one `[+]<name> ok` / `[-]<name> failed: reason withheld` line per
 * check and `<endpoint> check failed`; verbose success lists the lines and
 * `<endpoint> check passed`. A sub-path runs that one check (404 if unknown).
 */
export function healthResponse(
  endpoint: string,
  subPath: string,
  verbose: boolean,
  checks: readonly HealthCheck[],
): HealthResponse {
  if (subPath !== "") {
    const check = checks.find((c) => c.name === subPath);
    if (check === undefined) return { status: 404, body: "404 page not found\n" };
    const error = runCheck(check);
    return error === undefined
      ? { status: 200, body: "ok" }
      : { status: 500, body: `internal server error: ${error.message}\n` };
  }
  const lines: string[] = [];
  let failed = false;
  for (const check of checks) {
    const error = runCheck(check);
    if (error === undefined) {
      lines.push(`[+]${check.name} ok`);
    } else {
      failed = true;
      lines.push(`[-]${check.name} failed: reason withheld`);
    }
  }
  if (failed) return { status: 500, body: `${lines.join("\n")}\n${endpoint} check failed\n` };
  if (!verbose) return { status: 200, body: "ok" };
  return { status: 200, body: `${lines.join("\n")}\n${endpoint} check passed\n` };
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
