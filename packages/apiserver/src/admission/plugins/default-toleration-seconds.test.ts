import type { PodSpec } from "@reconcile/api";
import { pods } from "@reconcile/api";
import type { Toleration } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { admitDefaultTolerationSeconds } from "./default-toleration-seconds.js";

const notReady: Toleration = {
  key: "node.kubernetes.io/not-ready",
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: 300,
};
const unreachable: Toleration = {
  key: "node.kubernetes.io/unreachable",
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: 300,
};

// Upstream plugin/pkg/admission/defaulttolerationseconds admission_test.go.
describe("DefaultTolerationSeconds admission", () => {
  const cases: { name: string; tolerations: Toleration[] | undefined; want: Toleration[] }[] = [
    {
      name: "pod has no tolerations, expect add tolerations for not-ready:NoExecute and unreachable:NoExecute",
      tolerations: undefined,
      want: [notReady, unreachable],
    },
    {
      name: "pod has tolerations, but none is for taint not-ready:NoExecute or unreachable:NoExecute, expect add tolerations",
      tolerations: [
        { key: "foo", operator: "Equal", value: "bar", effect: "NoSchedule", tolerationSeconds: 700 },
      ],
      want: [
        { key: "foo", operator: "Equal", value: "bar", effect: "NoSchedule", tolerationSeconds: 700 },
        notReady,
        unreachable,
      ],
    },
    {
      name: "pod specified a toleration for taint not-ready:NoExecute, expect add toleration for unreachable:NoExecute",
      tolerations: [{ ...notReady, tolerationSeconds: 700 }],
      want: [{ ...notReady, tolerationSeconds: 700 }, unreachable],
    },
    {
      name: "pod specified a toleration for taint unreachable:NoExecute, expect add toleration for not-ready:NoExecute",
      tolerations: [{ ...unreachable, tolerationSeconds: 700 }],
      want: [{ ...unreachable, tolerationSeconds: 700 }, notReady],
    },
    {
      name: "pod specified tolerations for both not-ready:NoExecute and unreachable:NoExecute, expect no change",
      tolerations: [
        { ...notReady, tolerationSeconds: 700 },
        { ...unreachable, tolerationSeconds: 700 },
      ],
      want: [
        { ...notReady, tolerationSeconds: 700 },
        { ...unreachable, tolerationSeconds: 700 },
      ],
    },
    {
      name: "pod specified toleration for taint unreachable with no effect, expect add toleration for not-ready:NoExecute",
      tolerations: [{ key: "node.kubernetes.io/unreachable", operator: "Exists", tolerationSeconds: 700 }],
      want: [{ key: "node.kubernetes.io/unreachable", operator: "Exists", tolerationSeconds: 700 }, notReady],
    },
    {
      name: "pod tolerates every taint (empty key, Exists), expect no change",
      tolerations: [{ operator: "Exists", tolerationSeconds: 700 }],
      want: [{ operator: "Exists", tolerationSeconds: 700 }],
    },
    {
      name: "pod tolerates every NoExecute taint, expect no change",
      tolerations: [{ operator: "Exists", effect: "NoExecute" }],
      want: [{ operator: "Exists", effect: "NoExecute" }],
    },
    {
      name: "a NoSchedule toleration of not-ready does not count, expect add both",
      tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoSchedule" }],
      want: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoSchedule" },
        notReady,
        unreachable,
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const spec: PodSpec = { containers: [], ...(c.tolerations ? { tolerations: c.tolerations } : {}) };
      admitDefaultTolerationSeconds(spec);
      expect(spec.tolerations).toEqual(c.want);
    });
  }

  it("runs when a pod is created through the API server", async () => {
    const server = new ApiServer();
    try {
      const created = await server
        .client()
        .resource(pods, "default")
        .create({ metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "nginx" }] } });
      expect(created.spec?.tolerations).toEqual([notReady, unreachable]);
    } finally {
      await server.close();
    }
  });
});
