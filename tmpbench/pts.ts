import { NodeInfo, podTopologySpread } from "../packages/scheduler/src/index.js";
const spreadBy = (topologyKey: string) => ({ maxSkew: 5, topologyKey, whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { foo: "bar" } } });
const mk = (i: number, spread: boolean) => ({ metadata: { name: `p${i}`, namespace: "default", uid: `u${i}`, ...(spread ? { labels: { foo: "bar" } } : {}) }, spec: { containers: [], ...(spread ? { topologySpreadConstraints: [spreadBy("kubernetes.io/hostname"), spreadBy("topology.kubernetes.io/zone")] } : {}) } });
const nodes: NodeInfo[] = [];
for (let i = 0; i < 5000; i++) nodes.push(new NodeInfo({ metadata: { name: `node-${i}`, labels: { "kubernetes.io/hostname": `node-${i}`, "topology.kubernetes.io/zone": `moon-${(i % 3) + 1}` } }, status: { allocatable: { pods: "110", cpu: "4", memory: "32Gi" } } } as any));
for (let i = 0; i < 15000; i++) nodes[i % 5000]!.addPod(mk(i, i >= 5000) as any, `u${i}`);
const incoming = mk(99999, true) as any;
for (let r = 0; r < 6; r++) {
  const t = performance.now();
  for (let k = 0; k < 20; k++) { const s = new Map(); podTopologySpread.preFilter!(s, incoming, nodes); for (const n of nodes.slice(0, 500)) podTopologySpread.filter!(s, incoming, n); }
  console.log("preFilter+500 filters ms/call", ((performance.now() - t) / 20).toFixed(3));
}
