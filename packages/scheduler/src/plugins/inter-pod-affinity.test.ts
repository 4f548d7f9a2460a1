// InterPodAffinity, after upstream's filtering_test.go (TestRequiredAffinitySingleNode,
// TestRequiredAffinityMultipleNodes) and scoring_test.go (TestPreferredAffinity), with v1.32's reasons and codes.
import type { Node, Pod } from "@reconcile/api";
import type { PodAffinityTerm, WeightedPodAffinityTerm } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { type CycleState, cloneCycleState, type Status } from "../framework.js";
import { podInfo } from "../node-info.js";
import {
  errReasonAffinityRulesNotMatch,
  errReasonAntiAffinityRulesNotMatch,
  errReasonExistingAntiAffinityRulesNotMatch,
  interPodAffinity,
  interPodAffinityPlugin,
} from "./inter-pod-affinity.js";
import { nodeInfoOf, nodeInfosWith, runScore } from "./testing.js";

type Op = "In" | "NotIn" | "Exists" | "DoesNotExist";

function term(topologyKey: string, ...exprs: [string, Op, string[]?][]): PodAffinityTerm {
  return {
    topologyKey,
    labelSelector: {
      matchExpressions: exprs.map(([key, operator, values]) => ({
        key,
        operator,
        ...(values ? { values } : {}),
      })),
    },
  };
}

function pod(
  options: {
    name?: string;
    namespace?: string;
    nodeName?: string;
    labels?: Record<string, string>;
    affinity?: PodAffinityTerm[];
    anti?: PodAffinityTerm[];
    preferred?: [number, PodAffinityTerm][];
    preferredAnti?: [number, PodAffinityTerm][];
  } = {},
): Pod {
  const part = (required?: PodAffinityTerm[], preferred?: [number, PodAffinityTerm][]) => {
    if (required === undefined && preferred === undefined) return undefined;
    const weighted: WeightedPodAffinityTerm[] | undefined = preferred?.map(([weight, podAffinityTerm]) => ({
      weight,
      podAffinityTerm,
    }));
    return {
      ...(required ? { requiredDuringSchedulingIgnoredDuringExecution: required } : {}),
      ...(weighted ? { preferredDuringSchedulingIgnoredDuringExecution: weighted } : {}),
    };
  };
  const podAffinity = part(options.affinity, options.preferred);
  const podAntiAffinity = part(options.anti, options.preferredAnti);
  return {
    metadata: {
      name: options.name ?? "p",
      namespace: options.namespace ?? "",
      uid: `uid-${options.name ?? "incoming"}`,
      labels: options.labels ?? {},
    },
    spec: {
      containers: [],
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(podAffinity || podAntiAffinity
        ? {
            affinity: {
              ...(podAffinity ? { podAffinity } : {}),
              ...(podAntiAffinity ? { podAntiAffinity } : {}),
            },
          }
        : {}),
    },
  };
}

const nodeOf = (name: string, labels: Record<string, string>): Node => ({
  metadata: { name, labels },
  status: { allocatable: { pods: "110" } },
});

/** PreFilter over every node, then Filter on each: the status per node ("ok" for success). */
function filterAll(incoming: Pod, nodes: Node[], existing: Pod[], plugin = interPodAffinity) {
  const infos = nodeInfosWith(nodes, existing);
  const state: CycleState = new Map();
  const pre = plugin.preFilter!(state, incoming, infos);
  if (pre.code === "Skip") return Object.fromEntries(infos.map((i) => [i.name, "ok"]));
  if (pre.code !== "Success") return Object.fromEntries(infos.map((i) => [i.name, brief(pre)]));
  return Object.fromEntries(infos.map((i) => [i.name, brief(plugin.filter!(state, incoming, i))]));
}

const brief = (status: Status) =>
  status.code === "Success" ? "ok" : `${status.code}: ${status.reasons.join(", ")}`;

