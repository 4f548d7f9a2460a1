import type * as http from "node:http";
import type { HandlerContext } from "./context.js";

/** One named check of `/healthz`, `/livez` or `/readyz`: resolves when healthy, rejects with why not. */
interface Check {
  name: string;
  run(): Promise<void>;
}

const healthy = async () => {};

/**
 * kube-apiserver's health endpoints (component-base's healthz handler): `ok`,
 * or 500 with a `[+]name ok` / `[-]name failed: reason withheld` line per
 * check and `<endpoint> check failed`; `?verbose` lists the lines on success
 * too; `/<endpoint>/<check>` runs one check (404 if there is none by that
 * name). With etcd storage, every endpoint has the `etcd` check and
 * `/readyz` `etcd-readiness`, each a read of etcd within 2 s.
 */
export async function serveHealth(
  context: HandlerContext,
  endpoint: "healthz" | "livez" | "readyz",
  name: string | undefined,
  verbose: boolean,
  response: http.ServerResponse,
): Promise<void> {
  const storage = context.registry.storageHealth;
  const checks: Check[] = [
    { name: "ping", run: healthy },
    { name: "log", run: healthy },
  ];
  if (storage !== undefined) {
    checks.push({ name: "etcd", run: storage });
    if (endpoint === "readyz") checks.push({ name: "etcd-readiness", run: storage });
  }
  const answer = (status: number, body: string) => {
    response.writeHead(status, {
      "Content-Type": "text/plain; charset=utf-8",
      "X-Content-Type-Options": "nosniff",
    });
    response.end(body);
  };
  if (name !== undefined) {
    const check = checks.find((c) => c.name === name);
    if (check === undefined) return answer(404, "404 page not found\n");
    const error = await outcome(check);
    return error === undefined ? answer(200, "ok") : answer(500, `internal server error: ${error.message}\n`);
  }
  const outcomes = await Promise.all(checks.map(outcome));
  const lines = checks.map((check, i) =>
    outcomes[i] === undefined ? `[+]${check.name} ok` : `[-]${check.name} failed: reason withheld`,
  );
  if (outcomes.some((error) => error !== undefined)) {
    return answer(500, `${lines.join("\n")}\n${endpoint} check failed\n`);
  }
  answer(200, verbose ? `${lines.join("\n")}\n${endpoint} check passed\n` : "ok");
}

async function outcome(check: Check): Promise<Error | undefined> {
  try {
    await check.run();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
