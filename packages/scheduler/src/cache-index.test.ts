// The cache's affinity and spreading indexes and image counts against the same counts taken by walking every node: after
// any sequence of pod adds, updates and removes, node relabels, node removals (ghosts) and returns, they must agree.
import { labelSelectorAsSelector, type Node, type Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { podAffinityTerms } from "./affinity-terms.js";
import { SchedulerCache } from "./cache.js";
import { nodeListsOf } from "./framework.js";

const zones = ["z1", "z2", "z3"];
const apps = ["web", "db", "cache"];

const images = ["nginx:1.27", "busybox:latest", "redis:7"];

function node(name: string, zone: string, held: string[] = []): Node {
  return {
    metadata: { name, labels: { "kubernetes.io/hostname": name, zone } },
    status: {
      allocatable: { cpu: "64", memory: "64Gi", pods: "110" },
      images: held.map((image) => ({ names: [image], sizeBytes: 100 })),
    },
  };
}

function pod(name: string, nodeName: string, app: string, repels?: string, namespace = "ns"): Pod {
  return {
    metadata: { name, namespace, uid: `uid-${name}`, labels: { app } },
    spec: {
      nodeName,
      containers: [],
      ...(repels === undefined
        ? {}
        : {
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { topologyKey: "zone", labelSelector: { matchLabels: { app: repels } } },
                ],
              },
            },
          }),
    },
  };
}

// A small deterministic generator, so a failure repeats.
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe("SchedulerCache affinity indexes", () => {
  it.each([1, 2, 3, 4, 5])("agree with a walk over every node (seed %i)", (seed) => {
    const random = generator(seed);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const cache = new SchedulerCache();
    const nodes = new Map<string, string>(); // name → zone
    const placed = new Map<string, Pod>();
    const probe = pod("probe", "", "web");
    const selectors = apps.map((app) => podAffinityTerms(pod("t", "", app, app)).requiredAnti[0]!);
    const spreading = apps.map((app) => ({
      key: `ns\u0000app=${app}`,
      selector: labelSelectorAsSelector({ matchLabels: { app } }),
    }));
    const spreadCounts = (lists: ReturnType<typeof nodeListsOf>, s: (typeof spreading)[number]) =>
      [...lists.spreadCounts("ns", s.key, s.selector)].map(([info, n]) => `${info.name}=${n}`).sort();
    // Ask once first, so the selected-pods and spreading indexes are kept up to date from then on.
    for (const term of selectors) cache.podsSelectedBy(term);
    for (const s of spreading) cache.spreadCounts("ns", s.key, s.selector);
    for (let step = 0; step < 400; step++) {
      const roll = random();
      if (roll < 0.45 || nodes.size === 0) {
        const name = `n${Math.floor(random() * 8)}`;
        const zone = pick(zones);
        nodes.set(name, zone);
        const held = images.filter(() => random() < 0.5);
        cache.addNode(node(name, zone, held)); // a new node, a relabel, new images, or a ghost's return
      } else if (roll < 0.8) {
        const name = `p${step}`;
        const onto = random() < 0.1 ? "gone" : pick([...nodes.keys()]);
        const namespace = random() < 0.1 ? "other" : "ns";
        const p = pod(name, onto, pick(apps), random() < 0.6 ? pick(apps) : undefined, namespace);
        placed.set(name, p);
        if (random() < 0.5) cache.addPod(p);
        else cache.assumePod(p);
      } else if (roll < 0.86 && placed.size > 0) {
        // Relabelled, or terminating: spreading stops counting a terminating pod.
        const name = pick([...placed.keys()]);
        const before = placed.get(name)!;
        const after: Pod = {
          ...before,
          metadata: {
            ...before.metadata,
            labels: { app: pick(apps) },
            ...(random() < 0.3 ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
          },
        };
        placed.set(name, after);
        cache.updatePod(after);
      } else if (roll < 0.93 && placed.size > 0) {
        const name = pick([...placed.keys()]);
        cache.removePod(placed.get(name)!);
        cache.forgetPod(`uid-${name}`);
        placed.delete(name);
      } else {
        const name = pick([...nodes.keys()]);
        nodes.delete(name);
        cache.removeNode(name);
      }
      const walked = nodeListsOf(new Map(), cache.nodeList());
      for (const zone of zones) {
        const sum = (parts: readonly { get(k: string, v: string): number }[]) =>
          parts.reduce((total, part) => total + part.get("zone", zone), 0);
        expect(sum(cache.existingAntiAffinity(probe, undefined))).toBe(
          sum(walked.existingAntiAffinity(probe, undefined)),
        );
        for (const term of selectors) {
          expect(cache.podsSelectedBy(term).get("zone", zone)).toBe(
            walked.podsSelectedBy(term).get("zone", zone),
          );
        }
      }
      for (const [i, s] of spreading.entries()) {
        // Counted: the namespace's pods on live nodes with the label, unless terminating.
        const expected: string[] = [];
        for (const info of cache.nodeList()) {
          let n = 0;
          for (const { pod: p } of info.pods.values())
            if (
              p.metadata?.namespace === "ns" &&
              p.metadata.labels?.app === apps[i] &&
              !p.metadata.deletionTimestamp
            )
              n++;
          if (n > 0) expected.push(`${info.name}=${n}`);
        }
        expect(spreadCounts(cache, s)).toEqual(expected.sort());
        expect(spreadCounts(walked, s)).toEqual(expected.sort());
        // A selector asked for the first time now is counted by a scan of the namespace's nodes.
        const fresh = { key: `${s.key}\u0000asked at ${step}`, selector: s.selector };
        expect(spreadCounts(cache, fresh)).toEqual(expected.sort());
      }
      for (const image of images) expect(cache.imageNodeCount(image)).toBe(walked.imageNodeCount(image));
      expect(new Set(cache.havePodsWithRequiredAntiAffinity())).toEqual(
        new Set(walked.havePodsWithRequiredAntiAffinity()),
      );
      expect(new Set(cache.havePodsWithAffinity())).toEqual(new Set(walked.havePodsWithAffinity()));
    }
  });
});
