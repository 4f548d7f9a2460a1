// Selector costs on the API server's list/watch path.
// (a) parseSelector of "app=web,tier in (frontend,backend,cache),!canary,env!=prod" — ns per parse;
// (b) that selector's matches() over 100,000 label sets (4 labels each, 1/3 selected) — ms per 100k;
// (c) parseFieldSelector("spec.nodeName=node-7,status.phase!=Failed") matched against
//     objectFieldSet(pods, pod) for 100,000 pods spread over 10 nodes — ms per 100k (field set included).

import { measure, writeResults } from "../../../tools/bench/index.js";
import { objectFieldSet, type Pod, parseFieldSelector, parseSelector, pods } from "../src/index.js";

const selectorText = "app=web,tier in (frontend,backend,cache),!canary,env!=prod";
const count = 100_000;

const labelSets = Array.from({ length: count }, (_, i) => ({
  app: i % 2 ? "web" : "db",
  tier: ["frontend", "backend", "x"][i % 3]!,
  env: "dev",
  "pod-template-hash": String(i % 97),
}));

const podList: Pod[] = Array.from({ length: count }, (_, i) => ({
  metadata: { name: `web-${i}`, namespace: "default" },
  spec: { containers: [{ name: "web" }], nodeName: `node-${i % 10}` },
  status: { phase: i % 50 === 0 ? "Failed" : "Running" },
}));

let sink = 0;

const parse = await measure(
  { name: "a: parseSelector (4 requirements)", unit: "ns/parse", higherIsBetter: false },
  () => {
    const rounds = 100_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) sink += parseSelector(selectorText).requirements().length;
    return Number(process.hrtime.bigint() - start) / rounds;
  },
);

const selector = parseSelector(selectorText);
const labels = await measure(
  { name: "b: label selector matches, 100k label sets", unit: "ms/100k", higherIsBetter: false },
  () => {
    const start = process.hrtime.bigint();
    for (const set of labelSets) if (selector.matches(set)) sink++;
    return Number(process.hrtime.bigint() - start) / 1e6;
  },
);

const fieldSelector = parseFieldSelector("spec.nodeName=node-7,status.phase!=Failed");
const fields = await measure(
  { name: "c: field selector on objectFieldSet, 100k pods", unit: "ms/100k", higherIsBetter: false },
  () => {
    const start = process.hrtime.bigint();
    for (const pod of podList) if (fieldSelector.matches(objectFieldSet(pods, pod))) sink++;
    return Number(process.hrtime.bigint() - start) / 1e6;
  },
);

writeResults("api-selectors", [parse, labels, fields], { sink });
