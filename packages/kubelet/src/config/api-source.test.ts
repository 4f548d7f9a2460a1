import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { classifyUpdate } from "./api-source.js";

/** A pod as the test changes it: its system fields writable. */
interface Writable {
  metadata: Record<string, unknown>;
  spec: NonNullable<Pod["spec"]>;
  status?: Record<string, unknown>;
}

function pod(resourceVersion: string, change: (pod: Writable) => void = () => {}): Pod {
  const made: Writable = {
    metadata: { name: "web", namespace: "default", resourceVersion, labels: { app: "web" } },
    spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx", args: ["a", "b"] }] },
    status: { phase: "Pending" },
  };
  change(made);
  return made as Pod;
}

describe("classifyUpdate (the kubelet's API source)", () => {
  it("ignores a resync of the same resourceVersion", () => {
    expect(classifyUpdate(pod("5"), pod("5"))).toBeUndefined();
  });

  it("answers DELETE for a new deletionTimestamp", () => {
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.metadata.deletionTimestamp = "2026-01-01T00:00:00Z")),
      ),
    ).toBe("DELETE");
  });

  it("answers RECONCILE for a status change alone, and for the same spec with its members in another order", () => {
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.status = { phase: "Running" })),
      ),
    ).toBe("RECONCILE");
    const reordered = pod("6", (p) => {
      p.spec = { containers: [{ args: ["a", "b"], image: "nginx", name: "c" }], nodeName: "node-1" };
    });
    expect(classifyUpdate(pod("5"), reordered)).toBe("RECONCILE");
  });

  it("answers UPDATE for a change to the spec, the labels, the annotations or the grace period", () => {
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.spec!.containers[0]!.image = "nginx:2")),
      ),
    ).toBe("UPDATE");
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.spec!.containers[0]!.args = ["b", "a"])),
      ),
    ).toBe("UPDATE");
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.metadata.labels = { app: "db" })),
      ),
    ).toBe("UPDATE");
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.metadata.annotations = { a: "b" })),
      ),
    ).toBe("UPDATE");
    expect(
      classifyUpdate(
        pod("5"),
        pod("6", (p) => (p.metadata.deletionGracePeriodSeconds = 0)),
      ),
    ).toBe("UPDATE");
  });
});
