import { type KubeObject, type Pod, pods, runtimeClasses, StatusError } from "@reconcile/api";
import type { RuntimeClass } from "kubernetes-types/node/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { mergeTolerations } from "../admission/plugins/runtime-class.js";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// node.k8s.io/v1 RuntimeClasses (pkg/apis/node/validation) and the
// RuntimeClass admission plugin (plugin/pkg/admission/runtimeclass), which
// gives a pod its class's overhead and scheduling constraints.

afterEach(closeKubectlClusters);

type Class = RuntimeClass & KubeObject;

const runtimeClass = (name: string, extra: Partial<RuntimeClass> = {}): Class =>
  ({
    apiVersion: "node.k8s.io/v1",
    kind: "RuntimeClass",
    metadata: { name },
    handler: name,
    ...extra,
  }) as Class;

const pod = (name: string, spec: Partial<Pod["spec"]> = {}): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
  }) as Pod;

async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof StatusError)) throw error;
    return { code: error.status.code ?? 0, message: error.status.message ?? "" };
  }
  throw new Error("the write was accepted");
}

describe("RuntimeClass validation", () => {
  it("wants a DNS label for a handler, valid overhead and scheduling, and keeps the handler", async () => {
    const api = new ApiServer();
    const classes = api.client().resource(runtimeClasses);
    try {
      expect(
        await refusal(
          classes.create(
            runtimeClass("bad", {
              handler: "Run_C",
              overhead: { podFixed: { cpu: "-1" } },
              scheduling: {
                nodeSelector: { "a b": "x" },
                tolerations: [
                  { operator: "Equal", value: "v" },
                  { key: "k", operator: "Exists", value: "v" },
                  { key: "k", operator: "Near" },
                  { key: "k", tolerationSeconds: 5, effect: "NoSchedule" },
                ],
              },
            }),
          ),
        ),
      ).toEqual({
        code: 422,
        message: [
          'RuntimeClass.node.k8s.io "bad" is invalid: [',
          "handler: Invalid value: \"Run_C\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ",
          'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0, ',
          "scheduling.nodeSelector: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), ",
          'scheduling.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys", ',
          'scheduling.tolerations[1].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\', ',
          'scheduling.tolerations[2].operator: Unsupported value: "Near": supported values: "Equal", "Exists", ',
          "scheduling.tolerations[3].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set]",
        ].join(""),
      });
      const created = await classes.create(runtimeClass("gvisor", { handler: "runsc" }));
      expect(await refusal(classes.update({ ...created, handler: "runc" }))).toEqual({
        code: 422,
        message:
          'RuntimeClass.node.k8s.io "gvisor" is invalid: handler: Invalid value: "runc": field is immutable',
      });
    } finally {
      await api.close();
    }
  });
});

