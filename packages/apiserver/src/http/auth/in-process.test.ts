import { configMaps, isForbidden, pods, roleBindings, StatusError } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import type { AdmissionPlugin } from "../../admission/plugin.js";
import { ApiServer } from "../../api-server.js";

let server: ApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function denial(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!StatusError.isInstance(error)) throw new Error(`expected a StatusError, got ${String(error)}`);
  return { code: error.status.code ?? 0, message: error.status.message ?? "" };
}

describe("ApiServer.client({ user })", () => {
  it("judges each call as the user, with kube-apiserver's 403, until a RoleBinding grants it", async () => {
    server = new ApiServer();
    const jane = server.client({ user: { username: "jane" } });
    expect(await denial(jane.resource(configMaps, "default").list())).toEqual({
      code: 403,
      message:
        'configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default"',
    });
    expect(await denial(jane.resource(configMaps, "default").get("x"))).toEqual({
      code: 403,
      message:
        'configmaps "x" is forbidden: User "jane" cannot get resource "configmaps" in API group "" in the namespace "default"',
    });
    await server
      .client()
      .resource(roleBindings, "default")
      .create({
        metadata: { name: "jane-edit" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "jane" }],
      });
    await expect
      .poll(() =>
        jane
          .resource(configMaps, "default")
          .list()
          .then(
            () => "allowed",
            (e) => (isForbidden(e) ? "forbidden" : e),
          ),
      )
      .toBe("allowed");
    const created = await jane.resource(configMaps, "default").create({ metadata: { name: "x" } });
    expect(created.metadata?.name).toBe("x");
    // Only in the namespace the binding grants.
    expect((await denial(jane.resource(configMaps, "kube-system").list())).code).toBe(403);
  });

  it("a node reads only its own Node, and lists only the pods bound to it", async () => {
    server = new ApiServer();
    const node = server.client({ user: { username: "system:node:n1", groups: ["system:nodes"] } });
    expect(await denial(node.resource(pods).list())).toEqual({
      code: 403,
      message:
        'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector',
    });
    const list = await node.resource(pods).list({ fieldSelector: "spec.nodeName=n1" });
    expect(list.items).toEqual([]);
    expect(await denial(node.resource(configMaps, "default").get("other"))).toEqual({
      code: 403,
      message:
        'configmaps "other" is forbidden: User "system:node:n1" cannot get resource "configmaps" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object',
    });
  });

  it("tells onDenied of each refused call, not of a question such as a review asks", async () => {
    server = new ApiServer();
    const seen: string[] = [];
    server.auth.onDenied((a, reason) =>
      seen.push(`${a.user.username} ${a.verb} ${a.resourceRequest ? a.resource : a.path} ${reason}`.trim()),
    );
    const jane = server.client({ user: { username: "jane" } });
    expect((await denial(jane.resource(configMaps, "default").list())).code).toBe(403);
    const question = await server.auth.authorize({
      user: { username: "jane", groups: ["system:authenticated"] },
      resourceRequest: true,
      verb: "get",
      apiGroup: "",
      resource: "secrets",
      subresource: "",
      namespace: "default",
      name: "",
    });
    expect(question.allowed).toBe(false);
    expect(seen).toEqual(["jane list configmaps"]);
  });

  it("hands the user to admission, with system:authenticated added", async () => {
    const seen: unknown[] = [];
    const recorder: AdmissionPlugin = {
      name: "Recorder",
      validate: (a) => {
        if (a.resource.plural === "configmaps") seen.push(a.user);
      },
    };
    server = new ApiServer({ admissionPlugins: [recorder] });
    const operator = server.client({
      user: { username: "system:serviceaccount:default:op", groups: ["ops"] },
    });
    await server
      .client()
      .resource(roleBindings, "default")
      .create({
        metadata: { name: "op" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: "op", namespace: "default" }],
      });
    seen.length = 0;
    await expect
      .poll(() =>
        operator
          .resource(configMaps, "default")
          .create({ metadata: { generateName: "c-" } })
          .then(
            () => "created",
            (e) => (isForbidden(e) ? "forbidden" : e),
          ),
      )
      .toBe("created");
    expect(seen.at(-1)).toEqual({
      username: "system:serviceaccount:default:op",
      groups: ["ops", "system:authenticated"],
    });
    await server
      .client()
      .resource(configMaps, "default")
      .create({ metadata: { name: "by-server" } });
    expect(seen.at(-1)).toBeUndefined();
  });
});
