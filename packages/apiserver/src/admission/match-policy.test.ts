import {
  customResourceDefinitions,
  defineResource,
  type KubeObject,
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { crdCondition } from "../crd/crd.test-util.js";
import type { Review } from "./webhook/transport.js";

// matchPolicy as upstream's ShouldCallHook and policy Matcher read it: a
// webhook or ValidatingAdmissionPolicy whose rules name one version of a kind
// applies, with Equivalent (the default), to a write through another served
// version too, the object converted to the version it asked for; with Exact
// it does not.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

type Widget = KubeObject & { spec?: { size?: number; color?: string } };
const beta = defineResource<Widget>({
  group: "example.com",
  version: "v1beta1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});

const fields = { size: { type: "integer" }, color: { type: "string" } };
const schema = {
  openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: fields } } },
};

async function serverWithWidgets(): Promise<ApiServer> {
  const server = new ApiServer({
    customResourceDefinitions: true,
    admissionPlugins: [
      "NamespaceLifecycle",
      "MutatingAdmissionWebhook",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionWebhook",
    ],
  });
  servers.push(server);
  await server
    .client()
    .resource(customResourceDefinitions)
    .create({
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", kind: "Widget" },
        versions: [
          { name: "v1beta1", served: true, storage: false, schema },
          { name: "v1", served: true, storage: true, schema },
        ],
      },
    } as never);
  await crdCondition(server, "widgets.example.com", "Established");
  return server;
}

const v1Rule = {
  operations: ["CREATE"],
  apiGroups: ["example.com"],
  apiVersions: ["v1"],
  resources: ["widgets"],
};

/** What a webhook was asked: the kinds and resources of its request, and the object's apiVersion. */
function asked(review: Review) {
  const request = review.request as Record<string, unknown>;
  return {
    kind: request.kind,
    requestKind: request.requestKind,
    resource: request.resource,
    requestResource: request.requestResource,
    apiVersion: (request.object as KubeObject).apiVersion,
  };
}

const answer = (review: Review, response: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  response: { uid: (review.request as { uid: string }).uid, ...response },
});

describe("matchPolicy", () => {
  it("Equivalent: a write through v1beta1 calls the v1 webhook with a v1 object, and its patch comes back", async () => {
    const server = await serverWithWidgets();
    const seen: unknown[] = [];
    server.admissionWebhooks.serve("https://paint.local/", (review) => {
      seen.push(asked(review));
      const patch = [{ op: "add", path: "/spec/color", value: "blue" }];
      return answer(review, {
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
      });
    });
    await server
      .client()
      .resource(mutatingWebhookConfigurations)
      .create({
        metadata: { name: "paint" },
        webhooks: [
          {
            name: "paint.example.com",
            clientConfig: { url: "https://paint.local/" },
            rules: [v1Rule],
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
          },
        ],
      } as never);
    const created = await server
      .client()
      .resource(beta, "default")
      .create({ metadata: { name: "w" }, spec: { size: 2 } });
    expect(created.apiVersion).toBe("example.com/v1beta1");
    expect(created.spec).toEqual({ size: 2, color: "blue" });
    expect(seen).toEqual([
      {
        kind: { group: "example.com", version: "v1", kind: "Widget" },
        requestKind: { group: "example.com", version: "v1beta1", kind: "Widget" },
        resource: { group: "example.com", version: "v1", resource: "widgets" },
        requestResource: { group: "example.com", version: "v1beta1", resource: "widgets" },
        apiVersion: "example.com/v1",
      },
    ]);
  });

  it("Equivalent: a validating webhook on v1 refuses a write through v1beta1; Exact lets it by", async () => {
    const server = await serverWithWidgets();
    const calls: string[] = [];
    for (const name of ["equivalent", "exact"]) {
      server.admissionWebhooks.serve(`https://${name}.local/`, (review) => {
        calls.push(`${name} ${(review.request as { requestKind: { version: string } }).requestKind.version}`);
        return answer(
          review,
          name === "equivalent" ? { allowed: false, status: { message: "no widgets" } } : { allowed: true },
        );
      });
    }
    await server
      .client()
      .resource(validatingWebhookConfigurations)
      .create({
        metadata: { name: "guard" },
        webhooks: ["equivalent", "exact"].map((name) => ({
          name: `${name}.example.com`,
          clientConfig: { url: `https://${name}.local/` },
          rules: [v1Rule],
          ...(name === "exact" ? { matchPolicy: "Exact" } : {}),
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        })),
      } as never);
    await expect(
      server
        .client()
        .resource(beta, "default")
        .create({ metadata: { name: "w" }, spec: { size: 1 } }),
    ).rejects.toThrow('admission webhook "equivalent.example.com" denied the request: no widgets');
    expect(calls).toEqual(["equivalent v1beta1"]);
  });

  it("Equivalent: a ValidatingAdmissionPolicy on v1 sees a v1beta1 write at v1; Exact does not match it", async () => {
    const server = await serverWithWidgets();
    const client = server.client();
    const install = async (name: string, matchPolicy: "Exact" | "Equivalent") => {
      await client.resource(validatingAdmissionPolicies).create({
        metadata: { name },
        spec: {
          matchConstraints: { resourceRules: [v1Rule], matchPolicy },
          validations: [
            {
              expression: "object.apiVersion == 'example.com/v1' && object.spec.size <= 2",
              message: "small v1 widgets only",
            },
          ],
        },
      } as never);
      await client.resource(validatingAdmissionPolicyBindings).create({
        metadata: { name: `${name}-binding` },
        spec: { policyName: name, validationActions: ["Deny"] },
      } as never);
    };
    await install("exact", "Exact");
    const widgets = client.resource(beta, "default");
    // Exact: a v1beta1 write is not the policy's.
    await widgets.create({ metadata: { name: "big" }, spec: { size: 5 } });
    await install("equivalent", "Equivalent");
    // Equivalent: the object is seen at v1, so a small one passes and a big one is refused.
    await widgets.create({ metadata: { name: "small" }, spec: { size: 1 } });
    await expect(widgets.create({ metadata: { name: "huge" }, spec: { size: 9 } })).rejects.toThrow(
      "widgets.example.com \"huge\" is forbidden: ValidatingAdmissionPolicy 'equivalent' with binding 'equivalent-binding' denied request: small v1 widgets only",
    );
  });
});
