import { nodes, pods, priorityClasses } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";

const container = { name: "c", image: "nginx" };

async function withServer(plugins: string[], test: (server: ApiServer) => Promise<void>): Promise<void> {
  const server = new ApiServer({ admissionPlugins: plugins });
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

// Upstream plugin/pkg/admission/priority/admission_test.go (TestPodAdmission, TestPriorityClassAdmission).
describe("Priority admission", () => {
  it("gives a pod without a class priority 0 and PreemptLowerPriority; the system classes exist from the start", () =>
    withServer(["Priority"], async (server) => {
      const client = server.client();
      const pod = await client
        .resource(pods, "default")
        .create({ metadata: { name: "p" }, spec: { containers: [container] } });
      expect(pod.spec?.priority).toBe(0);
      expect(pod.spec?.preemptionPolicy).toBe("PreemptLowerPriority");
      expect(pod.spec?.priorityClassName).toBeUndefined();
      const critical = await client.resource(pods, "kube-system").create({
        metadata: { name: "dns" },
        spec: { priorityClassName: "system-cluster-critical", containers: [container] },
      });
      expect(critical.spec?.priority).toBe(2_000_000_000);
      const names = (await client.resource(priorityClasses).list()).items.map((pc) => pc.metadata?.name);
      expect(names).toEqual(["system-cluster-critical", "system-node-critical"]);
    }));

  it("takes the global default class, refuses an unknown class and a priority that differs from the class's", () =>
    withServer(["Priority"], async (server) => {
      const client = server.client();
      await client
        .resource(priorityClasses)
        .create({ metadata: { name: "high" }, value: 1000, globalDefault: true, preemptionPolicy: "Never" });
      const pod = await client
        .resource(pods, "default")
        .create({ metadata: { name: "p" }, spec: { containers: [container] } });
      expect(pod.spec).toMatchObject({
        priorityClassName: "high",
        priority: 1000,
        preemptionPolicy: "Never",
      });
      await expect(
        client.resource(pods, "default").create({
          metadata: { name: "q" },
          spec: { priorityClassName: "missing", containers: [container] },
        }),
      ).rejects.toMatchObject({
        code: 403,
        message: 'pods "q" is forbidden: no PriorityClass with name missing was found',
      });
      await expect(
        client.resource(pods, "default").create({
          metadata: { name: "r" },
          spec: { priority: 5, containers: [container] },
        }),
      ).rejects.toMatchObject({
        code: 403,
        message:
          'pods "r" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
      });
    }));

  it("allows one global default PriorityClass only", () =>
    withServer(["Priority"], async (server) => {
      const classes = server.client().resource(priorityClasses);
      await classes.create({ metadata: { name: "a" }, value: 1, globalDefault: true });
      await expect(
        classes.create({ metadata: { name: "b" }, value: 2, globalDefault: true }),
      ).rejects.toMatchObject({
        code: 403,
        message:
          'priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default. Only one default can exist',
      });
      // The default itself may be updated.
      const a = await classes.get("a");
      await classes.update({ ...a, description: "the default" });
    }));

  it("keeps a pod's priority through an update that leaves it out", () =>
    withServer(["Priority"], async (server) => {
      const client = server.client().resource(pods, "default");
      const pod = await client.create({ metadata: { name: "p" }, spec: { containers: [container] } });
      const { priority: _p, preemptionPolicy: _pp, ...spec } = pod.spec!;
      const updated = await client.update({
        ...pod,
        metadata: { ...pod.metadata, labels: { a: "b" } },
        spec,
      });
      expect(updated.spec?.priority).toBe(0);
      expect(updated.spec?.preemptionPolicy).toBe("PreemptLowerPriority");
    }));
});

// Upstream plugin/pkg/admission/nodetaint/admission_test.go.
describe("TaintNodesByCondition admission", () => {
  it("adds the not-ready NoSchedule taint to a new node unless it has one", () =>
    withServer(["TaintNodesByCondition"], async (server) => {
      const client = server.client().resource(nodes);
      const plain = await client.create({ metadata: { name: "n1" } });
      expect(plain.spec?.taints).toEqual([{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }]);
      const tainted = await client.create({
        metadata: { name: "n2" },
        spec: {
          taints: [
            { key: "foo", value: "bar", effect: "NoSchedule" },
            { key: "node.kubernetes.io/not-ready", value: "x", effect: "NoSchedule" },
          ],
        },
      });
      expect(tainted.spec?.taints).toHaveLength(2);
      // Updates are not looked at.
      const untainted = await client.update({ ...plain, spec: {} });
      expect(untainted.spec?.taints).toBeUndefined();
    }));
});
