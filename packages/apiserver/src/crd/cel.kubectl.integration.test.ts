import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

// End-to-end: the real kubectl (on the PATH) applies a CRD whose rules use Kubernetes' CEL libraries, sees
// objects refused by them, and sees a CRD refused for its rules' estimated cost and for a rule that
// does not type-check against the schema.

function crd(listBounds: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sandboxes.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: sandboxes, kind: Sandbox}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "quantity(self.memory).isLessThan(quantity('1Gi'))"
              messageExpression: "'memory ' + self.memory + ' must be less than 1Gi'"
            - rule: "self.allowed.all(c, isCIDR(c) && cidr(c).prefixLength() >= 16)"
              message: "allowed must hold CIDRs of /16 or narrower"
            - rule: "self.allowed.all(a, self.allowed.all(b, a == b || !cidr(a).containsCIDR(b)))"
              message: "allowed CIDRs must not overlap"
            properties:
              memory: {type: string, maxLength: 32}
              allowed:
                type: array
                ${listBounds}
                items: {type: string, maxLength: 64}
`;
}

function sandbox(memory: string, allowed: string[]): string {
  return `apiVersion: example.com/v1
kind: Sandbox
metadata: {name: box}
spec:
  memory: "${memory}"
  allowed: ${JSON.stringify(allowed)}
`;
}

describe("kubectl and CEL rules", () => {
  it("refuses a CRD over the estimated cost budget, then serves it bounded and enforces its rules", async () => {
    const { kubectl } = await kubectlCluster({ customResourceDefinitions: true });
    const unbounded = await kubectl(["apply", "-f", "-"], crd(""));
    expect(unbounded.code).toBe(1);
    expect(unbounded.stderr).toContain(
      "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
    );

    expect((await kubectl(["apply", "-f", "-"], crd("maxItems: 16"))).code).toBe(0);
    expect(
      (await kubectl(["wait", "--for=condition=established", "crd/sandboxes.example.com", "--timeout=20s"]))
        .code,
    ).toBe(0);

    const refused = await kubectl(["apply", "-f", "-"], sandbox("2Gi", ["10.0.0.0/8", "10.1.0.0/16"]));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The Sandbox "box" is invalid: ');
    expect(refused.stderr).toContain('spec: Invalid value: "object": memory 2Gi must be less than 1Gi');
    expect(refused.stderr).toContain(
      'spec: Invalid value: "object": allowed must hold CIDRs of /16 or narrower',
    );
    expect(refused.stderr).toContain('spec: Invalid value: "object": allowed CIDRs must not overlap');

    const created = await kubectl(["apply", "-f", "-"], sandbox("512Mi", ["10.0.0.0/16", "10.1.0.0/16"]));
    expect(created).toMatchObject({ code: 0, stdout: "sandbox.example.com/box created\n" });
  });

  it("refuses a CRD whose rule reads a field its schema does not declare, in cel-go's words", async () => {
    const { kubectl } = await kubectlCluster({ customResourceDefinitions: true });
    const typo = crd("maxItems: 16").replace("quantity(self.memory)", "quantity(self.memroy)");
    const refused = await kubectl(["apply", "-f", "-"], typo);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ",
    );
    expect(refused.stderr).toContain(
      "compilation failed: ERROR: <input>:1:14: undefined field 'memroy'\n | quantity(self.memroy).isLessThan(quantity('1Gi'))\n | .............^",
    );
  });
});
