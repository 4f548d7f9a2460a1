// The Website operator as a program.
//
//   npm start                       against the cluster of your kubeconfig (KUBECONFIG, ~/.kube/config)
//   npm start -- --embedded         against an embedded API server with the Website CRD installed;
//                                   prints a kubeconfig path for kubectl
//   --metrics-port N                where /metrics, /healthz and /readyz are served (default 8080)
//   --webhooks                      serve the Website webhooks on :9443 with the certificate in
//                                   <tmp>/k8s-webhook-server/serving-certs (always on with --embedded,
//                                   where the embedded server calls them in process)
//
// Leader election on the Lease `website-operator` in `default`: run two and one waits.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Client, createHttpClient } from "@reconcile/client";
import type { Logger } from "@reconcile/controller";
import { Manager, WebhookServer } from "@reconcile/runtime";
import { startTestEnvironment, type TestEnvironment } from "@reconcile/runtime/envtest";
import { setupWebsiteController } from "./operator.js";
import { setupWebsiteWebhooks, websiteWebhookConfigurations } from "./webhooks.js";
import { websiteCRD } from "./website.js";

const { values } = parseArgs({
  options: {
    embedded: { type: "boolean", default: false },
    "metrics-port": { type: "string", default: "8080" },
    webhooks: { type: "boolean", default: false },
  },
});

const stop = new AbortController();
process.once("SIGINT", () => stop.abort());
process.once("SIGTERM", () => stop.abort());

let client: Client;
let stopEmbedded = async () => {};
let env: TestEnvironment | undefined;
if (values.embedded) {
  env = await startTestEnvironment({
    crds: [websiteCRD],
    webhookConfigurations: websiteWebhookConfigurations,
  });
  const path = join(tmpdir(), `website-operator-${process.pid}.kubeconfig`);
  writeFileSync(path, env.kubeconfig());
  console.log(`embedded API server at ${env.url}\n  export KUBECONFIG=${path}`);
  client = env.client;
  const embedded = env;
  stopEmbedded = () => embedded.stop();
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
  // Embedded, the server is never listened to: a free loopback port with envtest's certificate.
  webhookServer:
    env === undefined
      ? undefined
      : new WebhookServer({
          port: 0,
          host: "127.0.0.1",
          certificate: await env.webhookCertificate(),
          logger,
        }),
});
setupWebsiteController(manager);
if (env !== undefined || values.webhooks) setupWebsiteWebhooks(manager);
// The embedded server calls the webhooks in process: no certificate, no port.
if (env !== undefined) await env.serveWebhooks(manager.getWebhookServer());
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
