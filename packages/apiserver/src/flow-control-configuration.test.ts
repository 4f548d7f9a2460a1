import { flowSchemas, type KubeObject, priorityLevelConfigurations, StatusError } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import type { FlowSchema, PriorityLevelConfiguration } from "kubernetes-types/flowcontrol/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";
import {
  configConsumerManager,
  configProducerManager,
  ensurePeriodMs,
} from "./flow-control-configuration.js";
import { autoUpdateAnnotation, suggestedPriorityLevels } from "./kinds/flow-control-bootstrap.js";
import { closeKubectlClusters, kubectlCluster } from "./testing/index.js";

// API Priority and Fairness objects: kube-apiserver v1.32's bootstrap
// configuration kept as its config producer keeps it, the Dangling condition
// its config consumer writes, and the kinds' own defaults and validation.

afterEach(closeKubectlClusters);

type FS = FlowSchema & KubeObject;
type PL = PriorityLevelConfiguration & KubeObject;

async function started() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = new ApiServer({ clock, flowControlBootstrap: true });
  await api.flush();
  return {
    api,
    clock,
    schemas: api.client().resource(flowSchemas),
    levels: api.client().resource(priorityLevelConfigurations),
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof StatusError) return `${error.status.code} ${error.status.message}`;
    throw error;
  }
  throw new Error("the write was accepted");
}

describe("the bootstrap configuration", () => {
  it("is off unless asked for", async () => {
    const api = new ApiServer();
    try {
      await api.flush();
      expect((await api.client().resource(flowSchemas).list({})).items).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("creates the mandatory and suggested objects, each FlowSchema Found by its consumer", async () => {
    const { api, schemas, levels } = await started();
    try {
      const fs = (await schemas.list({})).items as FS[];
      expect(fs.map((f) => f.metadata?.name)).toEqual([
        "catch-all",
        "endpoint-controller",
        "exempt",
        "global-default",
        "kube-controller-manager",
        "kube-scheduler",
        "kube-system-service-accounts",
        "probes",
        "service-accounts",
        "system-leader-election",
        "system-node-high",
        "system-nodes",
        "workload-leader-election",
      ]);
      const probes = fs.find((f) => f.metadata?.name === "probes")!;
      expect(probes.metadata?.annotations).toEqual({ [autoUpdateAnnotation]: "true" });
      expect(probes.spec).toEqual({
        priorityLevelConfiguration: { name: "exempt" },
        matchingPrecedence: 2,
        rules: [
          {
            subjects: [
              { kind: "Group", group: { name: "system:unauthenticated" } },
              { kind: "Group", group: { name: "system:authenticated" } },
            ],
            nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] }],
          },
        ],
      });
      expect(probes.status).toEqual({
        conditions: [
          {
            type: "Dangling",
            status: "False",
            lastTransitionTime: "2026-01-01T00:00:00Z",
            reason: "Found",
            message:
              'This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists',
          },
        ],
      });
      expect(probes.metadata?.managedFields?.map((m) => [m.manager, m.operation, m.subresource])).toEqual([
        [configConsumerManager, "Apply", "status"],
        [configProducerManager, "Update", undefined],
      ]);
      expect(((await levels.list({})).items as PL[]).map((l) => l.metadata?.name)).toEqual([
        "catch-all",
        "exempt",
        "global-default",
        "leader-election",
        "node-high",
        "system",
        "workload-high",
        "workload-low",
      ]);
    } finally {
      await api.close();
    }
  });

  it("marks a FlowSchema whose level is missing as Dangling", async () => {
    const { api, schemas } = await started();
    try {
      await schemas.create({
        metadata: { name: "mine" },
        spec: {
          priorityLevelConfiguration: { name: "nowhere" },
          rules: [
            {
              subjects: [{ kind: "User", user: { name: "jane" } }],
              nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
            },
          ],
        },
      } as FS);
      await api.flush();
      const mine = (await schemas.get("mine")) as FS;
      expect(mine.spec?.matchingPrecedence).toBe(1000);
      expect(mine.status?.conditions?.[0]).toMatchObject({
        type: "Dangling",
        status: "True",
        reason: "NotFound",
        message:
          'This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object',
      });
    } finally {
      await api.close();
    }
  });

  it("puts changed specs back every minute unless the operator opted out, and recreates the mandatory", async () => {
    const { api, clock, schemas, levels } = await started();
    try {
      const system = (await levels.get("system")) as PL;
      const changed = {
        ...system,
        spec: { ...system.spec, limited: { ...system.spec!.limited, nominalConcurrencyShares: 99 } },
      } as PL;
      await levels.update(changed);
      const low = (await levels.get("workload-low")) as PL;
      await levels.update({
        ...low,
        metadata: { ...low.metadata, annotations: { [autoUpdateAnnotation]: "false" } },
        spec: { ...low.spec, limited: { ...low.spec!.limited, nominalConcurrencyShares: 7 } },
      } as PL);
      await schemas.delete("catch-all");
      await schemas.delete("probes");
      await clock.advance(ensurePeriodMs);
      await api.flush();
      const shares = async (name: string) =>
        ((await levels.get(name)) as PL).spec?.limited?.nominalConcurrencyShares;
      expect(await shares("system")).toBe(
        suggestedPriorityLevels.find((l) => l.metadata?.name === "system")!.spec!.limited!
          .nominalConcurrencyShares,
      );
      expect(await shares("workload-low")).toBe(7);
      // Both are back: a deleted suggested object is created again too.
      expect((await schemas.get("catch-all")).metadata?.name).toBe("catch-all");
      expect((await schemas.get("probes")).metadata?.name).toBe("probes");
    } finally {
      await api.close();
    }
  });

  it("deletes objects marked for automatic update that are not part of the bootstrap set", async () => {
    const { api, clock, levels } = await started();
    try {
      const queued = { type: "Queue", queuing: { queues: 8, handSize: 2, queueLengthLimit: 5 } };
      await levels.create({
        metadata: { name: "retired", annotations: { [autoUpdateAnnotation]: "true" } },
        spec: { type: "Limited", limited: { limitResponse: queued } },
      } as PL);
      await levels.create({
        metadata: { name: "kept" },
        spec: { type: "Limited", limited: { limitResponse: queued } },
      } as PL);
      await clock.advance(ensurePeriodMs);
      await api.flush();
      const names = ((await levels.list({})).items as PL[]).map((l) => l.metadata?.name);
      expect(names).toContain("kept");
      expect(names).not.toContain("retired");
      expect(((await levels.get("kept")) as PL).spec?.limited).toEqual({
        nominalConcurrencyShares: 30,
        lendablePercent: 0,
        limitResponse: queued,
      });
    } finally {
      await api.close();
    }
  });
});

