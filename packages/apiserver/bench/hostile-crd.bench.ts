// Hostile CustomResourceDefinitions (issue 33 items 1 and 2), over HTTP on loopback: for each case
// the CRD is written, then objects of its kind (valid and invalid) are created. Reports, per case,
// the longest event-loop block seen while the case ran (perf_hooks.monitorEventLoopDelay, 1 ms
// resolution; goal ≤ 100 ms), the CRD write's answer and time, and each object request's answer.
//
// One run per case; run again for another sample.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Measurement, writeResults } from "../../../tools/bench/index.js";
import { ApiServer } from "../src/index.js";

interface Case {
  name: string;
  /** The CRD's `openAPIV3Schema`, or the whole body as YAML text. */
  schema?: Record<string, unknown>;
  yaml?: string;
  /** Objects' `spec`s to create once the kind is served. */
  specs: unknown[];
}

const deepSchema = (depth: number): Record<string, unknown> =>
  depth === 0 ? { type: "string" } : { type: "object", properties: { n: deepSchema(depth - 1) } };
const deepValue = (depth: number): unknown => (depth === 0 ? "leaf" : { n: deepValue(depth - 1) });
const wide = (count: number, property: (i: number) => Record<string, unknown>) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, property(i)]));

const spec = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties: { spec: { type: "object", properties, ...extra } },
});

const aliasBomb = [
  "apiVersion: apiextensions.k8s.io/v1",
  "kind: CustomResourceDefinition",
  "metadata: {name: bombs.hostile.example.com}",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...Array.from({ length: 8 }, (_, i) => {
    const name = String.fromCharCode(98 + i);
    const previous = String.fromCharCode(97 + i);
    return `${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`;
  }),
  "spec: {group: hostile.example.com}",
].join("\n");

const cases: Case[] = [
  // Loads the modules a CRD's first write and first object use (on TypeScript sources, a first
  // import costs tens of milliseconds): not reported.
  {
    name: "warm-up",
    schema: spec(
      { name: { type: "string", pattern: "^[a-z]+$" } },
      { "x-kubernetes-validations": [{ rule: "self.name != 'x'" }] },
    ),
    specs: [{ name: "a" }, { name: "1" }],
  },
  {
    name: "catastrophic pattern ^(a+)+$",
    schema: spec({ name: { type: "string", pattern: "^(a+)+$" } }),
    specs: [{ name: "aaaa" }, { name: `${"a".repeat(30)}!` }, { name: `${"a".repeat(100_000)}!` }],
  },
  {
    name: "CEL matches ^(a+)+$",
    schema: spec(
      { name: { type: "string", maxLength: 100_000 } },
      { "x-kubernetes-validations": [{ rule: "self.name.matches('^(a+)+$')" }] },
    ),
    specs: [{ name: "aaaa" }, { name: `${"a".repeat(99_999)}!` }],
  },
  {
    name: "CEL nested quantifiers over a list (cost-limited)",
    schema: spec(
      { items: { type: "array", maxItems: 5_000, items: { type: "string", maxLength: 1_000 } } },
      { "x-kubernetes-validations": [{ rule: "self.items.all(x, self.items.all(y, x != y + 'z'))" }] },
    ),
    specs: [{ items: Array.from({ length: 5_000 }, (_, i) => `item-${i}`) }],
  },
  {
    name: "10,000 properties with patterns",
    schema: spec(wide(10_000, () => ({ type: "string", pattern: "^[a-z0-9-]+$" }))),
    specs: [
      Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, `value-${i}`])),
      { f0: "NO" },
    ],
  },
  {
    name: "250-deep schema",
    schema: spec({ n: deepSchema(250) }),
    specs: [{ n: deepValue(250) }, { n: deepValue(10) }],
  },
  {
    name: "100,000-value enum",
    schema: spec({ mode: { type: "string", enum: Array.from({ length: 100_000 }, (_, i) => `mode-${i}`) } }),
    specs: [{ mode: "mode-99999" }, { mode: "none" }],
  },
  {
    name: "YAML alias bomb (9^9 expansions)",
    yaml: aliasBomb,
    specs: [],
  },
  {
    name: "preserve-unknown-fields, 100,000 keys and 500 deep",
    schema: spec({}, { "x-kubernetes-preserve-unknown-fields": true }),
    specs: [Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])), deepValue(500)],
  },
];

const api = new ApiServer({ customResourceDefinitions: true, garbageCollection: false });
const listening = await api.listen();
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();

async function send(method: string, path: string, body: string, contentType = "application/json") {
  const started = performance.now();
  const answer = await fetch(`${listening.url}${path}`, {
    method,
    headers: { "content-type": contentType },
    body,
  });
  const text = await answer.text();
  return { code: answer.status, ms: performance.now() - started, message: text.slice(0, 160) };
}

const measurements: Measurement[] = [];
const details: Record<string, unknown> = {};
// HOSTILE_CASE=<part of a name> runs only the matching cases.
const only = process.env.HOSTILE_CASE;
for (const [index, hostile] of cases.entries()) {
  if (only !== undefined && hostile.name !== "warm-up" && !hostile.name.includes(only)) continue;
  const group = `h${index}.hostile.example.com`;
  const body =
    hostile.yaml ??
    JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `things.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "things", kind: "Thing" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: hostile.schema } }],
      },
    });
  histogram.reset();
  const crd = await send(
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    body,
    hostile.yaml === undefined ? "application/json" : "application/yaml",
  );
  const objects: Array<{ code: number; ms: number; message: string }> = [];
  if (crd.code === 201) {
    for (const [i, specBody] of hostile.specs.entries()) {
      const object = JSON.stringify({
        apiVersion: `${group}/v1`,
        kind: "Thing",
        metadata: { name: `t${i}` },
        spec: specBody,
      });
      let answer = await send("POST", `/apis/${group}/v1/namespaces/default/things`, object);
      // The kind is served once the CRD is established.
      for (let tries = 0; answer.code === 404 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        answer = await send("POST", `/apis/${group}/v1/namespaces/default/things`, object);
      }
      objects.push(answer);
    }
  }
  const maxBlockMs = histogram.max / 1e6;
  if (hostile.name === "warm-up") continue;
  console.log(
    `${hostile.name}: worst block ${maxBlockMs.toFixed(1)} ms; CRD ${crd.code} in ${crd.ms.toFixed(1)} ms; objects ${objects.map((o) => `${o.code} (${o.ms.toFixed(1)} ms)`).join(", ")}`,
  );
  if (crd.code >= 400) console.log(`  CRD answer: ${crd.message}`);
  for (const o of objects) if (o.code >= 400) console.log(`  object answer: ${o.message}`);
  measurements.push({
    name: `${hostile.name}: worst event-loop block`,
    unit: "ms",
    higherIsBetter: false,
    runs: [maxBlockMs],
    median: maxBlockMs,
    target: 100,
  });
  details[hostile.name] = { crd, objects };
}
histogram.disable();
writeResults("apiserver-hostile-crd", measurements, { details });
await listening.close();
await api.close();
