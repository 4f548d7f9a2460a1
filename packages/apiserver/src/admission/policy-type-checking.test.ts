import { validatingAdmissionPolicies } from "@reconcile/api";
import type { ValidatingAdmissionPolicy } from "kubernetes-types/admissionregistration/v1.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { customResourceDefinitions } from "../crd/controller.js";
import { policyStatusFieldManager } from "./policy-status.js";
import { policyTypeWarnings } from "./policy-type-checking.js";

// Upstream's validating.TypeChecker (typechecking_test.go) and the e2e
// "should type check validation expressions", as this server answers them.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function newServer(): ApiServer {
  const server = new ApiServer();
  cleanups.push(() => server.close());
  return server;
}

type Spec = NonNullable<ValidatingAdmissionPolicy["spec"]>;

function policy(
  spec: Partial<Spec>,
  resources = ["deployments"],
  groups = ["apps"],
): ValidatingAdmissionPolicy {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "replicas", generation: 1 },
    spec: {
      matchConstraints: {
        resourceRules: [
          { operations: ["CREATE"], apiGroups: groups, apiVersions: ["v1"], resources } as never,
        ],
      },
      validations: [],
      ...spec,
    },
  };
}

describe("type checking a ValidatingAdmissionPolicy", () => {
  // The definitions a server serves; the checker only reads them.
  const server = new ApiServer();
  afterAll(() => server.close());
  const source = server.registry.definitions;
  const warnings = (spec: Partial<Spec>, resources?: string[], groups?: string[]) =>
    policyTypeWarnings(policy(spec, resources, groups), source);

  it("warns of what does not check against the kind's schema, per expression, and nothing else", () => {
    expect(
      warnings({
        validations: [
          { expression: "object.spec.replicas > 1" },
          { expression: "object.replicas > 1" },
          {
            expression: "object.spec.template.spec.containers.all(c, c.image != '')",
            messageExpression: "'replicas: ' + object.spec.replicas",
          },
        ],
      }),
    ).toEqual([
      {
        fieldRef: "spec.validations[1].expression",
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^\n",
      },
      {
        fieldRef: "spec.validations[2].messageExpression",
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:14: found no matching overload for '_+_' applied to '(string, int)'\n | 'replicas: ' + object.spec.replicas\n | .............^\n",
      },
    ]);
  });

  it("checks the field a has() tests, as cel-go checks a selection", () => {
    expect(
      warnings({
        validations: [
          { expression: "has(object.spec.strategy) && has(object.metadata.labels.app)" },
          { expression: "!has(object.spec.nope)" },
        ],
      }),
    ).toEqual([
      {
        fieldRef: "spec.validations[1].expression",
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:5: undefined field 'nope'\n | !has(object.spec.nope)\n | ....^\n",
      },
    ]);
  });

  it("checks each kind its rules name, and names the kinds an expression fails for", () => {
    expect(
      warnings({ validations: [{ expression: "object.spec.paused == false" }] }, [
        "replicasets",
        "deployments",
        "deployments/scale",
        "*",
      ]),
    ).toEqual([
      {
        fieldRef: "spec.validations[0].expression",
        warning:
          "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'paused'\n | object.spec.paused == false\n | ...........^\n",
      },
    ]);
  });

  it("checks a kind whose schema holds itself (a CRD's JSONSchemaProps), the way back typed dyn", () => {
    expect(
      warnings(
        {
          validations: [
            {
              expression:
                "object.spec.versions.all(v, !has(v.schema) || v.schema.openAPIV3Schema.properties.all(k, k != ''))",
            },
            { expression: "object.spec.nope" },
          ],
        },
        ["customresourcedefinitions"],
        ["apiextensions.k8s.io"],
      ),
    ).toEqual([
      {
        fieldRef: "spec.validations[1].expression",
        warning:
          "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition: ERROR: <input>:1:12: undefined field 'nope'\n | object.spec.nope\n | ...........^\n",
      },
    ]);
  });

  it("checks nothing where the rules hold a wildcard group or version, or name no served resource", () => {
    const wrong = { validations: [{ expression: "object.nope" }] };
    expect(warnings(wrong, ["deployments"], ["*"])).toEqual([]);
    expect(warnings(wrong, ["widgets"])).toEqual([]);
  });

  it("types oldObject as object, params as the paramKind, and variables as their expressions", () => {
    expect(
      warnings({
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        variables: [
          { name: "replicas", expression: "object.spec.replicas" },
          { name: "limit", expression: "int(params.data.limit)" },
        ],
        validations: [
          { expression: "variables.replicas <= variables.limit" },
          { expression: "oldObject == null || oldObject.spec.replicas <= object.spec.replicas" },
          { expression: "params.spec.limit > 0" },
          { expression: "variables.replicas.startsWith('1')" },
          { expression: "request.operation == 'CREATE' && namespaceObject.metadata.name != ''" },
        ],
      }),
    ).toEqual([
      {
        fieldRef: "spec.validations[2].expression",
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'spec'\n | params.spec.limit > 0\n | ......^\n",
      },
      {
        fieldRef: "spec.validations[3].expression",
        warning:
          "apps/v1, Kind=Deployment: ERROR: <input>:1:30: found no matching overload for 'startsWith' applied to 'int.(string)'\n | variables.replicas.startsWith('1')\n | .............................^\n",
      },
    ]);
  });
});

describe("the policy status controller", () => {
  it("writes observedGeneration and the warnings under its own field manager, once per generation", async () => {
    const server = newServer();
    const client = server.client().resource(validatingAdmissionPolicies);
    await client.create({
      ...policy({ validations: [{ expression: "object.replicas > 1" }] }),
      metadata: { name: "replicas" },
    });
    await expect
      .poll(async () => (await client.get("replicas")).status, { timeout: 5000, interval: 5 })
      .toEqual({
        observedGeneration: 1,
        typeChecking: {
          expressionWarnings: [
            {
              fieldRef: "spec.validations[0].expression",
              warning:
                "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^\n",
            },
          ],
        },
      });
    const stored = await client.get("replicas");
    expect(
      stored.metadata?.managedFields?.map(({ manager, operation, subresource }) => ({
        manager,
        operation,
        subresource,
      })),
    ).toContainEqual({ manager: policyStatusFieldManager, operation: "Apply", subresource: "status" });
    await client.update({
      ...stored,
      spec: { ...stored.spec!, validations: [{ expression: "object.spec.replicas > 1" }] },
    });
    await expect
      .poll(async () => (await client.get("replicas")).status, { timeout: 5000, interval: 5 })
      .toEqual({ observedGeneration: 2, typeChecking: {} });
  });

  it("checks a custom kind against its CRD's schema", async () => {
    const server = newServer();
    const admin = server.client();
    await admin.resource(customResourceDefinitions).create({
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
              },
            },
          },
        ],
      },
    } as never);
    await expect
      .poll(() => server.registry.definitions.get({ group: "example.com", version: "v1", plural: "widgets" }))
      .toBeDefined();
    const client = admin.resource(validatingAdmissionPolicies);
    await client.create({
      ...policy(
        {
          validations: [
            { expression: "object.spec.size < 10" },
            { expression: "object.spec.colour == 'red'" },
          ],
        },
        ["widgets"],
        ["example.com"],
      ),
      metadata: { name: "widgets" },
    });
    await expect
      .poll(async () => (await client.get("widgets")).status?.typeChecking, { timeout: 5000, interval: 5 })
      .toEqual({
        expressionWarnings: [
          {
            fieldRef: "spec.validations[1].expression",
            warning:
              "example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'\n | object.spec.colour == 'red'\n | ...........^\n",
          },
        ],
      });
  });
});
