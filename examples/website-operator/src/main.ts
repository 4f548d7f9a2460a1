// The Website operator as a program.
//
//   npm start                       against the cluster of your kubeconfig (KUBECONFIG, ~/.kube/config)
//   npm start -- --embedded         against an embedded API server with the Website CRD installed;
//                                   prints a kubeconfig path for kubectl
//   --metrics-port N                where /metrics, /healthz and /readyz are served (default 8080)
//
// Leader election on the Lease `website-operator` in `default`: run two and one waits.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Client, createHttpClient } from "@reconcile/client";
import type { Logger } from "@reconcile/controller";
import { Manager } from "@reconcile/runtime";
import { startTestEnvironment } from "@reconcile/runtime/envtest";
import { setupWebsiteController } from "./operator.js";
import { websiteCRD } from "./website.js";

const { values } = parseArgs({
  options: {
    embedded: { type: "boolean", default: false },
    "metrics-port": { type: "string", default: "8080" },
  },
});

const stop = new AbortController();
process.once("SIGINT", () => stop.abort());
process.once("SIGTERM", () => stop.abort());

let client: Client;
let stopEmbedded = async () => {};
if (values.embedded) {
  const env = await startTestEnvironment({ crds: [websiteCRD] });
  const path = join(tmpdir(), `website-operator-${process.pid}.kubeconfig`);
  writeFileSync(path, env.kubeconfig());
  console.log(`embedded API server at ${env.url}\n  export KUBECONFIG=${path}`);
  client = env.client;
  stopEmbedded = () => env.stop();
} else {
  client = await createHttpClient();
}

const log = (level: string) => (obj: object, msg?: string) =>
  console.log(JSON.stringify({ level, msg, ...obj }));
const logger: Logger = {
  debug() {},
  info: log("info"),
  warn: log("warn"),
  error: log("error"),
  child: () => logger,
};
const manager = new Manager({
  client,
  logger,
  leaderElection: { name: "website-operator", namespace: "default" },
});
setupWebsiteController(manager);
const endpoints = await manager.listen({ host: "0.0.0.0", port: Number(values["metrics-port"]) });
console.log(
  `metrics and health on ${endpoints.url.replace("0.0.0.0", "127.0.0.1")}/metrics, /healthz, /readyz`,
);
try {
  await manager.run({ signal: stop.signal });
} finally {
  await endpoints.close();
  await stopEmbedded();
}
