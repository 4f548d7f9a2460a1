import { type Secret, secrets, serviceAccounts } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { FakeInformer } from "@reconcile/informer/testing";
import type { ServiceAccount } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { ServiceAccountTokensController } from "./tokens-controller.js";

const rootCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function setup() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, kubernetesService: false });
  const client = server.client();
  const secretInformer = new FakeInformer<Secret>();
  const serviceAccountInformer = new FakeInformer<ServiceAccount>();
  const controller = new ServiceAccountTokensController({
    client,
    signer: server.auth.tokens,
    rootCA,
    secretInformer,
    serviceAccountInformer,
    clock,
  });
  const account = await client.resource(serviceAccounts, "default").create({ metadata: { name: "robot" } });
  serviceAccountInformer.add(account);
  const secret = await client.resource(secrets, "default").create({
    metadata: { name: "robot-token", annotations: { "kubernetes.io/service-account.name": "robot" } },
    type: "kubernetes.io/service-account-token",
  });
  secretInformer.add(secret);
  return { server, client, controller, account, secretInformer, serviceAccountInformer };
}

const decoded = (secret: Secret, key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString();

describe("ServiceAccountTokensController", () => {
  it("fills a token Secret with a token the API server accepts, the CA and the namespace", async () => {
    const { server, client, controller, account } = await setup();
    await controller.syncSecret("default/robot-token");
    const filled = await client.resource(secrets, "default").get("robot-token");
    expect(decoded(filled, "ca.crt")).toBe(rootCA);
    expect(decoded(filled, "namespace")).toBe("default");
    expect(filled.metadata?.annotations).toEqual({
      "kubernetes.io/service-account.name": "robot",
      "kubernetes.io/service-account.uid": account.metadata?.uid,
    });
    const token = decoded(filled, "token");
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims).toEqual({
      iss: "kubernetes/serviceaccount",
      "kubernetes.io/serviceaccount/namespace": "default",
      "kubernetes.io/serviceaccount/secret.name": "robot-token",
      "kubernetes.io/serviceaccount/service-account.name": "robot",
      "kubernetes.io/serviceaccount/service-account.uid": account.metadata?.uid,
      sub: "system:serviceaccount:default:robot",
    });
    expect(await server.auth.serviceAccountUser(token)).toMatchObject({
      username: "system:serviceaccount:default:robot",
      uid: account.metadata?.uid,
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    });
    // The token is good only while its Secret holds it.
    await client.resource(secrets, "default").update({ ...filled, data: { ...filled.data, token: "eA==" } });
    await expect(server.auth.serviceAccountUser(token)).rejects.toMatchObject({ status: { code: 401 } });
    await server.close();
  });

  it("deletes a token Secret whose ServiceAccount is gone, and leaves a filled one alone", async () => {
    const { client, controller, account, secretInformer, serviceAccountInformer, server } = await setup();
    await controller.syncSecret("default/robot-token");
    const filled = await client.resource(secrets, "default").get("robot-token");
    secretInformer.update(filled);
    await controller.syncSecret("default/robot-token");
    expect((await client.resource(secrets, "default").get("robot-token")).metadata?.resourceVersion).toBe(
      filled.metadata?.resourceVersion,
    );
    await client.resource(serviceAccounts, "default").delete("robot");
    serviceAccountInformer.delete(account);
    await controller.syncSecret("default/robot-token");
    expect((await client.resource(secrets, "default").list()).items).toEqual([]);
    await server.close();
  });

  it("the API server requires a token Secret to name its ServiceAccount, and defaults other Secrets to Opaque", async () => {
    const { client, server } = await setup();
    await expect(
      client.resource(secrets, "default").create({
        metadata: { name: "orphan" },
        type: "kubernetes.io/service-account-token",
      }),
    ).rejects.toMatchObject({
      status: {
        code: 422,
        message:
          'Secret "orphan" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value',
      },
    });
    const plain = await client.resource(secrets, "default").create({ metadata: { name: "plain" }, data: {} });
    expect(plain.type).toBe("Opaque");
    await server.close();
  });
});
