// Int-or-percent fields as upstream validates them (ValidatePositiveIntOrPercent,
// IsNotMoreThan100Percent, ValidateRollingUpdateDeployment, ValidateRollingUpdateDaemonSet,
// ValidatePodDisruptionBudgetSpec), with the IntOrString printed as Go's %#v prints it.
import { daemonSets, deployments, podDisruptionBudgets } from "@reconcile/api";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { refusalLine as refusal } from "./kinds.test-util.js";

const server = new ApiServer();
afterAll(() => server.close());
const client = server.client();

const percentFormat =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
const template = {
  metadata: { labels: { app: "web" } },
  spec: { containers: [{ name: "web", image: "nginx" }] },
};

describe("int-or-percent fields", () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      "maxUnavailable over 100 %",
      { maxUnavailable: "110%" },
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"110%"}: must not be greater than 100%',
    ],
    [
      "a string that is no percent",
      { maxSurge: "5" },
      `spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"5"}: ${percentFormat}`,
    ],
    [
      "a negative number",
      { maxUnavailable: -1 },
      "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
    ],
    [
      "both zero",
      { maxUnavailable: 0, maxSurge: "0%" },
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ],
  ])("Deployment: %s", async (_name, rollingUpdate, message) => {
    expect(
      await refusal(() =>
        client.resource(deployments, "default").create({
          metadata: { name: "web" },
          spec: {
            selector: { matchLabels: { app: "web" } },
            strategy: { type: "RollingUpdate", rollingUpdate },
            template,
          },
        }),
      ),
    ).toBe(`422 Deployment.apps "web" is invalid: ${message}`);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      "both set",
      { maxUnavailable: 1, maxSurge: 1 },
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
    ],
    [
      "both zero",
      { maxUnavailable: "0%", maxSurge: 0 },
      "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
    ],
    [
      "maxSurge over 100 %",
      { maxUnavailable: 0, maxSurge: "200%" },
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"200%"}: must not be greater than 100%',
    ],
  ])("DaemonSet: %s", async (_name, rollingUpdate, message) => {
    expect(
      await refusal(() =>
        client.resource(daemonSets, "default").create({
          metadata: { name: "agent" },
          spec: {
            selector: { matchLabels: { app: "web" } },
            updateStrategy: { type: "RollingUpdate", rollingUpdate },
            template,
          },
        }),
      ),
    ).toBe(`422 DaemonSet.apps "agent" is invalid: ${message}`);
  });

  it.each<[string, PodDisruptionBudget["spec"], string]>([
    [
      "minAvailable over 100 %",
      { minAvailable: "150%" },
      'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    ],
    [
      "maxUnavailable neither a number nor a percent",
      { maxUnavailable: "half" },
      `spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: ${percentFormat}`,
    ],
    [
      "a selector expression without values",
      { minAvailable: 1, selector: { matchExpressions: [{ key: "app", operator: "In" }] } },
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ],
    [
      "a selector expression with values it may not have",
      {
        minAvailable: 1,
        selector: { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] },
      },
      "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ],
    [
      "an unknown selector operator",
      { minAvailable: 1, selector: { matchExpressions: [{ key: "app", operator: "Near", values: ["x"] }] } },
      'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ],
    [
      "an unknown unhealthyPodEvictionPolicy",
      { minAvailable: 1, unhealthyPodEvictionPolicy: "Sometimes" },
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ],
  ])("PodDisruptionBudget: %s", async (_name, spec, message) => {
    expect(
      await refusal(() =>
        client
          .resource(podDisruptionBudgets, "default")
          .create({ metadata: { name: "pdb" }, spec } as PodDisruptionBudget),
      ),
    ).toBe(`422 PodDisruptionBudget.policy "pdb" is invalid: ${message}`);
  });

  it("accepts what upstream accepts: 100 %, a whole number, a DaemonSet surging with none unavailable", async () => {
    await client.resource(podDisruptionBudgets, "default").create({
      metadata: { name: "ok" },
      spec: {
        minAvailable: "100%",
        selector: { matchLabels: { app: "web" } },
        unhealthyPodEvictionPolicy: "AlwaysAllow",
      },
    } as PodDisruptionBudget);
    await client.resource(daemonSets, "default").create({
      metadata: { name: "surging" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "10%" } },
        template,
      },
    });
  });
});
