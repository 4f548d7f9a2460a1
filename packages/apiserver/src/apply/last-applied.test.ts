import { describe, expect, it } from "vitest";
import { applyWithLastApplied, lastAppliedAnnotation, trackUpdate } from "./index.js";

type Obj = Record<string, unknown>;
const now = new Date("2024-01-02T00:00:00Z");

function deployment(
  options: { replicas?: number; image?: string; labels?: Record<string, string> } = {},
): Obj {
  const spec: Obj = {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "nginx", image: options.image ?? "nginx:1.25" }] },
    },
  };
  if (options.replicas !== undefined) spec.replicas = options.replicas;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels: options.labels ?? { app: "web" } },
    spec,
  };
}

/** A Deployment made by client-side apply (replicas 3), then scaled to 100000 by another manager. */
function clientSideApplied(): Obj {
  const config = deployment({ replicas: 3 });
  const withAnnotation = structuredClone(config);
  (withAnnotation.metadata as Obj).annotations = { [lastAppliedAnnotation]: JSON.stringify(config) };
  let live = trackUpdate({
    before: undefined,
    after: withAnnotation,
    manager: "kubectl-client-side-apply",
    apiVersion: "apps/v1",
    now,
  });
  const scaled = structuredClone(live);
  (scaled.spec as Obj).replicas = 100000;
  live = trackUpdate({ before: live, after: scaled, manager: "hpa", apiVersion: "apps/v1", now });
  return live;
}

describe("applyWithLastApplied", () => {
  it("still refuses a value that differs from live even though the last-applied configuration had it", () => {
    const live = clientSideApplied();
    expect(() =>
      applyWithLastApplied({
        live,
        config: deployment({ replicas: 3 }),
        manager: "kubectl",
        apiVersion: "apps/v1",
        now,
      }),
    ).toThrow('Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas');
  });

  it("forgives conflicts on fields the last-applied configuration set to their live values, and rewrites the annotation", () => {
    const live = clientSideApplied();
    const config = deployment({ image: "nginx:1.26", labels: { app: "web", tier: "front" } });
    const result = applyWithLastApplied({ live, config, manager: "kubectl", apiVersion: "apps/v1", now });
    expect((result.spec as Obj).replicas).toBe(100000);
    expect((result.metadata as Obj).labels).toEqual({ app: "web", tier: "front" });
    const annotations = (result.metadata as Obj).annotations as Record<string, string>;
    expect(JSON.parse(annotations[lastAppliedAnnotation]!)).toEqual(config);
  });

  it("gives no such help to another manager", () => {
    const live = clientSideApplied();
    const config = deployment({ image: "nginx:1.26" });
    expect(() =>
      applyWithLastApplied({ live, config, manager: "other", apiVersion: "apps/v1", now }),
    ).toThrow(
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.template.spec.containers[name="nginx"].image',
    );
  });
});
