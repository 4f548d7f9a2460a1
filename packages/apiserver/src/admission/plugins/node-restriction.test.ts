import { leases, type Node, nodes, type Pod, pods, StatusError } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";

// Cases from upstream's plugin/pkg/admission/noderestriction/admission_test.go,
// run through an API server with NodeRestriction, as node n1 (authorized by
// the Node authorizer) and as the server itself.

let server: ApiServer;
let admin: Client;
let n1: Client;
let n1Uid: string;

beforeEach(async () => {
  server = new ApiServer({ admissionPlugins: ["NodeRestriction"] });
  admin = server.client();
  n1 = server.client({ user: { username: "system:node:n1", groups: ["system:nodes"] } });
  const created = await n1
    .resource(nodes)
    .create({ metadata: { name: "n1", labels: { "kubernetes.io/hostname": "n1" } } });
  n1Uid = created.metadata!.uid!;
  await admin.resource(nodes).create({ metadata: { name: "n2" } });
});
afterEach(() => server.close());

async function message(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!StatusError.isInstance(error)) return "allowed";
  return `${error.status.code} ${error.status.message}`;
}

function mirrorPod(name: string, nodeName: string, extra: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: {
      name,
      annotations: { "kubernetes.io/config.mirror": "hash" },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: "n1", uid: n1Uid, controller: true }],
    },
    spec: { nodeName, containers: [{ name: "c", image: "busybox" }], ...extra },
  };
}