const affinityFails = `UnschedulableAndUnresolvable: ${errReasonAffinityRulesNotMatch}`;
const antiFails = `Unschedulable: ${errReasonAntiAffinityRulesNotMatch}`;
const existingFails = `Unschedulable: ${errReasonExistingAntiAffinityRulesNotMatch}`;

describe("InterPodAffinity Filter on one node (upstream TestRequiredAffinitySingleNode)", () => {
  const node1 = nodeOf("machine1", { region: "r1", zone: "z11" });
  const scan = { service: "securityscan" };
  const s1 = { security: "S1" };
  const onMachine1 = (labels: Record<string, string>, extra: Parameters<typeof pod>[0] = {}) =>
    pod({ name: "existing", nodeName: "machine1", labels, ...extra });

  it.each([
    {
      name: "a pod without pod affinity fits a node with no pods",
      incoming: pod(),
      existing: [],
      want: "ok",
    },
    {
      name: "affinity In that matches the existing pod",
      incoming: pod({
        labels: s1,
        affinity: [term("region", ["service", "In", ["securityscan", "value2"]])],
      }),
      existing: [onMachine1(scan)],
      want: "ok",
    },
    {
      name: "affinity NotIn that the existing pod passes",
      incoming: pod({
        labels: s1,
        affinity: [term("region", ["service", "NotIn", ["securityscan3", "value3"]])],
      }),
      existing: [onMachine1(scan)],
      want: "ok",
    },
    {
      name: "affinity naming another namespace does not match",
      incoming: pod({
        labels: s1,
        affinity: [
          { ...term("region", ["service", "In", ["securityscan", "value2"]]), namespaces: ["DiffNameSpace"] },
        ],
      }),
      existing: [onMachine1(scan, { namespace: "ns" })],
      want: affinityFails,
    },
    {
      name: "affinity whose selector matches no pod",
      incoming: pod({
        labels: scan,
        affinity: [term("region", ["service", "In", ["antivirusscan", "value2"]])],
      }),
      existing: [onMachine1(scan)],
      want: affinityFails,
    },
    {
      name: "several terms, each matched by the existing pod",
      incoming: pod({
        labels: s1,
        affinity: [
          term("region", ["service", "Exists"], ["wrongkey", "DoesNotExist"]),
          term("region", ["service", "In", ["securityscan"]], ["service", "NotIn", ["WrongValue"]]),
        ],
      }),
      existing: [onMachine1(scan)],
      want: "ok",
    },
    {
      name: "expressions are ANDed: one that does not match fails the term",
      incoming: pod({
        labels: s1,
        affinity: [
          term("region", ["service", "Exists"], ["wrongkey", "DoesNotExist"]),
          term("region", ["service", "In", ["securityscan2"]], ["service", "NotIn", ["WrongValue"]]),
        ],
      }),
      existing: [onMachine1(scan)],
      want: affinityFails,
    },
    {
      name: "affinity and anti-affinity both satisfied",
      incoming: pod({
        labels: s1,
        affinity: [term("region", ["service", "In", ["securityscan", "value2"]])],
        anti: [term("node", ["service", "In", ["antivirusscan", "value2"]])],
      }),
      existing: [onMachine1(scan)],
      want: "ok",
    },
    {
      name: "the existing pod's anti-affinity does not select the incoming pod",
      incoming: pod({
        labels: s1,
        affinity: [term("region", ["service", "In", ["securityscan", "value2"]])],
        anti: [term("node", ["service", "In", ["antivirusscan", "value2"]])],
      }),
      existing: [onMachine1(scan, { anti: [term("node", ["service", "In", ["antivirusscan", "value2"]])] })],
      want: "ok",
    },
    {
      name: "affinity satisfied, anti-affinity not",
      incoming: pod({
        labels: s1,
        affinity: [term("region", ["service", "In", ["securityscan", "value2"]])],
        anti: [term("zone", ["service", "In", ["securityscan", "value2"]])],
      }),
      existing: [onMachine1(scan)],
      want: antiFails,
    },
    {
      name: "the existing pod's anti-affinity selects the incoming pod",
      incoming: pod({
        labels: scan,
        affinity: [term("region", ["service", "In", ["securityscan", "value2"]])],
        anti: [term("node", ["service", "In", ["antivirusscan", "value2"]])],
      }),
      existing: [onMachine1(scan, { anti: [term("zone", ["service", "In", ["securityscan", "value2"]])] })],
      want: existingFails,
    },
    {
      name: "a pod matching its own NotIn term, with the only matching pod on an unknown node",
      incoming: pod({
        labels: scan,
        affinity: [term("region", ["service", "NotIn", ["securityscan", "value2"]])],
      }),
      existing: [pod({ name: "elsewhere", nodeName: "machine2", labels: scan })],
      want: affinityFails,
    },
    {
      name: "existing anti-affinity is honoured for a pod without any affinity",
      incoming: pod({ labels: scan }),
      existing: [onMachine1(scan, { anti: [term("zone", ["service", "In", ["securityscan", "value2"]])] })],
      want: existingFails,
    },
    {
      name: "existing anti-affinity that does not select the pod",
      incoming: pod({ labels: scan }),
      existing: [
        onMachine1(scan, { anti: [term("zone", ["service", "NotIn", ["securityscan", "value2"]])] }),
      ],
      want: "ok",
    },
    {
      name: "anti-affinity terms are ORed: one matching term is enough to refuse",
      incoming: pod({
        labels: scan,
        anti: [term("region", ["service", "Exists"]), term("region", ["security", "Exists"])],
      }),
      existing: [onMachine1(s1)],
      want: antiFails,
    },
  ])("$name", ({ incoming, existing, want }) => {
    expect(filterAll(incoming, [node1], existing)).toEqual({ machine1: want });
  });
});

