import { namespaces, persistentVolumes, pods } from "@reconcile/api";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import type { Attributes } from "./attributes.js";
import { fieldRequirements } from "./attributes.js";
import { nodeIdentity } from "./node-authorizer.js";
import type { UserInfo } from "./user.js";

// Upstream's TestNodeAuthorizer (plugin/pkg/auth/authorizer/node), with
// AuthorizeNodeWithSelectors on as in 1.32: two nodes, pods on each naming a
// ConfigMap, a Secret of their own, a shared Secret, a claim bound to a
// volume that names a Secret, and a ServiceAccount.

const node0: UserInfo = { username: "system:node:node0", groups: ["system:nodes", "system:authenticated"] };
const unregistered: UserInfo = {
  username: "system:node:nodeunregistered",
  groups: ["system:nodes", "system:authenticated"],
};

let server: ApiServer;

async function populate(): Promise<void> {
  const client = server.client();
  await client.resource(namespaces).create({ metadata: { name: "ns0" } });
  for (const node of ["node0", "node1"]) {
    const pod = `pod0-${node}`;
    await client.resource(pods, "ns0").create({
      metadata: { name: pod },
      spec: {
        nodeName: node,
        serviceAccountName: `svcacct0-${node}`,
        containers: [
          {
            name: "c",
            image: "busybox",
            env: [{ name: "A", valueFrom: { configMapKeyRef: { name: `configmap0-${pod}`, key: "a" } } }],
            envFrom: [{ secretRef: { name: "secret0-shared" } }],
          },
        ],
        volumes: [
          { name: "s", secret: { secretName: `secret0-${pod}` } },
          { name: "p", persistentVolumeClaim: { claimName: `pvc0-${pod}` } },
        ],
      },
    });
    await client.resource(persistentVolumes).create({
      metadata: { name: `pv0-${pod}-ns0` },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        claimRef: { namespace: "ns0", name: `pvc0-${pod}` },
        csi: {
          driver: "example.com",
          volumeHandle: "h",
          nodePublishSecretRef: { name: `secret-pv0-${pod}-ns0`, namespace: "ns0" },
        },
      },
    });
  }
}

beforeAll(async () => {
  server = new ApiServer();
  await populate();
  return () => server.close();
});

type Case = [name: string, attributes: Partial<Attributes & { resourceRequest: true }>, allowed: boolean];

const get = (resource: string, name: string, namespace = "ns0", apiGroup = "") => ({
  verb: "get",
  resource,
  name,
  namespace,
  apiGroup,
});
const lease = (verb: string, name: string, namespace = "kube-node-lease") => ({
  verb,
  resource: "leases",
  apiGroup: "coordination.k8s.io",
  name,
  namespace,
});
const csiNode = (verb: string, name = "", subresource = "") => ({
  verb,
  resource: "csinodes",
  apiGroup: "storage.k8s.io",
  name,
  subresource,
});

