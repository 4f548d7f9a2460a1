import {
  clusterRoleBindings,
  clusterRoles,
  configMaps,
  leases,
  roles,
  runtimeClasses,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/kubectl.js";
import { listen } from "./server.js";

// The strategies' AllowCreateOnUpdate and AllowUnconditionalUpdate, as
// genericregistry.Store's Update reads them: a PUT of a missing object
// creates it for Endpoints, Events, LimitRanges, Leases, RuntimeClasses and
// RBAC's kinds (authorized as a create too); a PUT without a resourceVersion
// is a 422 for Leases, RuntimeClasses, webhook configurations and policies.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeKubectlClusters();
});

function refusal(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "accepted",
    (error: { status?: { code?: number }; message: string }) => `${error.status?.code} ${error.message}`,
  );
}

describe("create on update", () => {
  it("creates a Role, a Lease and a RuntimeClass with a PUT, and 404s a ConfigMap's", async () => {
    const api = new ApiServer();
    cleanups.push(() => api.close());
    const client = api.client();
    const role = await client.resource(roles, "default").update({
      metadata: { name: "reader" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
    });
    expect(role.metadata).toMatchObject({ name: "reader", namespace: "default", uid: expect.any(String) });
    expect((await client.resource(roles, "default").get("reader")).rules).toEqual(role.rules);
    // A resourceVersion carried over from elsewhere does not stop the create.
    const lease = await client
      .resource(leases, "default")
      .update({ metadata: { name: "l", resourceVersion: "12345" }, spec: { holderIdentity: "a" } });
    expect(lease.metadata?.resourceVersion).not.toBe("12345");
    await client.resource(runtimeClasses).update({ metadata: { name: "gvisor" }, handler: "runsc" });
    expect(
      await refusal(client.resource(configMaps, "default").update({ metadata: { name: "missing" } })),
    ).toBe('404 configmaps "missing" not found');
  });

  it("answers 201 over HTTP, and kubectl replace creates a missing ClusterRole as on a cluster", async () => {
    const { kubectl, file, client } = await kubectlCluster();
    const path = await file(
      "role.yaml",
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: viewer\nrules:\n- apiGroups: [""]\n  resources: ["pods"]\n  verbs: ["list"]\n',
    );
    const replaced = await kubectl(["replace", "-f", path, "-v=6"]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toBe("clusterrole.rbac.authorization.k8s.io/viewer replaced\n");
    expect(replaced.stderr).toMatch(
      /PUT http:\/\/127\.0\.0\.1:\d+\/apis\/rbac\.authorization\.k8s\.io\/v1\/clusterroles\/viewer\?\S+ 201 Created/,
    );
    expect((await client.resource(clusterRoles).get("viewer")).rules?.[0]?.verbs).toEqual(["list"]);
    const again = await kubectl(["replace", "-f", path, "-v=6"]);
    expect(again.stderr).toMatch(/clusterroles\/viewer\?\S+ 200 OK/);
  });

  it("asks the authorizer whether the writer may create too", async () => {
    const api = new ApiServer();
    const server = await listen(api, {
      token: "admin-token",
      users: [{ token: "jane-token", user: { username: "jane", groups: [] } }],
    });
    cleanups.push(async () => {
      await server.close();
      await api.close();
    });
    await api
      .client()
      .resource(clusterRoles)
      .create({
        metadata: { name: "role-updater" },
        rules: [
          {
            apiGroups: ["rbac.authorization.k8s.io"],
            resources: ["roles"],
            verbs: ["get", "update", "patch"],
          },
        ],
      });
    await api
      .client()
      .resource(clusterRoleBindings)
      .create({
        metadata: { name: "jane" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "role-updater" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "jane" }],
      });
    const put = (verbs: string[]) =>
      fetch(`${server.url}/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/mine`, {
        method: "PUT",
        headers: { Authorization: "Bearer jane-token", "Content-Type": "application/json" },
        body: JSON.stringify({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "mine" },
          rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs }],
        }),
      });
    // A server-side apply that would create the Role is asked the same.
    const apply = () =>
      fetch(
        `${server.url}/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/applied?fieldManager=jane`,
        {
          method: "PATCH",
          headers: { Authorization: "Bearer jane-token", "Content-Type": "application/apply-patch+yaml" },
          body: JSON.stringify({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: "applied" },
            rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["get"] }],
          }),
        },
      );
    for (const [denied, name] of [
      [await put(["get"]), "mine"],
      [await apply(), "applied"],
    ] as const) {
      expect(denied.status).toBe(403);
      expect(((await denied.json()) as { message: string }).message).toBe(
        `roles.rbac.authorization.k8s.io "${name}" is forbidden: `,
      );
    }
    const role = await api.client().resource(clusterRoles).get("role-updater");
    await api
      .client()
      .resource(clusterRoles)
      .update({ ...role, rules: [{ ...role.rules![0]!, verbs: ["get", "update", "patch", "create"] }] });
    expect((await put(["get"])).status).toBe(201);
    expect((await apply()).status).toBe(201);
  });
});

describe("updates that must name the version they change", () => {
  it("refuse a PUT without a resourceVersion with upstream's 422, naming the resource", async () => {
    const api = new ApiServer();
    cleanups.push(() => api.close());
    const client = api.client();
    const lease = await client.resource(leases, "default").create({ metadata: { name: "l" } });
    const { resourceVersion: _version, ...meta } = lease.metadata ?? {};
    expect(await refusal(client.resource(leases, "default").update({ ...lease, metadata: meta }))).toBe(
      '422 leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    await client.resource(validatingWebhookConfigurations).create({ metadata: { name: "hooks" } });
    expect(
      await refusal(client.resource(validatingWebhookConfigurations).update({ metadata: { name: "hooks" } })),
    ).toBe(
      '422 validatingwebhookconfigurations.admissionregistration.k8s.io "hooks" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    // With the version it changes, the update goes through.
    expect(
      (await client.resource(leases, "default").update({ ...lease, spec: { holderIdentity: "b" } })).spec,
    ).toEqual({
      holderIdentity: "b",
    });
  });

  it("404s a missing object of a kind that does not create on update before asking for its version", async () => {
    const api = new ApiServer();
    cleanups.push(() => api.close());
    expect(
      await refusal(
        api
          .client()
          .resource(validatingWebhookConfigurations)
          .update({ metadata: { name: "none" } }),
      ),
    ).toBe('404 validatingwebhookconfigurations.admissionregistration.k8s.io "none" not found');
  });
});
