import { clusterRoleBindings, clusterRoles, configMaps, isForbidden, roleBindings } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "./eventually.js";
import { startTestEnvironment, type TestEnvironment } from "./test-environment.js";

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("startTestEnvironment with authorization (the default)", () => {
  it("gives a ServiceAccount's client exactly what its RBAC manifest grants", async () => {
    env = await startTestEnvironment();
    expect(env.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const operator = env.clientAs({ serviceAccount: { namespace: "default", name: "operator" } });
    const denied = await operator
      .resource(configMaps, "default")
      .list()
      .catch((error: unknown) => error);
    expect(isForbidden(denied)).toBe(true);
    expect((denied as Error).message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:default:operator" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
    // The operator's manifest: a ClusterRole for config maps, bound in default only.
    await env.client.resource(clusterRoles).create({
      metadata: { name: "operator" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create"] }],
    });
    await env.client.resource(roleBindings, "default").create({
      metadata: { name: "operator", namespace: "default" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "operator" },
      subjects: [{ kind: "ServiceAccount", name: "operator", namespace: "default" }],
    });
    await eventually(async () => (await operator.resource(configMaps, "default").list()).items.length === 0);
    await operator.resource(configMaps, "default").create({ metadata: { name: "made" }, data: { a: "1" } });
    const elsewhere = await operator
      .resource(configMaps, "kube-system")
      .list()
      .catch((error: unknown) => error);
    expect(isForbidden(elsewhere)).toBe(true);
    const deletion = await operator
      .resource(configMaps, "default")
      .delete("made")
      .catch((error: unknown) => error);
    expect(isForbidden(deletion)).toBe(true);
  });

  it("acts as a user with groups, and the admin kubeconfig may do anything", async () => {
    env = await startTestEnvironment();
    const auditor = env.clientAs({ user: "ann", groups: ["auditors"] });
    await env.client.resource(clusterRoleBindings).create({
      metadata: { name: "auditors-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "Group", name: "auditors", apiGroup: "rbac.authorization.k8s.io" }],
    });
    await eventually(
      async () => (await auditor.resource(configMaps, "kube-system").list()).items.length === 0,
    );
    const write = await auditor
      .resource(configMaps, "default")
      .create({ metadata: { name: "x" } })
      .catch((error: unknown) => error);
    expect(isForbidden(write)).toBe(true);
    expect(env.kubeconfig()).toContain("certificate-authority-data:");
  });
});
