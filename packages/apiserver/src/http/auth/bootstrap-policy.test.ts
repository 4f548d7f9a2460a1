import {
  clusterRoleBindings,
  clusterRoles,
  type KubeObject,
  leases,
  roleBindings,
  roles as rolesResource,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import type { AdmissionPlugin } from "../../admission/plugin.js";
import { ApiServer } from "../../api-server.js";
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from "./bootstrap-policy.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
function server(): ApiServer {
  const made = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-02T03:04:05Z")) });
  servers.push(made);
  return made;
}

/** An object without what every store gives it anew. */
function form(object: KubeObject) {
  const {
    uid: _u,
    resourceVersion: _r,
    creationTimestamp: _c,
    managedFields,
    ...metadata
  } = object.metadata ?? {};
  return {
    ...object,
    metadata: { ...metadata, managedFields: (managedFields ?? []).map(({ time: _t, ...entry }) => entry) },
  };
}

describe("the bootstrap policy", () => {
  // First in this file: the process has stored no policy yet, so this server's is the first made.
  it("does not hand a form an admission step changed on to the next server", async () => {
    const labelling: AdmissionPlugin = {
      name: "Labelling",
      resources: ["rbac.authorization.k8s.io/clusterroles"],
      admit(a) {
        if (a.operation === "CREATE" && a.object?.metadata) a.object.metadata.labels = { stamped: "yes" };
      },
    };
    const stamped = new ApiServer({ admissionPlugins: [labelling] });
    servers.push(stamped);
    await stamped.auth.start();
    expect((await stamped.client().resource(clusterRoles).get("view")).metadata?.labels).toEqual({
      stamped: "yes",
    });
    const plain = server();
    await plain.auth.start();
    expect(
      (await plain.client().resource(clusterRoles).get("view")).metadata?.labels?.stamped,
    ).toBeUndefined();
  });

  it("is stored by every server as the registry stores it, with the server's own uids and time", async () => {
    const first = server();
    const second = server();
    await first.auth.start();
    await second.auth.start();
    // What the registry stores for the same objects, created one by one.
    const byHand = server();
    const role = bootstrapClusterRoles().find(
      (r) => r.metadata?.name === "system:controller:job-controller",
    )!;
    const binding = bootstrapClusterRoleBindings().find(
      (b) => b.metadata?.name === "system:controller:job-controller",
    )!;
    const createdRole = await byHand.client().resource(clusterRoles).create(role);
    const createdBinding = await byHand.client().resource(clusterRoleBindings).create(binding);
    for (const made of [first, second]) {
      const storedRole = await made.client().resource(clusterRoles).get("system:controller:job-controller");
      const storedBinding = await made
        .client()
        .resource(clusterRoleBindings)
        .get("system:controller:job-controller");
      expect(form(storedRole)).toEqual(form(createdRole));
      expect(form(storedBinding)).toEqual(form(createdBinding));
      expect(storedRole.metadata?.creationTimestamp).toBe("2026-01-02T03:04:05Z");
      expect(storedRole.metadata?.managedFields?.[0]?.time).toBe("2026-01-02T03:04:05Z");
    }
    const uids = await Promise.all(
      [first, second].map(async (s) => (await s.client().resource(clusterRoles).get("view")).metadata?.uid),
    );
    expect(new Set(uids).size).toBe(2);
  });

  it("puts back the rules a role that may be updated lost, and leaves one marked autoupdate false", async () => {
    const made = server();
    await made.auth.start();
    const roles = made.client().resource(clusterRoles);
    const node = await roles.get("system:node");
    await roles.update({ ...node, rules: [] });
    const scheduler = await roles.get("system:kube-scheduler");
    await roles.update({
      ...scheduler,
      metadata: {
        ...scheduler.metadata,
        annotations: { "rbac.authorization.kubernetes.io/autoupdate": "false" },
      },
      rules: [],
    });
    const { reconcileBootstrapPolicy } = await import("./bootstrap-reconcile.js");
    await reconcileBootstrapPolicy(made.client());
    expect((await roles.get("system:node")).rules).toEqual(
      bootstrapClusterRoles().find((r) => r.metadata?.name === "system:node")!.rules,
    );
    expect((await roles.get("system:kube-scheduler")).rules).toEqual([]);
  });

  it("makes kube-system's and kube-public's Roles and RoleBindings, as kube-apiserver's namespace policy", async () => {
    const made = server();
    await made.auth.start();
    const client = made.client();
    const names = async (resource: "roles" | "bindings", namespace: string) =>
      (resource === "roles"
        ? (await client.resource(rolesResource, namespace).list()).items
        : (await client.resource(roleBindings, namespace).list()).items
      )
        .map((item) => item.metadata?.name)
        .sort();
    expect(await names("roles", "kube-system")).toEqual([
      "extension-apiserver-authentication-reader",
      "system::leader-locking-kube-controller-manager",
      "system::leader-locking-kube-scheduler",
      "system:controller:bootstrap-signer",
      "system:controller:cloud-provider",
      "system:controller:token-cleaner",
    ]);
    expect(await names("bindings", "kube-system")).toEqual([
      "system::extension-apiserver-authentication-reader",
      "system::leader-locking-kube-controller-manager",
      "system::leader-locking-kube-scheduler",
      "system:controller:bootstrap-signer",
      "system:controller:cloud-provider",
      "system:controller:token-cleaner",
    ]);
    expect(await names("roles", "kube-public")).toEqual(["system:controller:bootstrap-signer"]);
    const reader = await client
      .resource(rolesResource, "kube-system")
      .get("extension-apiserver-authentication-reader");
    expect(reader.metadata?.labels).toEqual({ "kubernetes.io/bootstrapping": "rbac-defaults" });
    expect(reader.rules).toEqual([
      {
        verbs: ["get", "list", "watch"],
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["extension-apiserver-authentication"],
      },
    ]);
    const binding = await client
      .resource(roleBindings, "kube-system")
      .get("system::leader-locking-kube-controller-manager");
    expect(binding.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "system::leader-locking-kube-controller-manager",
    });
    expect(binding.subjects?.map((s) => `${s.kind}/${s.namespace ?? ""}/${s.name}`)).toEqual([
      "User//system:kube-controller-manager",
      "ServiceAccount/kube-system/kube-controller-manager",
      "ServiceAccount/kube-system/leader-election-controller",
    ]);
    // The leader-election ServiceAccount may take a lease in kube-system through it, and nowhere else.
    const electing = made.client({
      user: {
        username: "system:serviceaccount:kube-system:leader-election-controller",
        groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
      },
    });
    await expect
      .poll(() =>
        electing
          .resource(leases, "kube-system")
          .create({ metadata: { name: "kube-controller-manager" } })
          .then(
            () => "created",
            (error: Error) => error.message,
          ),
      )
      .toBe("created");
    await expect(electing.resource(leases, "default").create({ metadata: { name: "x" } })).rejects.toThrow(
      'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:kube-system:leader-election-controller" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"',
    );
  });
});
