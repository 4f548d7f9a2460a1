import {
  configMaps,
  deployments,
  namespaces,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
} from "@reconcile/api";
import type {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from "kubernetes-types/admissionregistration/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

// Upstream test/integration/apiserver/cel/validatingadmissionpolicy_test.go, its cases as this server answers them.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function newServer() {
  const server = new ApiServer({ admissionPlugins: ["NamespaceLifecycle", "ValidatingAdmissionPolicy"] });
  cleanups.push(() => server.close());
  return server.client();
}

const deploymentRule = {
  operations: ["CREATE", "UPDATE"],
  apiGroups: ["apps"],
  apiVersions: ["v1"],
  resources: ["deployments"],
};

function deployment(name: string, replicas: number, labels: Record<string, string> = { app: name }) {
  return {
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  };
}

async function install(
  client: ReturnType<typeof newServer>,
  policy: ValidatingAdmissionPolicy["spec"],
  binding: Partial<NonNullable<ValidatingAdmissionPolicyBinding["spec"]>> = {},
) {
  await client
    .resource(validatingAdmissionPolicies)
    .create({ metadata: { name: "replicas" }, spec: policy } as ValidatingAdmissionPolicy);
  await client.resource(validatingAdmissionPolicyBindings).create({
    metadata: { name: "replicas-binding" },
    spec: { policyName: "replicas", validationActions: ["Deny"], ...binding },
  } as ValidatingAdmissionPolicyBinding);
}

