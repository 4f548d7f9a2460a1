import { pods, serviceAccounts, validatingWebhookConfigurations } from "@reconcile/api";
import { ApiServer, defaultAdmissionPlugins } from "./src/index.js";
const podRule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] };
const mode = process.env.MODE ?? "hook";
const server = new ApiServer({ admissionPlugins: defaultAdmissionPlugins, garbageCollection: false });
const client = server.client();
await client.resource(serviceAccounts, "default").create({ metadata: { name: "default" } });
if (mode === "hook") {
  server.admissionWebhooks.serve("https://bench.local/validate", (review: any) => ({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: review.request.uid, allowed: true } }));
  await client.resource(validatingWebhookConfigurations).create({ metadata: { name: "bench" }, webhooks: [{ name: "bench.example.com", clientConfig: { url: "https://bench.local/validate" }, rules: [podRule], sideEffects: "None", admissionReviewVersions: ["v1"] }] } as never);
}
const resource = client.resource(pods, "default");
let n = 0;
for (let r = 0; r < 8; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) await resource.create({ metadata: { name: `p-${n++}` }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } });
  if (r > 2) console.log(mode, (Number(process.hrtime.bigint() - t) / 2000 / 1000).toFixed(1));
  await resource.deleteCollection({ gracePeriodSeconds: 0 });
}
await server.close();
