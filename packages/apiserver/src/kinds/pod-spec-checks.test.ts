// Upstream ValidatePodSpec's volume, mount, environment, resource and scheduling
// checks, and the checks of other kinds users mistype: Ingress, NetworkPolicy,
// Node, Service, StatefulSet, DaemonSet, StorageClass and ClusterRoleBinding.
import {
  clusterRoleBindings,
  daemonSets,
  ingresses,
  networkPolicies,
  nodes,
  type Pod,
  persistentVolumes,
  pods,
  services,
  statefulSets,
  storageClasses,
} from "@reconcile/api";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { refusedWith } from "./kinds.test-util.js";

const server = new ApiServer();
afterAll(() => server.close());
const client = server.client();
let created = 0;

async function refusal(write: () => Promise<unknown>): Promise<string> {
  return (await refusedWith(write)).message;
}

const container = { name: "app", image: "busybox" };

describe("pod spec checks", () => {
  it.each<[string, NonNullable<Pod["spec"]>, string]>([
    [
      "a volume with two sources",
      { volumes: [{ name: "v", emptyDir: {}, configMap: { name: "c" } }], containers: [container] },
      "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
    ],
    [
      "a mount of a volume the pod does not have, and a path mounted twice",
      {
        volumes: [{ name: "data", emptyDir: {} }],
        containers: [
          {
            ...container,
            volumeMounts: [
              { name: "nope", mountPath: "/x" },
              { name: "data", mountPath: "/x" },
            ],
          },
        ],
      },
      '[spec.containers[0].volumeMounts[0].name: Not found: "nope", spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/x": must be unique]',
    ],
    [
      "an environment variable name with '='",
      { containers: [{ ...container, env: [{ name: "A=B", value: "x" }] }] },
      `spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
    ],
    [
      "an empty environment variable name",
      { containers: [{ ...container, env: [{ name: "", value: "x" }] }] },
      '[spec.containers[0].env[0].name: Required value, spec.containers[0].env[0].name: Invalid value: "": environment variable name must be non-empty]',
    ],
    [
      "a cpu request above its limit",
      { containers: [{ ...container, resources: { requests: { cpu: "2" }, limits: { cpu: "1500m" } } }] },
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1500m',
    ],
    [
      "an extended resource request below its limit",
      {
        containers: [
          {
            ...container,
            resources: { requests: { "example.com/gpu": "1" }, limits: { "example.com/gpu": "2" } },
          },
        ],
      },
      'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
    ],
    [
      "a toleration with operator Exists and a value",
      { tolerations: [{ key: "a", operator: "Exists", value: "v" }], containers: [container] },
      'spec.tolerations[0].operator: Invalid value: core.Toleration{Key:"a", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'',
    ],
    [
      "a node selector key that is not a label key",
      { nodeSelector: { "bad key!": "v" }, containers: [container] },
      `spec.nodeSelector: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ],
    [
      "a node affinity operator that does not exist",
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: "a", operator: "Near", values: ["x"] }] }],
            },
          },
        },
        containers: [container],
      },
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ],
    [
      "dnsPolicy None without a dnsConfig",
      { dnsPolicy: "None", containers: [container] },
      "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
    ],
    [
      "a negative user",
      { securityContext: { runAsUser: -1 }, containers: [container] },
      "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
    ],
    [
      "a negative probe period",
      { containers: [{ ...container, livenessProbe: { exec: { command: ["true"] }, periodSeconds: -1 } }] },
      "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
    ],
    [
      "a host port out of range",
      { containers: [{ ...container, ports: [{ containerPort: 80, hostPort: 70000 }] }] },
      "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ],
    [
      "resources that are not resources of containers (the limit is also defaulted into requests)",
      { containers: [{ ...container, resources: { requests: { gpu: "1" }, limits: { pods: "1" } } }] },
      '[spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for containers, spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified, spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers]',
    ],
  ])("refuses %s", async (_name, spec, detail) => {
    const name = `p-${created++}`;
    expect(await refusal(() => client.resource(pods, "default").create({ metadata: { name }, spec }))).toBe(
      `Pod "${name}" is invalid: ${detail}`,
    );
  });

  it("accepts names of printable ASCII (relaxed validation, on by default in v1.32) and requests within limits", async () => {
    const pod = await client.resource(pods, "default").create({
      metadata: { name: "fine" },
      spec: {
        volumes: [{ name: "data", emptyDir: {} }],
        containers: [
          {
            ...container,
            env: [{ name: "1 odd.name", value: "x" }],
            volumeMounts: [{ name: "data", mountPath: "/data" }],
            resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } },
          },
        ],
      },
    });
    expect(pod.spec?.containers[0]?.env?.[0]?.name).toBe("1 odd.name");
  });

  it("makes a volume that names no source an emptyDir (upstream's SetDefaults_Volume)", async () => {
    const pod = await client.resource(pods, "default").create({
      metadata: { name: "bare-volume" },
      spec: { volumes: [{ name: "scratch" }], containers: [container] },
    });
    expect(pod.spec?.volumes).toEqual([{ name: "scratch", emptyDir: {} }]);
  });
});