describe("FlowSchema and PriorityLevelConfiguration validation", () => {
  it("keeps the mandatory specs fixed (the exempt level's shares excepted)", async () => {
    const { api, schemas, levels } = await started();
    try {
      const exemptFS = (await schemas.get("exempt")) as FS;
      expect(
        await refusal(
          schemas.update({ ...exemptFS, spec: { ...exemptFS.spec, matchingPrecedence: 2 } } as FS),
        ),
      ).toMatch(
        /^422 FlowSchema\.flowcontrol\.apiserver\.k8s\.io "exempt" is invalid: spec: Invalid value: .*: spec of 'exempt' must equal the fixed value$/,
      );
      const exemptPL = (await levels.get("exempt")) as PL;
      const updated = (await levels.update({
        ...exemptPL,
        spec: { type: "Exempt", exempt: { nominalConcurrencyShares: 5, lendablePercent: 10 } },
      } as PL)) as PL;
      expect(updated.spec?.exempt).toEqual({ nominalConcurrencyShares: 5, lendablePercent: 10 });
    } finally {
      await api.close();
    }
  });

  it("names each problem as upstream does", async () => {
    const api = new ApiServer();
    try {
      expect(
        await refusal(
          api
            .client()
            .resource(flowSchemas)
            .create({
              metadata: { name: "bad" },
              spec: {
                priorityLevelConfiguration: { name: "" },
                matchingPrecedence: 1,
                distinguisherMethod: { type: "ByColour" },
                rules: [
                  {
                    subjects: [{ kind: "User" }, { kind: "Robot" }],
                    resourceRules: [{ verbs: ["get", "*"], apiGroups: [], resources: ["pods"] }],
                    nonResourceRules: [{ verbs: ["fly"], nonResourceURLs: ["healthz", "/a/*/b"] }],
                  },
                ],
              },
            } as never),
        ),
      ).toBe(
        [
          '422 FlowSchema.flowcontrol.apiserver.k8s.io "bad" is invalid: [',
          "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1, ",
          'spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByColour"}: supported values: "ByNamespace", "ByUser", ',
          "spec.priorityLevelConfiguration.name: Required value: must reference a priority level, ",
          "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User', ",
          'spec.rules[0].subjects[1].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User", ',
          `spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"get", "*"}: if '*' is present, must not specify other verbs, `,
          "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group, ",
          "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace, ",
          'spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{"fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch", ',
          'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash, ',
          'spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a/*/b": wildcard can only do suffix matching]',
        ].join(""),
      );
      expect(
        await refusal(
          api
            .client()
            .resource(priorityLevelConfigurations)
            .create({
              metadata: { name: "bad" },
              spec: {
                type: "Limited",
                limited: {
                  lendablePercent: 101,
                  limitResponse: { type: "Queue", queuing: { queues: 4, handSize: 5 } },
                },
              },
            } as never),
        ),
      ).toBe(
        [
          '422 PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "bad" is invalid: [',
          "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, ",
          "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)]",
        ].join(""),
      );
    } finally {
      await api.close();
    }
  });
});

