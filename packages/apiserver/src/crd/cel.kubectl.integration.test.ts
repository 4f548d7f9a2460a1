import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

// End-to-end: the real kubectl (on the PATH) applies a CRD whose rules use Kubernetes' CEL libraries, sees
// objects refused by them, and sees a CRD refused for its rules' estimated cost.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster() {
  const api = new ApiServer({ customResourceDefinitions: true });
  const server = await api.listen();
  const home = await mkdtemp(join(tmpdir(), "reconcile-kubectl-cel-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  cleanups.push(async () => {
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  return (args: string[], input?: string): Promise<Result> =>
    new Promise((resolve) => {
      const child = execFile(
        "kubectl",
        [...args, "--request-timeout=20s"],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
}

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
    const kubectl = await cluster();
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
});
