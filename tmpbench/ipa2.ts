import { NodeInfo, interPodAffinity } from "../packages/scheduler/src/index.js";
const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { color: "green" } }, topologyKey: "kubernetes.io/hostname", namespaces: ["sched-1", "sched-0"] }] } };
const mk = (i: number, aff = true) => ({ metadata: { name: `p${i}`, namespace: "sched-0", uid: `u${i}`, labels: { color: "green", name: "test" } }, spec: { containers: [], ...(aff ? { affinity: anti } : {}) } });
const nodes: NodeInfo[] = [];
for (let i = 0; i < 5000; i++) nodes.push(new NodeInfo({ metadata: { name: `node-${i}`, labels: { "kubernetes.io/hostname": `node-${i}` } }, status: { allocatable: { pods: "110", cpu: "4", memory: "32Gi" } } } as any));
for (let i = 0; i < 2000; i++) nodes[i]!.addPod(mk(i) as any, `u${i}`);
const withLists = nodes.filter((n) => n.podsWithRequiredAntiAffinity > 0);
const lists = { havePodsWithAffinity: () => withLists, havePodsWithRequiredAntiAffinity: () => withLists, imageNodeCount: () => 0 };
for (const [label, incoming] of [["plain", mk(99999, false)], ["anti", mk(99998)]] as const) {
  for (let r = 0; r < 8; r++) {
    const t = performance.now();
    for (let k = 0; k < 100; k++) { const s = new Map<string, unknown>([["NodeLists", lists]]); interPodAffinity.preFilter!(s, incoming as any, nodes); }
    console.log(label, "preFilter ms/call", ((performance.now() - t) / 100).toFixed(3));
  }
}
