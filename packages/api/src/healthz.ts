/** The outcome of one named health check: no `error` when it passed. */
export interface HealthOutcome {
  readonly name: string;
  readonly error?: Error | undefined;
}

/** An HTTP answer: status, `text/plain` body. */
export interface HealthResponse {
  status: number;
  body: string;
}

/**
 * The answer of `/<endpoint>`, `/<endpoint>?verbose` and `/<endpoint>/<check>`
 * as component-base's healthz handler writes it, from the checks' outcomes:
 * `ok` when every check passed; else 500 with one `[+]<name> ok` /
 * `[-]<name> failed: reason withheld` line per check and `<endpoint> check
 * failed`; verbose success lists the lines and `<endpoint> check passed`. With
 * `subPath`, only that check counts (404 if there is none by that name). Used
 * by the API server's endpoints and the Manager's.
 */
export function healthzResponse(
  endpoint: string,
  subPath: string,
  verbose: boolean,
  outcomes: readonly HealthOutcome[],
): HealthResponse {
  if (subPath !== "") {
    const outcome = outcomes.find((o) => o.name === subPath);
    if (outcome === undefined) return { status: 404, body: "404 page not found\n" };
    return outcome.error === undefined
      ? { status: 200, body: "ok" }
      : { status: 500, body: `internal server error: ${outcome.error.message}\n` };
  }
  const lines = outcomes.map((o) =>
    o.error === undefined ? `[+]${o.name} ok` : `[-]${o.name} failed: reason withheld`,
  );
  if (outcomes.some((o) => o.error !== undefined)) {
    return { status: 500, body: `${lines.join("\n")}\n${endpoint} check failed\n` };
  }
  if (!verbose) return { status: 200, body: "ok" };
  return { status: 200, body: `${lines.join("\n")}\n${endpoint} check passed\n` };
}
