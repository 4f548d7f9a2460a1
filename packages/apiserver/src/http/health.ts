import type * as http from "node:http";
import { healthzResponse } from "@reconcile/api";
import type { HandlerContext } from "./context.js";

/** One named check of `/healthz`, `/livez` or `/readyz`: resolves when healthy, rejects with why not. */
interface Check {
  name: string;
  run(): Promise<void>;
}

const healthy = async () => {};

/**
 * kube-apiserver's health endpoints, written by `healthzResponse` (component-base's
 * healthz text); `/<endpoint>/<check>` runs that one check. With etcd
 * storage, every endpoint has the `etcd` check and `/readyz`
 * `etcd-readiness` too: one read of etcd within 2 s answers both.
 */
export async function serveHealth(
  context: HandlerContext,
  endpoint: "healthz" | "livez" | "readyz",
  name: string | undefined,
  verbose: boolean,
  response: http.ServerResponse,
): Promise<void> {
  const storageHealth = context.registry.storageHealth;
  let read: Promise<void> | undefined;
  const storage = storageHealth && (() => (read ??= storageHealth()));
  const checks: Check[] = [
    { name: "ping", run: healthy },
    { name: "log", run: healthy },
  ];
  if (storage !== undefined) {
    checks.push({ name: "etcd", run: storage });
    if (endpoint === "readyz") checks.push({ name: "etcd-readiness", run: storage });
  }
  const chosen = name === undefined ? checks : checks.filter((check) => check.name === name);
  const outcomes = await Promise.all(
    chosen.map(async (check) => ({ name: check.name, error: await outcome(check) })),
  );
  const answer = healthzResponse(endpoint, name ?? "", verbose, outcomes);
  response.writeHead(answer.status, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
  });
  response.end(answer.body);
}

async function outcome(check: Check): Promise<Error | undefined> {
  try {
    await check.run();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
