import { NodeInfo, interPodAffinity, podInfo } from "../packages/scheduler/src/index.js";
const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { color: "green" } }, topologyKey: "kubernetes.io/hostname", namespaces: ["sched-1", "sched-0"] }] } };
const mk = (i: number) => ({ metadata: { name: `p${i}`, namespace: "sched-0", uid: `u${i}`, labels: { color: "green", name: "test" } }, spec: { containers: [], affinity: anti } });
const nodes: NodeInfo[] = [];
for (let i = 0; i < 5000; i++) nodes.push(new NodeInfo({ metadata: { name: `node-${i}`, labels: { "kubernetes.io/hostname": `node-${i}` } }, status: { allocatable: { pods: "110", cpu: "4", memory: "32Gi" } } } as any));
for (let i = 0; i < 2000; i++) nodes[i]!.addPod(mk(i) as any, `u${i}`);
const incoming = mk(99999) as any;
for (let r = 0; r < 15; r++) {
  const t = performance.now();
  for (let k = 0; k < 100; k++) { const s = new Map(); interPodAffinity.preFilter!(s, incoming, nodes); }
  console.log("preFilter ms/call", ((performance.now() - t) / 100).toFixed(3));
}
import { podAffinityTermsOrNone, termMatches } from "../packages/scheduler/src/affinity-terms.js";
{
  const terms = podAffinityTermsOrNone(incoming).requiredAnti;
  for (let r = 0; r < 3; r++) {
    let t = performance.now(); let c = 0;
    for (let k = 0; k < 100; k++) for (const n of nodes) { if (n.podsWithRequiredAntiAffinity > 0) for (const e of n.pods.values()) c += e.affinity.requiredAnti.length; }
    console.log("iterate only", ((performance.now() - t) / 100).toFixed(3), c);
    t = performance.now();
    for (let k = 0; k < 100; k++) for (const n of nodes) { for (const e of n.pods.values()) if (termMatches(terms[0]!, e.pod, undefined)) c++; }
    console.log("termMatches", ((performance.now() - t) / 100).toFixed(3));
  }
}
{
  const terms = podAffinityTermsOrNone(incoming).requiredAnti;
  for (let r = 0; r < 3; r++) {
    let t = performance.now(); let c = 0;
    for (let k = 0; k < 100; k++) for (const n of nodes) { const node = n.node!; for (const e of n.pods.values()) for (const term of e.affinity.requiredAnti) { if (termMatches(term, incoming, undefined)) { const v = node.metadata?.labels?.[term.topologyKey]; if (v !== undefined) c++; } } }
    console.log("existing anti, no map", ((performance.now() - t) / 100).toFixed(3), c);
    t = performance.now();
    for (let k = 0; k < 100; k++) { const m = new Map<string, Map<string, number>>(); for (const n of nodes) { const node = n.node!; for (const e of n.pods.values()) for (const term of e.affinity.requiredAnti) { if (termMatches(term, incoming, undefined)) { const v = node.metadata?.labels?.[term.topologyKey]; if (v !== undefined) { let vs = m.get(term.topologyKey); if (!vs) m.set(term.topologyKey, vs = new Map()); vs.set(v, (vs.get(v) ?? 0) + 1); } } } } }
    console.log("existing anti, map", ((performance.now() - t) / 100).toFixed(3));
  }
}