describe("NodeRestriction: pods", () => {
  it("lets a node create a mirror pod bound to and owned by itself", async () => {
    expect(await message(n1.resource(pods, "default").create(mirrorPod("static-n1", "n1")))).toBe("allowed");
  });

  it.each([
    [
      "a pod that is not a mirror pod",
      (): Pod => ({
        metadata: { name: "p" },
        spec: { nodeName: "n1", containers: [{ name: "c", image: "busybox" }] },
      }),
      'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    ],
    [
      "a mirror pod bound to another node",
      () => mirrorPod("p", "n2"),
      'pods "p" is forbidden: node "n1" can only create pods with spec.nodeName set to itself',
    ],
    [
      "a mirror pod without an owner",
      (): Pod => ({
        ...mirrorPod("p", "n1"),
        metadata: { name: "p", annotations: { "kubernetes.io/config.mirror": "h" } },
      }),
      'pods "p" is forbidden: node "n1" can only create pods with an owner reference set to itself',
    ],
    [
      "a mirror pod whose owner is not its controller",
      (): Pod => {
        const pod = mirrorPod("p", "n1");
        pod.metadata!.ownerReferences![0]!.controller = false;
        return pod;
      },
      'pods "p" is forbidden: node "n1" can only create pods with a controller owner reference set to itself',
    ],
    [
      "a mirror pod owned by a Node of another uid",
      (): Pod => {
        const pod = mirrorPod("p", "n1");
        pod.metadata!.ownerReferences![0]!.uid = "other";
        return pod;
      },
      `pods "p" is forbidden: node n1 UID mismatch: expected other got ${"<uid>"}`,
    ],
    [
      "a mirror pod naming a Secret",
      () => mirrorPod("p", "n1", { volumes: [{ name: "s", secret: { secretName: "s" } }] }),
      'pods "p" is forbidden: node "n1" can not create pods that reference secrets',
    ],
    [
      "a mirror pod naming a ConfigMap",
      () => mirrorPod("p", "n1", { volumes: [{ name: "c", configMap: { name: "c" } }] }),
      'pods "p" is forbidden: node "n1" can not create pods that reference configmaps',
    ],
    [
      "a mirror pod naming a claim",
      () => mirrorPod("p", "n1", { volumes: [{ name: "c", persistentVolumeClaim: { claimName: "c" } }] }),
      'pods "p" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims',
    ],
    [
      "a mirror pod with a ServiceAccount",
      () => mirrorPod("p", "n1", { serviceAccountName: "default" }),
      'pods "p" is forbidden: node "n1" can not create pods that reference a service account',
    ],
  ])("refuses %s", async (_name, pod, expected) => {
    expect(await message(n1.resource(pods, "default").create(pod()))).toBe(
      `403 ${expected.replace("<uid>", n1Uid)}`,
    );
  });

  it("lets a node write the status of, and delete, only the pods bound to it", async () => {
    const api = admin.resource(pods, "default");
    const spec = { containers: [{ name: "c", image: "busybox" }] };
    await api.create({ metadata: { name: "mine" }, spec: { ...spec, nodeName: "n1" } });
    const theirs = await api.create({ metadata: { name: "theirs" }, spec: { ...spec, nodeName: "n2" } });
    const asNode = n1.resource(pods, "default");
    expect(await message(asNode.updateStatus({ ...theirs, status: { phase: "Running" } }))).toBe(
      '403 pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    );
    const mine = await asNode.get("mine");
    expect(await message(asNode.updateStatus({ ...mine, status: { phase: "Running" } }))).toBe("allowed");
    const relabelled = await asNode.get("mine");
    expect(
      await message(
        asNode.updateStatus({ ...relabelled, metadata: { ...relabelled.metadata, labels: { a: "b" } } }),
      ),
    ).toBe('403 pods "mine" is forbidden: node "n1" cannot update labels through pod status');
    expect(await message(asNode.delete("theirs"))).toBe(
      '403 pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
    );
    expect(await message(asNode.delete("mine"))).toBe("allowed");
  });
});

describe("NodeRestriction: nodes and leases", () => {
  it("refuses a node writing another node", async () => {
    const other = await admin.resource(nodes).get("n2");
    expect(
      await message(
        n1.resource(nodes).update({ ...other, metadata: { ...other.metadata, labels: { a: "b" } } }),
      ),
    ).toBe('403 nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
  });

  it("refuses a node changing its own taints, or labels outside the kubelet's set", async () => {
    const api = n1.resource(nodes);
    const own: Node = await api.get("n1");
    expect(
      await message(api.update({ ...own, spec: { taints: [{ key: "k", effect: "NoSchedule" }] } })),
    ).toBe('403 nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    const relabel = (labels: Record<string, string>) =>
      api.update({ ...own, metadata: { ...own.metadata, labels: { ...own.metadata?.labels, ...labels } } });
    expect(await message(relabel({ "node-role.kubernetes.io/master": "" }))).toBe(
      '403 nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/master',
    );
    expect(
      await message(
        relabel({ "topology.kubernetes.io/zone": "z", "node.kubernetes.io/pool": "a", team: "x" }),
      ),
    ).toBe("allowed");
  });

  it("refuses a node registering with a node-restriction label", async () => {
    const n3 = server.client({ user: { username: "system:node:n3", groups: ["system:nodes"] } });
    expect(
      await message(
        n3
          .resource(nodes)
          .create({ metadata: { name: "n3", labels: { "node-restriction.kubernetes.io/a": "b" } } }),
      ),
    ).toBe(
      '403 nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: node-restriction.kubernetes.io/a',
    );
  });

  it("lets a node create only its own Lease in kube-node-lease", async () => {
    const lease = (name: string) => ({ metadata: { name }, spec: { holderIdentity: name } });
    expect(await message(n1.resource(leases, "kube-node-lease").create(lease("n2")))).toBe(
      '403 leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
    );
    expect(await message(n1.resource(leases, "kube-node-lease").create(lease("n1")))).toBe("allowed");
  });

  it("leaves everyone else alone", async () => {
    const other = await admin.resource(nodes).get("n2");
    expect(
      await message(
        admin.resource(nodes).update({ ...other, spec: { taints: [{ key: "k", effect: "NoSchedule" }] } }),
      ),
    ).toBe("allowed");
  });
});