describe("ValidatingAdmissionPolicy", () => {
  it("denies with upstream's 422 and texts, the message, messageExpression or failed expression, and reason", async () => {
    const client = newServer();
    await install(client, {
      matchConstraints: { resourceRules: [deploymentRule] },
      validations: [
        { expression: "object.spec.replicas <= 5", message: "too many replicas" },
        {
          expression: "object.spec.replicas != 4",
          messageExpression: "'replicas may not be ' + string(object.spec.replicas)",
        },
        { expression: "object.spec.replicas != 3", reason: "Forbidden" },
      ],
    });
    const policy = (await client
      .resource(validatingAdmissionPolicies)
      .get("replicas")) as ValidatingAdmissionPolicy;
    expect(policy.spec).toMatchObject({
      failurePolicy: "Fail",
      matchConstraints: { matchPolicy: "Equivalent", namespaceSelector: {}, objectSelector: {} },
    });
    const create = (d: ReturnType<typeof deployment>) =>
      client.resource(deployments, "default").create(d as never);
    await create(deployment("ok", 1));
    const message = (text: string, name: string) =>
      `deployments.apps "${name}" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: ${text}`;
    await expect(create(deployment("six", 6))).rejects.toMatchObject({
      code: 422,
      reason: "Invalid",
      message: message("too many replicas", "six"),
      status: {
        details: {
          name: "six",
          group: "apps",
          kind: "deployments",
          causes: [{ message: message("too many replicas", "six").replace(/^.*forbidden: /, "") }],
        },
      },
    });
    await expect(create(deployment("four", 4))).rejects.toMatchObject({
      code: 422,
      message: message("replicas may not be 4", "four"),
    });
    await expect(create(deployment("three", 3))).rejects.toMatchObject({
      code: 403,
      reason: "Forbidden",
      message: message("failed expression: object.spec.replicas != 3", "three"),
    });
    // Other kinds pass.
    await client.resource(configMaps, "default").create({ metadata: { name: "cm" } });
  });

  it("reads params, with parameterNotFoundAction Deny or Allow, and warns instead of denying", async () => {
    const client = newServer();
    await client.resource(configMaps, "default").create({ metadata: { name: "limits" }, data: { max: "2" } });
    await install(
      client,
      {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: { resourceRules: [deploymentRule] },
        validations: [
          {
            expression: "object.spec.replicas <= int(params.data.max)",
            messageExpression: "'at most ' + params.data.max",
          },
        ],
      },
      { paramRef: { name: "limits", parameterNotFoundAction: "Deny" } },
    );
    await expect(
      client.resource(deployments, "default").create(deployment("three", 3) as never),
    ).rejects.toMatchObject({
      message: expect.stringContaining("denied request: at most 2"),
    });
    await client.resource(namespaces).create({ metadata: { name: "other" } });
    // No ConfigMap "limits" in "other": the binding says Deny.
    await expect(
      client.resource(deployments, "other").create(deployment("one", 1) as never),
    ).rejects.toMatchObject({
      code: 422,
      message:
        "deployments.apps \"one\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    });
    const binding = await client.resource(validatingAdmissionPolicyBindings).get("replicas-binding");
    await client.resource(validatingAdmissionPolicyBindings).update({
      ...binding,
      spec: {
        ...(binding as ValidatingAdmissionPolicyBinding).spec,
        paramRef: { name: "limits", parameterNotFoundAction: "Allow" },
        validationActions: ["Warn"],
      },
    } as never);
    await client.resource(deployments, "other").create(deployment("one", 1) as never);
    const warnings: string[] = [];
    await client
      .resource(deployments, "default")
      .create(deployment("three", 3) as never, { warnings } as never);
    expect(warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding': at most 2",
    ]);
  });

  it("selects by the binding's match resources and the policy's match conditions; errors follow failurePolicy", async () => {
    const client = newServer();
    await install(
      client,
      {
        matchConstraints: { resourceRules: [deploymentRule] },
        matchConditions: [{ name: "not-exempt", expression: "!('exempt' in object.metadata.labels)" }],
        validations: [{ expression: "object.spec.replicas < 2" }],
      },
      { matchResources: { objectSelector: { matchLabels: { team: "a" } } } },
    );
    const create = (name: string, labels: Record<string, string>) =>
      client.resource(deployments, "default").create(deployment(name, 3, labels) as never);
    await create("b", { team: "b" });
    await create("exempt", { team: "a", exempt: "yes" });
    await expect(create("a", { team: "a" })).rejects.toMatchObject({ code: 422 });
    // A validation that errors fails closed by default and open with Ignore.
    const policy = (await client
      .resource(validatingAdmissionPolicies)
      .get("replicas")) as ValidatingAdmissionPolicy;
    const erroring = {
      ...policy,
      spec: {
        ...policy.spec,
        matchConditions: [],
        validations: [{ expression: "object.spec.missing.field == 1" }],
      },
    };
    await client.resource(validatingAdmissionPolicies).update(erroring as never);
    await expect(create("err", { team: "a" })).rejects.toMatchObject({
      code: 422,
      message: expect.stringMatching(
        /denied request: expression 'object\.spec\.missing\.field == 1' resulted in error: /,
      ),
    });
    const ignoring = (await client
      .resource(validatingAdmissionPolicies)
      .get("replicas")) as ValidatingAdmissionPolicy;
    await client
      .resource(validatingAdmissionPolicies)
      .update({ ...ignoring, spec: { ...ignoring.spec, failurePolicy: "Ignore" } } as never);
    await create("err", { team: "a" });
  });

  it("refuses a policy whose expression does not compile, and a binding with Deny and Warn", async () => {
    const client = newServer();
    await expect(
      client.resource(validatingAdmissionPolicies).create({
        metadata: { name: "broken" },
        spec: {
          matchConstraints: { resourceRules: [deploymentRule] },
          validations: [{ expression: "object.spec.replicas <" }],
        },
      } as ValidatingAdmissionPolicy),
    ).rejects.toMatchObject({
      code: 422,
      message: expect.stringContaining(
        'spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: ERROR: ',
      ),
    });
    await expect(
      client.resource(validatingAdmissionPolicyBindings).create({
        metadata: { name: "b" },
        spec: { policyName: "p", validationActions: ["Deny", "Warn"] },
      } as ValidatingAdmissionPolicyBinding),
    ).rejects.toMatchObject({
      code: 422,
      message: expect.stringContaining("must not contain both Deny and Warn"),
    });
  });
});

describe("ValidatingAdmissionPolicy variables", () => {
  it("are evaluated when a validation reads them, once, each seeing the ones before it; a failing one fails only what reads it", async () => {
    const client = newServer();
    await install(client, {
      matchConstraints: { resourceRules: [deploymentRule] },
      variables: [
        { name: "replicas", expression: "object.spec.replicas" },
        { name: "double", expression: "variables.replicas * 2" },
        { name: "broken", expression: "object.spec.missing.field" },
        { name: "ahead", expression: "variables.later" },
        { name: "later", expression: "1" },
      ],
      validations: [
        { expression: "variables.double < 6", messageExpression: "'double is ' + string(variables.double)" },
      ],
    });
    const deployments_ = client.resource(deployments, "default");
    // The broken variables are never read: the policy passes.
    await deployments_.create(deployment("two", 2) as never);
    await expect(deployments_.create(deployment("three", 3) as never)).rejects.toMatchObject({
      code: 422,
      message:
        "deployments.apps \"three\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: double is 6",
    });
    const policy = (await client
      .resource(validatingAdmissionPolicies)
      .get("replicas")) as ValidatingAdmissionPolicy;
    for (const [expression, error] of [
      ["variables.broken == 1", 'composited variable "broken" fails to evaluate: '],
      ["variables.ahead == 1", 'composited variable "ahead" fails to evaluate: '],
    ] as const) {
      const latest = (await client
        .resource(validatingAdmissionPolicies)
        .get("replicas")) as ValidatingAdmissionPolicy;
      await client.resource(validatingAdmissionPolicies).update({
        ...latest,
        spec: { ...policy.spec, validations: [{ expression }] },
      } as never);
      await expect(deployments_.create(deployment("one", 1) as never)).rejects.toMatchObject({
        code: 422,
        message: expect.stringContaining(
          `denied request: expression '${expression}' resulted in error: ${error}`,
        ),
      });
    }
  });
});