describe("InterPodAffinity Filter over several nodes (upstream TestRequiredAffinityMultipleNodes)", () => {
  const nodes = [
    nodeOf("machine1", { region: "r1", zone: "z11", hostname: "h1" }),
    nodeOf("machine2", { region: "r1", zone: "z12", hostname: "h2" }),
    nodeOf("machine3", { region: "r2", zone: "z21", hostname: "h3" }),
  ];
  const foo = { foo: "bar" };

  it("affinity holds on every node of the matching pod's region, and fails elsewhere", () => {
    const incoming = pod({ affinity: [term("region", ["foo", "In", ["bar"]])] });
    const existing = [pod({ name: "a", nodeName: "machine1", labels: foo })];
    expect(filterAll(incoming, nodes, existing)).toEqual({
      machine1: "ok",
      machine2: "ok",
      machine3: affinityFails,
    });
  });

  it("anti-affinity by zone refuses only the matching pod's zone", () => {
    const incoming = pod({ anti: [term("zone", ["foo", "In", ["bar"]])] });
    const existing = [pod({ name: "a", nodeName: "machine1", labels: foo })];
    expect(filterAll(incoming, nodes, existing)).toEqual({
      machine1: antiFails,
      machine2: "ok",
      machine3: "ok",
    });
  });

  it("an existing pod's anti-affinity by region refuses its whole region", () => {
    const incoming = pod({ labels: foo });
    const existing = [pod({ name: "a", nodeName: "machine2", anti: [term("region", ["foo", "Exists"])] })];
    expect(filterAll(incoming, nodes, existing)).toEqual({
      machine1: existingFails,
      machine2: existingFails,
      machine3: "ok",
    });
  });

  it("the first pod of a group with affinity to itself lands on any node with the topology key", () => {
    const incoming = pod({ labels: foo, affinity: [term("hostname", ["foo", "In", ["bar"]])] });
    const bare = nodeOf("machine4", { region: "r2" });
    expect(filterAll(incoming, [...nodes, bare], [])).toEqual({
      machine1: "ok",
      machine2: "ok",
      machine3: "ok",
      machine4: affinityFails,
    });
  });

  it("once a matching pod exists, the group follows it", () => {
    const incoming = pod({ labels: foo, affinity: [term("hostname", ["foo", "In", ["bar"]])] });
    const existing = [pod({ name: "a", nodeName: "machine3", labels: foo })];
    expect(filterAll(incoming, nodes, existing)).toEqual({
      machine1: affinityFails,
      machine2: affinityFails,
      machine3: "ok",
    });
  });

  it("a term with several topology keys needs a pod matching all terms in each key's domain", () => {
    const incoming = pod({
      affinity: [term("region", ["foo", "In", ["bar"]]), term("zone", ["foo", "In", ["bar"]])],
    });
    const existing = [pod({ name: "a", nodeName: "machine1", labels: foo })];
    expect(filterAll(incoming, nodes, existing)).toEqual({
      machine1: "ok",
      machine2: affinityFails,
      machine3: affinityFails,
    });
  });

  it("namespaceSelector: resolved through the namespace lister; {} selects every namespace", () => {
    const namespaces = [
      { metadata: { name: "team-a", labels: { team: "a" } } },
      { metadata: { name: "team-b", labels: { team: "b" } } },
    ];
    const plugin = interPodAffinityPlugin({
      namespaces: {
        list: () => namespaces,
        labels: (name) => namespaces.find((ns) => ns.metadata.name === name)?.metadata.labels,
      },
    });
    const existing = [
      pod({ name: "a", namespace: "team-a", nodeName: "machine1", labels: foo }),
      pod({ name: "b", namespace: "team-b", nodeName: "machine3", labels: foo }),
    ];
    const selecting = (namespaceSelector: object) =>
      pod({ namespace: "other", anti: [{ ...term("region", ["foo", "Exists"]), namespaceSelector }] });
    expect(filterAll(selecting({ matchLabels: { team: "a" } }), nodes, existing, plugin)).toEqual({
      machine1: antiFails,
      machine2: antiFails,
      machine3: "ok",
    });
    expect(filterAll(selecting({}), nodes, existing, plugin)).toEqual({
      machine1: antiFails,
      machine2: antiFails,
      machine3: antiFails,
    });
    // Without a lister, a selector other than {} selects no namespace.
    expect(filterAll(selecting({ matchLabels: { team: "a" } }), nodes, existing)).toEqual({
      machine1: "ok",
      machine2: "ok",
      machine3: "ok",
    });
  });

  it("an existing pod's namespaceSelector is matched against the incoming pod's namespace labels", () => {
    const plugin = interPodAffinityPlugin({
      namespaces: { list: () => [], labels: (name) => (name === "team-a" ? { team: "a" } : undefined) },
    });
    const existing = [
      pod({
        name: "a",
        nodeName: "machine1",
        anti: [{ ...term("hostname", ["foo", "Exists"]), namespaceSelector: { matchLabels: { team: "a" } } }],
      }),
    ];
    expect(filterAll(pod({ namespace: "team-a", labels: foo }), nodes, existing, plugin).machine1).toBe(
      existingFails,
    );
    expect(filterAll(pod({ namespace: "team-b", labels: foo }), nodes, existing, plugin).machine1).toBe("ok");
  });

  it("a selector that does not parse is UnschedulableAndUnresolvable", () => {
    const incoming = pod({ affinity: [term("region", ["foo", "Bogus" as Op, ["bar"]])] });
    expect(filterAll(incoming, nodes, []).machine1).toMatch(/^UnschedulableAndUnresolvable: parsing pod: /);
  });

  it("is skipped when neither the pod nor any existing pod has required terms", () => {
    const state: CycleState = new Map();
    const infos = nodes.map((n) => nodeInfoOf(n, []));
    expect(interPodAffinity.preFilter!(state, pod({ labels: foo }), infos).code).toBe("Skip");
  });
});

