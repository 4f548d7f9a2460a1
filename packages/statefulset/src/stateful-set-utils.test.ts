import type { Pod, StatefulSet } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  applyRevision,
  identityMatches,
  newStatefulSetPod,
  newVersionedStatefulSetPod,
  parentNameAndOrdinal,
  revisionPatch,
  storageMatches,
} from "./stateful-set-utils.js";

const set: StatefulSet = {
  metadata: { name: "web", namespace: "ns", uid: "u" },
  spec: {
    replicas: 3,
    serviceName: "nginx",
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "nginx:1" }] },
    },
    volumeClaimTemplates: [{ metadata: { name: "data" } }],
    updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } },
  },
};

describe("StatefulSet identities", () => {
  it.each([
    ["web-0", ["web", 0]],
    ["my-web-12", ["my-web", 12]],
    ["web", ["", -1]],
    ["web-", ["", -1]],
    ["web-x", ["", -1]],
    ["web-99999999999", ["web", -1]],
  ] as const)("reads %s as %j", (name, expected) => {
    expect(parentNameAndOrdinal({ metadata: { name } })).toEqual(expected);
  });

  it("makes a member whose identity and storage match, and notices each drift", () => {
    const pod = newStatefulSetPod(set, 1);
    expect(pod.metadata?.name).toBe("web-1");
    expect(pod.metadata?.generateName).toBeUndefined();
    expect(identityMatches(set, pod)).toBe(true);
    expect(storageMatches(set, pod)).toBe(true);
    const renamed: Pod = { ...pod, metadata: { ...pod.metadata, labels: { app: "web" } } };
    expect(identityMatches(set, renamed)).toBe(false);
    const otherNamespace: Pod = { ...pod, metadata: { ...pod.metadata, namespace: "other" } };
    expect(identityMatches(set, otherNamespace)).toBe(false);
    const unmounted: Pod = { ...pod, spec: { ...pod.spec!, volumes: [] } };
    expect(storageMatches(set, unmounted)).toBe(false);
  });

  it("puts ordinals below the partition at the current revision and the rest at the update revision", () => {
    const updated = structuredClone(set);
    updated.spec!.template.spec!.containers[0]!.image = "nginx:2";
    const low = newVersionedStatefulSetPod(set, updated, "web-a", "web-b", 1);
    const high = newVersionedStatefulSetPod(set, updated, "web-a", "web-b", 2);
    expect([low.metadata?.labels?.["controller-revision-hash"], low.spec?.containers[0]?.image]).toEqual([
      "web-a",
      "nginx:1",
    ]);
    expect([high.metadata?.labels?.["controller-revision-hash"], high.spec?.containers[0]?.image]).toEqual([
      "web-b",
      "nginx:2",
    ]);
  });

  it("restores the template a revision holds, and nothing else", () => {
    const patch = revisionPatch(set);
    const changed = structuredClone(set);
    changed.spec!.template.spec!.containers[0]!.image = "nginx:9";
    changed.spec!.replicas = 7;
    const restored = applyRevision(changed, { revision: 1, data: patch });
    expect(restored.spec?.template).toEqual(set.spec?.template);
    expect(restored.spec?.replicas).toBe(7);
  });
});
