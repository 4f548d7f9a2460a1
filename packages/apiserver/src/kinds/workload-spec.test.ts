import type { LabelSelector } from "@reconcile/api";
import type { PodTemplateSpec } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { FieldErrors } from "../registry/field-errors.js";
import { validateSelectorAndTemplate, type WorkloadSelectorRule } from "./workload-spec.js";

const template: PodTemplateSpec = { metadata: { labels: { app: "web" } }, spec: { containers: [] } };

function messages(
  selector: LabelSelector | undefined,
  rule: WorkloadSelectorRule,
  tmpl: PodTemplateSpec | null = template,
): string[] {
  const errors = new FieldErrors();
  validateSelectorAndTemplate(selector, tmpl ?? undefined, errors, rule);
  return errors.list.map((error) => error.message);
}

// The selector halves of upstream's ValidateDeploymentSpec/ValidateReplicaSetSpec,
// ValidateStatefulSetSpec and ValidateDaemonSetSpec.
describe("validateSelectorAndTemplate", () => {
  it("a selector that selects the template passes for every kind", () => {
    for (const rule of ["deployment", "statefulset", "daemonset"] as const) {
      expect(messages({ matchLabels: { app: "web" } }, rule)).toEqual([]);
    }
  });

  it("a missing selector is Required for Deployments, ReplicaSets and StatefulSets, and selects nothing", () => {
    const mismatch =
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`';
    expect(messages(undefined, "deployment")).toEqual(["spec.selector: Required value", mismatch]);
    expect(messages(undefined, "statefulset")).toEqual(["spec.selector: Required value", mismatch]);
  });

  it("a DaemonSet without a selector selects nothing, so its template does not match", () => {
    expect(messages(undefined, "daemonset")).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
  });

  it("an empty selector is invalid, named after the kind as upstream names it", () => {
    expect(messages({}, "deployment")).toEqual([
      "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
    ]);
    expect(messages({ matchLabels: {} }, "statefulset")).toEqual([
      "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
    ]);
    expect(messages({}, "daemonset")).toEqual([
      "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
    ]);
  });

  it("a selector that misses the template's labels, and one that cannot be parsed", () => {
    expect(messages({ matchLabels: { app: "db" } }, "deployment")).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
    const bad = messages(
      { matchExpressions: [{ key: "app", operator: "Near", values: ["x"] }] },
      "statefulset",
    );
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^spec\.selector: Invalid value: .*"Near"/);
  });

  it("a missing template is Required", () => {
    expect(messages({ matchLabels: { app: "web" } }, "deployment", null)).toEqual([
      "spec.template: Required value",
    ]);
  });
});
