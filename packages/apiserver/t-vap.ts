import { pods, validatingAdmissionPolicies, validatingAdmissionPolicyBindings } from "@reconcile/api";
import { ApiServer } from "./src/index.js";
const vap = !!process.env.VAP;
const server = new ApiServer({ admissionPlugins: ["NamespaceLifecycle", "ValidatingAdmissionPolicy"], garbageCollection: false });
const client = server.client();
if (vap) {
const podRule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] };
await client.resource(validatingAdmissionPolicies).create({ metadata: { name: "five" }, spec: { matchConstraints: { resourceRules: [podRule] }, validations: [
        { expression: "size(object.spec.containers) <= 10" },
        { expression: "object.spec.containers.all(c, c.image != '')" },
        { expression: "!has(object.spec.hostNetwork) || !object.spec.hostNetwork" },
        { expression: "object.metadata.name.size() < 64" },
        { expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))" },
      ] } } as never);
await client.resource(validatingAdmissionPolicyBindings).create({ metadata: { name: "five" }, spec: { policyName: "five", validationActions: ["Deny"] } } as never);
}
const resource = client.resource(pods, "default");
let counter = 0;
const res: number[] = [];
for (let r = 0; r < 10; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) await resource.create({ metadata: { name: `p-${counter++}` }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } }, { dryRun: "All" } as never);
  res.push(Number(process.hrtime.bigint() - t) / 1e3 / 2000);
}
res.sort((a, b) => a - b);
console.log(vap ? "vap" : "none", res.map((x) => x.toFixed(1)).join(" "), "median", res[5]!.toFixed(1));
await server.close();
console.log("vap µs/call", ((globalThis as any).vapTime * 1000 / (globalThis as any).vapCount).toFixed(2), (globalThis as any).vapCount);
for (const k of ["evalTime", "matchTime", "valTime", "listTime", "bindTime", "nsTime"]) console.log(k, ((globalThis as any)[k] * 1000 / (globalThis as any).vapCount).toFixed(2));