describe("Ingress and NetworkPolicy checks", () => {
  it("refuses an Ingress with neither rules nor a default backend", async () => {
    expect(
      await refusal(() =>
        client.resource(ingresses, "default").create({ metadata: { name: "empty" }, spec: {} }),
      ),
    ).toBe(
      'Ingress.networking.k8s.io "empty" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified',
    );
  });

  it("refuses a policy type other than Ingress or Egress, and more than two", async () => {
    const policies = client.resource(networkPolicies, "default");
    expect(
      await refusal(() =>
        policies.create({
          metadata: { name: "sideways" },
          spec: { podSelector: {}, policyTypes: ["Sideways"] },
        }),
      ),
    ).toBe(
      'NetworkPolicy.networking.k8s.io "sideways" is invalid: spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    );
    expect(
      await refusal(() =>
        policies.create({
          metadata: { name: "three" },
          spec: { podSelector: {}, policyTypes: ["Ingress", "Egress", "Ingress"] },
        }),
      ),
    ).toBe(
      'NetworkPolicy.networking.k8s.io "three" is invalid: spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
    );
  });
});

describe("Node taints and Service types", () => {
  it("refuses a taint effect that does not exist", async () => {
    expect(
      await refusal(() =>
        client
          .resource(nodes)
          .create({ metadata: { name: "n1" }, spec: { taints: [{ key: "a", effect: "Sometimes" }] } }),
      ),
    ).toBe(
      'Node "n1" is invalid: spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    );
  });

  it("refuses an unknown Service type and an external name that is not a DNS name; a trailing dot is fine", async () => {
    const serviceClient = client.resource(services, "default");
    expect(
      await refusal(() =>
        serviceClient.create({ metadata: { name: "magic" }, spec: { type: "Magic", ports: [{ port: 80 }] } }),
      ),
    ).toBe(
      'Service "magic" is invalid: spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    );
    expect(
      await refusal(() =>
        serviceClient.create({
          metadata: { name: "cname" },
          spec: { type: "ExternalName", externalName: "not valid!" },
        }),
      ),
    ).toBe(
      `Service "cname" is invalid: spec.externalName: Invalid value: "not valid!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    const dotted = await serviceClient.create({
      metadata: { name: "dotted" },
      spec: { type: "ExternalName", externalName: "example.com." },
    });
    expect(dotted.spec?.externalName).toBe("example.com.");
  });
});

describe("workload and cluster kinds", () => {
  const template = { metadata: { labels: { app: "db" } }, spec: { containers: [container] } };
  const selector = { matchLabels: { app: "db" } };

  it("allows a StatefulSet only the updates upstream allows", async () => {
    const sets = client.resource(statefulSets, "default");
    const created = await sets.create({
      metadata: { name: "db" },
      spec: { serviceName: "db", selector, template },
    });
    const scaled = await sets.update({
      ...created,
      spec: { ...created.spec!, replicas: 3, minReadySeconds: 5 },
    });
    expect(scaled.spec?.replicas).toBe(3);
    expect(
      await refusal(() => sets.update({ ...scaled, spec: { ...scaled.spec!, serviceName: "other" } })),
    ).toBe(
      "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
  });

  it("refuses unknown StatefulSet and DaemonSet policies", async () => {
    expect(
      await refusal(() =>
        client.resource(statefulSets, "default").create({
          metadata: { name: "odd" },
          spec: {
            serviceName: "odd",
            selector,
            template,
            podManagementPolicy: "Random",
            updateStrategy: { type: "Fast" },
          },
        }),
      ),
    ).toBe(
      `StatefulSet.apps "odd" is invalid: [spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel', spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Fast", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete']`,
    );
    expect(
      await refusal(() =>
        client.resource(daemonSets, "default").create({
          metadata: { name: "odd" },
          spec: { selector, template, updateStrategy: { type: "Fast" } },
        }),
      ),
    ).toBe(
      'DaemonSet.apps "odd" is invalid: spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Fast", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
    );
  });

  it("refuses a PersistentVolume with no source or with two", async () => {
    const volumes = client.resource(persistentVolumes);
    const base = { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] };
    expect(await refusal(() => volumes.create({ metadata: { name: "none" }, spec: base }))).toBe(
      'PersistentVolume "none" is invalid: spec: Required value: must specify a volume type',
    );
    expect(
      await refusal(() =>
        volumes.create({
          metadata: { name: "two" },
          spec: { ...base, hostPath: { path: "/a" }, nfs: { server: "s", path: "/" } },
        }),
      ),
    ).toBe('PersistentVolume "two" is invalid: spec.nfs: Forbidden: may not specify more than 1 volume type');
  });

  it("refuses an unknown session affinity and reclaim policy, and a cluster-wide ServiceAccount subject without a namespace", async () => {
    expect(
      await refusal(() =>
        client.resource(services, "default").create({
          metadata: { name: "sticky" },
          spec: { sessionAffinity: "Sticky", selector: { app: "db" }, ports: [{ port: 80 }] },
        }),
      ),
    ).toBe(
      'Service "sticky" is invalid: spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
    );
    expect(
      await refusal(() =>
        client
          .resource(storageClasses)
          .create({ metadata: { name: "keep" }, provisioner: "x", reclaimPolicy: "Keep" }),
      ),
    ).toBe(
      'StorageClass.storage.k8s.io "keep" is invalid: reclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"',
    );
    expect(
      await refusal(() =>
        client.resource(clusterRoleBindings).create({
          metadata: { name: "crb" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
          subjects: [{ kind: "ServiceAccount", name: "robot" }],
        }),
      ),
    ).toBe(
      'ClusterRoleBinding.rbac.authorization.k8s.io "crb" is invalid: subjects[0].namespace: Required value',
    );
  });
});
