import { type Pod, pods, serviceAccounts } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { mountServiceAccountToken, serviceAccountTokenMountPath } from "./service-account.js";

const tokenVolume = (name: string) => ({
  name,
  projected: {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardAPI: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
        },
      },
    ],
  },
});
const tokenMount = (name: string) => ({ name, readOnly: true, mountPath: serviceAccountTokenMountPath });

// Upstream plugin/pkg/admission/serviceaccount/admission_test.go.
describe("ServiceAccount admission: the token volume (TestAutomountsAPIToken, TestRespectsExistingMount)", () => {
  it("mounts one projected volume in every container and init container", () => {
    const pod: Pod = {
      spec: { initContainers: [{ name: "init" }], containers: [{ name: "a" }, { name: "b" }] },
    };
    mountServiceAccountToken(pod, () => 0);
    expect(pod.spec!.volumes).toEqual([tokenVolume("kube-api-access-bbbbb")]);
    for (const c of [...pod.spec!.initContainers!, ...pod.spec!.containers])
      expect(c.volumeMounts).toEqual([tokenMount("kube-api-access-bbbbb")]);
  });

  it("leaves a container that already mounts something at the token path alone", () => {
    const own = { name: "my-volume", mountPath: serviceAccountTokenMountPath };
    const pod: Pod = { spec: { containers: [{ name: "a", volumeMounts: [own] }] } };
    mountServiceAccountToken(pod, () => 0);
    expect(pod.spec!.containers[0]!.volumeMounts).toEqual([own]);
    expect(pod.spec!.volumes).toBeUndefined();
  });

  it("reuses a kube-api-access volume the pod already has", () => {
    const pod: Pod = {
      spec: { volumes: [tokenVolume("kube-api-access-zzzzz")], containers: [{ name: "a" }] },
    };
    mountServiceAccountToken(pod, () => 0);
    expect(pod.spec!.volumes).toEqual([tokenVolume("kube-api-access-zzzzz")]);
    expect(pod.spec!.containers[0]!.volumeMounts).toEqual([tokenMount("kube-api-access-zzzzz")]);
  });
});

describe("ServiceAccount admission in the API server", () => {
  const container = { name: "c", image: "nginx" };

  async function withServer(test: (server: ApiServer) => Promise<void>): Promise<void> {
    const server = new ApiServer({ admissionPlugins: ["NamespaceLifecycle", "ServiceAccount"] });
    try {
      await test(server);
    } finally {
      await server.close();
    }
  }

  it("refuses a pod whose ServiceAccount does not exist (TestDeniesInvalidServiceAccount)", () =>
    withServer(async (server) => {
      const create = server
        .client()
        .resource(pods, "default")
        .create({ metadata: { name: "p" }, spec: { containers: [container] } });
      await expect(create).rejects.toMatchObject({
        code: 403,
        message:
          'pods "p" is forbidden: error looking up service account default/default: serviceaccount "default" not found',
      });
    }));

  it("assigns `default` and mounts its token (TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens)", () =>
    withServer(async (server) => {
      const client = server.client();
      await client.resource(serviceAccounts, "default").create({ metadata: { name: "default" } });
      const pod = await client
        .resource(pods, "default")
        .create({ metadata: { name: "p" }, spec: { containers: [container] } });
      expect(pod.spec?.serviceAccountName).toBe("default");
      const volume = pod.spec?.volumes?.[0];
      expect(volume?.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(volume).toEqual(tokenVolume(volume!.name));
      expect(pod.spec?.containers[0]?.volumeMounts).toEqual([tokenMount(volume!.name)]);
    }));

  it("mounts nothing when the ServiceAccount or the pod opts out, the pod's word winning (TestAutomountServiceAccountTokenFalse)", () =>
    withServer(async (server) => {
      const client = server.client();
      await client
        .resource(serviceAccounts, "default")
        .create({ metadata: { name: "quiet" }, automountServiceAccountToken: false });
      const quiet = await client.resource(pods, "default").create({
        metadata: { name: "quiet" },
        spec: { serviceAccountName: "quiet", containers: [container] },
      });
      expect(quiet.spec?.volumes).toBeUndefined();
      expect(quiet.spec?.containers[0]?.volumeMounts).toBeUndefined();
      const loud = await client.resource(pods, "default").create({
        metadata: { name: "loud" },
        spec: { serviceAccountName: "quiet", automountServiceAccountToken: true, containers: [container] },
      });
      expect(loud.spec?.volumes).toHaveLength(1);
    }));

  it("leaves mirror pods alone", () =>
    withServer(async (server) => {
      const pod = await server
        .client()
        .resource(pods, "default")
        .create({
          metadata: { name: "static", annotations: { "kubernetes.io/config.mirror": "hash" } },
          spec: { containers: [container] },
        });
      expect(pod.spec?.serviceAccountName).toBeUndefined();
    }));

  it("answers a missing namespace with its 404 before looking up the ServiceAccount (the chain's order)", () =>
    withServer(async (server) => {
      const create = server
        .client()
        .resource(pods, "nowhere")
        .create({ metadata: { name: "p" }, spec: { containers: [container] } });
      await expect(create).rejects.toMatchObject({ code: 404, message: 'namespaces "nowhere" not found' });
    }));
});