describe("the RuntimeClass admission plugin", () => {
  it("refuses a pod whose class does not exist, or that sets an overhead of its own", async () => {
    const api = new ApiServer();
    const podClient = api.client().resource(pods, "default");
    try {
      expect(await refusal(podClient.create(pod("a", { runtimeClassName: "ghost" })))).toEqual({
        code: 403,
        message: 'pods "a" is forbidden: pod rejected: RuntimeClass "ghost" not found',
      });
      expect(await refusal(podClient.create(pod("b", { overhead: { cpu: "1" } })))).toEqual({
        code: 403,
        message:
          'pods "b" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
      });
      await api
        .client()
        .resource(runtimeClasses)
        .create(runtimeClass("kata", { overhead: { podFixed: { cpu: "250m" } } }));
      expect(
        await refusal(podClient.create(pod("c", { runtimeClassName: "kata", overhead: { cpu: "1" } }))),
      ).toEqual({
        code: 403,
        message: `pods "c" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
      });
      // The same quantity written otherwise is the same overhead.
      const d = await podClient.create(pod("d", { runtimeClassName: "kata", overhead: { cpu: "0.25" } }));
      expect(d.spec?.overhead).toEqual({ cpu: "250m" });
    } finally {
      await api.close();
    }
  });

  it("gives the pod the class's overhead, node selector and tolerations", async () => {
    const api = new ApiServer();
    const podClient = api.client().resource(pods, "default");
    try {
      await api
        .client()
        .resource(runtimeClasses)
        .create(
          runtimeClass("kata", {
            overhead: { podFixed: { cpu: "250m", memory: "120Mi" } },
            scheduling: {
              nodeSelector: { sandbox: "kata" },
              tolerations: [{ key: "sandbox", operator: "Exists", effect: "NoSchedule" }],
            },
          }),
        );
      const created = await podClient.create(
        pod("a", {
          runtimeClassName: "kata",
          nodeSelector: { zone: "a" },
          tolerations: [{ key: "sandbox", operator: "Equal", value: "kata", effect: "NoSchedule" }],
        }),
      );
      expect(created.spec?.overhead).toEqual({ cpu: "250m", memory: "120Mi" });
      expect(created.spec?.nodeSelector).toEqual({ zone: "a", sandbox: "kata" });
      // The class's toleration covers the pod's, which goes; DefaultTolerationSeconds ran first.
      expect(created.spec?.tolerations).toEqual([
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
        {
          key: "node.kubernetes.io/unreachable",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
        { key: "sandbox", operator: "Exists", effect: "NoSchedule" },
      ]);
      expect(
        await refusal(
          podClient.create(pod("b", { runtimeClassName: "kata", nodeSelector: { sandbox: "gvisor" } })),
        ),
      ).toEqual({
        code: 403,
        message:
          'pods "b" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor',
      });
    } finally {
      await api.close();
    }
  });

  it("merges tolerations as upstream's MergeTolerations (its test table)", () => {
    const cases: [
      string,
      Parameters<typeof mergeTolerations>[0],
      Parameters<typeof mergeTolerations>[1],
      string[],
    ][] = [
      [
        "disjoint",
        [{ key: "a", operator: "Equal", value: "x" }],
        [{ key: "b", operator: "Exists" }],
        ["a=x", "b"],
      ],
      ["identical keep one", [{ key: "a", operator: "Exists" }], [{ key: "a", operator: "Exists" }], ["a"]],
      [
        "exists covers equal",
        [{ key: "a", operator: "Equal", value: "x" }],
        [{ key: "a", operator: "Exists" }],
        ["a"],
      ],
      ["empty key exists covers all", [{ key: "a", operator: "Exists" }], [{ operator: "Exists" }], ["*"]],
      [
        "longer NoExecute seconds cover shorter",
        [{ key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 10 }],
        [{ key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 20 }],
        ["a:NoExecute:20"],
      ],
      [
        "an effect does not cover another",
        [{ key: "a", operator: "Exists", effect: "NoSchedule" }],
        [{ key: "a", operator: "Exists", effect: "NoExecute" }],
        ["a:NoSchedule", "a:NoExecute"],
      ],
    ];
    const show = (t: ReturnType<typeof mergeTolerations>[number]) =>
      [
        t.key ? t.key + (t.operator === "Equal" ? `=${t.value}` : "") : "*",
        ...(t.effect ? [t.effect] : []),
        ...(t.tolerationSeconds != null ? [String(t.tolerationSeconds)] : []),
      ].join(":");
    for (const [name, first, second, expected] of cases)
      expect([name, mergeTolerations(first, second).map(show)]).toEqual([name, expected]);
  });
});

describe("kubectl and RuntimeClasses", () => {
  it("prints NAME, HANDLER and AGE", async () => {
    const { kubectl, client } = await kubectlCluster();
    await client.resource(runtimeClasses).create(runtimeClass("gvisor", { handler: "runsc" }));
    const listed = await kubectl(["get", "runtimeclass"]);
    expect(listed.stdout).toMatch(/^NAME {5}HANDLER {3}AGE\ngvisor {3}runsc {5}\d+s\n$/);
  });
});