const cases: Case[] = [
  ["allowed configmap", get("configmaps", "configmap0-pod0-node0"), true],
  ["allowed secret via pod", get("secrets", "secret0-pod0-node0"), true],
  ["list allowed secret via pod", { ...get("secrets", "secret0-pod0-node0"), verb: "list" }, true],
  ["watch allowed secret via pod", { ...get("secrets", "secret0-pod0-node0"), verb: "watch" }, true],
  ["disallowed list many secrets", { ...get("secrets", ""), verb: "list" }, false],
  ["disallowed watch many secrets", { ...get("secrets", ""), verb: "watch" }, false],
  [
    "disallowed list secrets from all namespaces with name",
    { ...get("secrets", "secret0-pod0-node0", ""), verb: "list" },
    false,
  ],
  ["allowed shared secret via pod", get("secrets", "secret0-shared"), true],
  ["allowed shared secret via pvc", get("secrets", "secret-pv0-pod0-node0-ns0"), true],
  ["allowed pvc", get("persistentvolumeclaims", "pvc0-pod0-node0"), true],
  ["allowed pv", get("persistentvolumes", "pv0-pod0-node0-ns0", ""), true],
  ["disallowed configmap", get("configmaps", "configmap0-pod0-node1"), false],
  ["disallowed secret via pod", get("secrets", "secret0-pod0-node1"), false],
  ["disallowed shared secret via pvc", get("secrets", "secret-pv0-pod0-node1-ns0"), false],
  ["disallowed pvc", get("persistentvolumeclaims", "pvc0-pod0-node1"), false],
  ["disallowed pv", get("persistentvolumes", "pv0-pod0-node1-ns0", ""), false],
  [
    "allowed svcacct token create",
    { ...get("serviceaccounts", "svcacct0-node0"), verb: "create", subresource: "token" },
    true,
  ],
  [
    "disallowed svcacct token create - serviceaccount not attached to node",
    { ...get("serviceaccounts", "svcacct0-node1"), verb: "create", subresource: "token" },
    false,
  ],
  [
    "disallowed svcacct token create - no subresource",
    { ...get("serviceaccounts", "svcacct0-node0"), verb: "create" },
    false,
  ],
  [
    "disallowed svcacct token create - non create",
    { ...get("serviceaccounts", "svcacct0-node0"), verb: "update", subresource: "token" },
    false,
  ],
  ...["get", "create", "update", "patch", "delete"].map(
    (verb): Case => [
      `disallowed ${verb} lease in namespace other than kube-node-lease`,
      lease(verb, "node0", "foo"),
      false,
    ],
  ),
  ...["get", "update", "patch", "delete"].map(
    (verb): Case => [`disallowed ${verb} another node's lease`, lease(verb, "node1"), false],
  ),
  ["disallowed list node leases", lease("list", ""), false],
  ["disallowed watch node leases", lease("watch", ""), false],
  ...["get", "create", "update", "patch", "delete"].map(
    (verb): Case => [`allowed ${verb} node lease`, lease(verb, "node0"), true],
  ),
  ["disallowed CSINode with subresource", csiNode("get", "node0", "csiDrivers"), false],
  ...["get", "update", "patch", "delete"].map(
    (verb): Case => [`disallowed ${verb} another node's CSINode`, csiNode(verb, "node1"), false],
  ),
  ["disallowed list CSINodes", csiNode("list"), false],
  ["disallowed watch CSINodes", csiNode("watch"), false],
  ...["get", "create", "update", "patch", "delete"].map(
    (verb): Case => [`allowed ${verb} CSINode`, csiNode(verb, "node0"), true],
  ),
  ["get related pod", get("pods", "pod0-node0"), true],
  ["get unrelated pod", get("pods", "pod0-node1"), false],
  [
    "list related pods",
    { ...get("pods", "", ""), verb: "list", fieldSelector: fieldRequirements("spec.nodeName=node0") },
    true,
  ],
  [
    "list related pods - alternate selector",
    { ...get("pods", "", ""), verb: "list", fieldSelector: fieldRequirements("spec.nodeName==node0") },
    true,
  ],
  ["list single related pod", { ...get("pods", "pod0-node0"), verb: "list" }, true],
  ["list unrelated pods", { ...get("pods", "", ""), verb: "list" }, false],
  [
    "watch related pods",
    { ...get("pods", "", ""), verb: "watch", fieldSelector: fieldRequirements("spec.nodeName=node0") },
    true,
  ],
  ["watch single related pod", { ...get("pods", "pod0-node0"), verb: "watch" }, true],
  ["watch unrelated pods", { ...get("pods", "", ""), verb: "watch" }, false],
  ["create unnamed pod", { ...get("pods", ""), verb: "create" }, true],
  [
    "create pod proxy subresource forbidden",
    { ...get("pods", ""), verb: "create", subresource: "proxy" },
    false,
  ],
  ["delete related pod", { ...get("pods", "pod0-node0"), verb: "delete" }, true],
  ["delete unrelated pod", { ...get("pods", "pod0-node1"), verb: "delete" }, true],
  [
    "delete pod proxy subresource forbidden",
    { ...get("pods", "pod0-node0"), verb: "delete", subresource: "proxy" },
    false,
  ],
  [
    "update related pod status",
    { ...get("pods", "pod0-node0"), verb: "update", subresource: "status" },
    true,
  ],
  [
    "update unrelated pod status",
    { ...get("pods", "pod0-node1"), verb: "update", subresource: "status" },
    true,
  ],
  ["patch related pod status", { ...get("pods", "pod0-node0"), verb: "patch", subresource: "status" }, true],
  ["get pod status", { ...get("pods", "pod0-node0"), subresource: "status" }, false],
  [
    "create related pod eviction",
    { ...get("pods", "pod0-node0"), verb: "create", subresource: "eviction" },
    true,
  ],
  [
    "create unrelated pod eviction",
    { ...get("pods", "pod0-node1"), verb: "create", subresource: "eviction" },
    true,
  ],
  ["get related node", get("nodes", "node0", ""), true],
  ["get unrelated node", get("nodes", "node1", ""), false],
  ["list single related node", { ...get("nodes", "node0", ""), verb: "list" }, true],
  ["list single unrelated node", { ...get("nodes", "node1", ""), verb: "list" }, false],
  ["list all nodes", { ...get("nodes", "", ""), verb: "list" }, false],
  ["watch single related node", { ...get("nodes", "node0", ""), verb: "watch" }, true],
  ["watch all nodes", { ...get("nodes", "", ""), verb: "watch" }, false],
  ["create node", { ...get("nodes", "", ""), verb: "create" }, true],
  ["update node status", { ...get("nodes", "node1", ""), verb: "patch", subresource: "status" }, true],
  ["read services (static rules)", { ...get("services", "", ""), verb: "list" }, true],
  [
    "create deployments (neither static rules nor RBAC)",
    { ...get("deployments", "", "ns0", "apps"), verb: "create" },
    false,
  ],
];

