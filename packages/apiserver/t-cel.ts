import { compileAdmissionExpression, runAdmissionExpression, celValueOf } from "./src/admission/cel.js";
const exprs = [
  "size(object.spec.containers) <= 10",
  "object.spec.containers.all(c, c.image != '')",
  "!has(object.spec.hostNetwork) || !object.spec.hostNetwork",
  "object.metadata.name.size() < 64",
  "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
];
const pod = celValueOf({ metadata: { name: "p-1", namespace: "default" }, spec: { containers: [{ name: "c", image: "nginx:1.27", imagePullPolicy: "IfNotPresent" }] } });
const ctx = { object: pod, oldObject: null, request: null, params: null, namespaceObject: null, variables: {} };
const programs = exprs.map((e) => compileAdmissionExpression(e) as any);
for (let r = 0; r < 5; r++) {
  const t = performance.now();
  for (let i = 0; i < 20000; i++) for (const p of programs) runAdmissionExpression(p, ctx);
  const dt = (performance.now() - t) * 1000 / 20000;
  console.log("µs per 5 expressions:", dt.toFixed(2));
}
for (const [k, p] of programs.entries()) {
  const t = performance.now();
  for (let i = 0; i < 20000; i++) runAdmissionExpression(p, ctx);
  console.log(exprs[k], ((performance.now() - t) * 1000 / 20000).toFixed(2));
}