describe("InterPodAffinity RemovePod/AddPod (what preemption asks)", () => {
  it("a copy of the state without the anti-affine pod lets the node through; the original is untouched", () => {
    const node = nodeOf("machine1", { hostname: "h1" });
    const victim = pod({ name: "victim", nodeName: "machine1", labels: { app: "db" } });
    const info = nodeInfoOf(node, [victim]);
    const incoming = pod({ anti: [term("hostname", ["app", "In", ["db"]])] });
    const state: CycleState = new Map();
    interPodAffinity.preFilter!(state, incoming, [info]);
    const what = cloneCycleState(state);
    interPodAffinity.removePod!(what, incoming, podInfo(victim), info);
    expect(brief(interPodAffinity.filter!(what, incoming, info))).toBe("ok");
    expect(brief(interPodAffinity.filter!(state, incoming, info))).toBe(antiFails);
    interPodAffinity.addPod!(what, incoming, podInfo(victim), info);
    expect(brief(interPodAffinity.filter!(what, incoming, info))).toBe(antiFails);
  });
});

describe("InterPodAffinity Score (upstream TestPreferredAffinity)", () => {
  const nodes = [
    nodeOf("machine1", { region: "China" }),
    nodeOf("machine2", { region: "India" }),
    nodeOf("machine3", { az: "az1" }),
  ];
  const s1 = { security: "S1" };
  const s2 = { security: "S2" };
  const existing = [
    pod({ name: "a", nodeName: "machine1", labels: s1 }),
    pod({ name: "b", nodeName: "machine2", labels: s2 }),
  ];
  const infosWith = (pods: Pod[]) => nodeInfosWith(nodes, pods);

  it("is skipped when no pod has affinity", () => {
    expect(runScore(interPodAffinity, pod({ labels: s1 }), infosWith(existing))).toBe("skip");
  });

  it("preferred affinity: nodes in the matching pod's topology score highest", () => {
    const incoming = pod({ labels: s1, preferred: [[5, term("region", ["security", "In", ["S1"]])]] });
    expect(runScore(interPodAffinity, incoming, infosWith(existing))).toEqual({
      machine1: 100,
      machine2: 0,
      machine3: 0,
    });
  });

  it("preferred anti-affinity: the matching pod's topology scores lowest", () => {
    const incoming = pod({ labels: s1, preferredAnti: [[5, term("region", ["security", "In", ["S1"]])]] });
    expect(runScore(interPodAffinity, incoming, infosWith(existing))).toEqual({
      machine1: 0,
      machine2: 100,
      machine3: 100,
    });
  });

  it("weights add up across terms and scale between the lowest and highest node", () => {
    const incoming = pod({
      preferred: [
        [8, term("region", ["security", "In", ["S1"]])],
        [2, term("region", ["security", "In", ["S2"]])],
      ],
      preferredAnti: [[5, term("region", ["security", "In", ["S2"]])]],
    });
    // machine1 +8, machine2 +2 −5 = −3, machine3 0: (x + 3) / 11 · 100
    expect(runScore(interPodAffinity, incoming, infosWith(existing))).toEqual({
      machine1: 100,
      machine2: 0,
      machine3: 27,
    });
  });

  it("an existing pod's required affinity selecting the incoming pod counts with weight 1", () => {
    const hard = pod({
      name: "h",
      nodeName: "machine2",
      affinity: [term("region", ["security", "In", ["S1"]])],
    });
    expect(runScore(interPodAffinity, pod({ labels: s1 }), infosWith([...existing, hard]))).toEqual({
      machine1: 0,
      machine2: 100,
      machine3: 0,
    });
  });

  it("an existing pod's preferred anti-affinity selecting the incoming pod lowers its topology", () => {
    const soft = pod({
      name: "s",
      nodeName: "machine1",
      preferredAnti: [[10, term("region", ["security", "In", ["S1"]])]],
    });
    expect(runScore(interPodAffinity, pod({ labels: s1 }), infosWith([...existing, soft]))).toEqual({
      machine1: 0,
      machine2: 100,
      machine3: 100,
    });
  });
});
