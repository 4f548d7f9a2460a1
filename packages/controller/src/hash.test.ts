import type { PodTemplateSpec } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { computeHash, safeEncodeString } from "./hash.js";

const template: PodTemplateSpec = {
  metadata: { labels: { app: "web" } },
  spec: { containers: [{ name: "web", image: "nginx:1.27", ports: [{ containerPort: 80 }] }] },
};

describe("safeEncodeString", () => {
  it("maps digits onto the safe alphabet as apimachinery's SafeEncodeString does", () => {
    expect(safeEncodeString("0123456789")).toBe("456789bcdf");
    expect(safeEncodeString("")).toBe("");
  });
});

describe("computeHash", () => {
  it("is a pinned value for a pinned template, so names survive restarts and upgrades", () => {
    // Changing this value renames every Deployment's ReplicaSets on upgrade: it must never change.
    expect(computeHash(template)).toBe(computeHash(structuredClone(template)));
    expect(computeHash(template)).toMatchInlineSnapshot(`"5b45c7b54c"`);
  });

  it("uses only the safe alphabet's digit images, 1 to 10 characters", () => {
    for (let i = 0; i < 200; i++) {
      const hash = computeHash({ ...template, metadata: { labels: { app: `web-${i}` } } });
      expect(hash).toMatch(/^[456789bcdf]{1,10}$/);
    }
  });

  it("does not depend on the order of fields", () => {
    const reordered: PodTemplateSpec = {
      spec: { containers: [{ ports: [{ containerPort: 80 }], image: "nginx:1.27", name: "web" }] },
      metadata: { labels: { app: "web" } },
    };
    expect(computeHash(reordered)).toBe(computeHash(template));
  });

  it("changes with the template", () => {
    const changed = structuredClone(template);
    changed.spec!.containers[0]!.image = "nginx:1.28";
    expect(computeHash(changed)).not.toBe(computeHash(template));
  });

  it("changes with collisionCount, and a count of 0 differs from none", () => {
    const none = computeHash(template);
    const zero = computeHash(template, 0);
    const one = computeHash(template, 1);
    const max = computeHash(template, 2147483647);
    expect(new Set([none, zero, one, max]).size).toBe(4);
    expect(computeHash(template, 1)).toBe(one);
  });
});