describe("the Node authorizer, as upstream's TestNodeAuthorizer", () => {
  it.each(cases)("%s", async (_name, attributes, allowed) => {
    const request = { subresource: "", ...attributes, user: node0, resourceRequest: true } as Attributes;
    expect((await server.auth.authorize(request)).allowed).toBe(allowed);
  });

  it("lets an unregistered node read its own Node before creating it", async () => {
    const request: Attributes = {
      ...get("nodes", "nodeunregistered", ""),
      subresource: "",
      user: unregistered,
      resourceRequest: true,
    };
    expect((await server.auth.authorize(request)).allowed).toBe(true);
  });
});

describe("the Node authorizer's graph follows the pods", () => {
  afterEach(async () => {
    await server
      .client()
      .resource(pods, "ns0")
      .delete("late")
      .catch(() => {});
  });

  it("relates a Secret once a pod naming it is bound, and not after the pod is deleted", async () => {
    const secret: Attributes = {
      ...get("secrets", "late-secret"),
      subresource: "",
      user: node0,
      resourceRequest: true,
    };
    expect(await server.auth.authorize(secret)).toEqual({
      allowed: false,
      reason: "no relationship found between node 'node0' and this object",
    });
    const podsApi = server.client().resource(pods, "ns0");
    await podsApi.create({
      metadata: { name: "late" },
      spec: {
        containers: [{ name: "c", image: "busybox" }],
        volumes: [{ name: "s", secret: { secretName: "late-secret" } }],
      },
    });
    // Not bound yet: nothing relates it to a node.
    await server.flush();
    expect((await server.auth.authorize(secret)).allowed).toBe(false);
    const bound = await podsApi.get("late");
    await podsApi.update({ ...bound, spec: { ...bound.spec!, nodeName: "node0" } });
    await expect.poll(async () => (await server.auth.authorize(secret)).allowed).toBe(true);
    await podsApi.delete("late", { gracePeriodSeconds: 0 });
    await expect.poll(async () => (await server.auth.authorize(secret)).allowed).toBe(false);
  });
});

describe("nodeIdentity", () => {
  it.each([
    [{ username: "system:node:a", groups: ["system:nodes"] }, "a"],
    [{ username: "system:node:", groups: ["system:nodes"] }, ""],
    [{ username: "system:node:a", groups: [] }, undefined],
    [{ username: "a", groups: ["system:nodes"] }, undefined],
  ] as [UserInfo, string | undefined][])("%o is node %s", (user, name) => {
    expect(nodeIdentity(user)).toBe(name);
  });
});