describe("kubectl and API Priority and Fairness", () => {
  it("prints FlowSchemas by precedence and priority levels with their queuing, as a v1.32 cluster does", async () => {
    const { kubectl, api } = await kubectlCluster({ flowControlBootstrap: true });
    await api.flush();
    // The AGE column (the fifth) varies; every other cell is as a v1.32 cluster prints it.
    const cells = (text: string) =>
      text
        .trimEnd()
        .split("\n")
        .map((line) =>
          line
            .split(/\s+/)
            .filter((_, i) => i !== 4)
            .join(" "),
        );
    const schemas = await kubectl(["get", "flowschemas"]);
    expect(schemas.stdout.split("\n")[0]).toBe(
      "NAME                           PRIORITYLEVEL     MATCHINGPRECEDENCE   DISTINGUISHERMETHOD   AGE   MISSINGPL",
    );
    expect(cells(schemas.stdout)).toEqual([
      "NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD MISSINGPL",
      "exempt exempt 1 <none> False",
      "probes exempt 2 <none> False",
      "system-leader-election leader-election 100 ByUser False",
      "endpoint-controller workload-high 150 ByUser False",
      "workload-leader-election leader-election 200 ByUser False",
      "system-node-high node-high 400 ByUser False",
      "system-nodes system 500 ByUser False",
      "kube-controller-manager workload-high 800 ByNamespace False",
      "kube-scheduler workload-high 800 ByNamespace False",
      "kube-system-service-accounts workload-high 900 ByNamespace False",
      "service-accounts workload-low 9000 ByUser False",
      "global-default global-default 9900 ByUser False",
      "catch-all catch-all 10000 ByUser False",
    ]);
    const levels = (await kubectl(["get", "prioritylevelconfigurations"])).stdout.split("\n");
    expect(
      levels.map((line) =>
        line
          .split(/\s+/)
          .filter((_, i) => i !== 6)
          .join(" "),
      ),
    ).toEqual([
      "NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT",
      "catch-all Limited 5 <none> <none> <none>",
      "exempt Exempt <none> <none> <none> <none>",
      "global-default Limited 20 128 6 50",
      "leader-election Limited 10 16 4 50",
      "node-high Limited 40 64 6 50",
      "system Limited 30 64 6 50",
      "workload-high Limited 40 128 6 50",
      "workload-low Limited 100 128 6 50",
      "",
    ]);
  });
});
