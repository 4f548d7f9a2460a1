import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

// End-to-end: the real kubectl (v1.32, on the PATH) applies a CRD and objects of its kind.

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    kind: CronTab
    shortNames: [ct]
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
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer, minimum: 0, default: 1}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
`;

const crontab = (name: string, spec: string) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
${spec}
`;

describe("kubectl with CustomResourceDefinitions", () => {
  it("applies a CRD, waits for it, applies, lists, scales, patches status of and deletes its objects", async () => {
    const { kubectl } = await kubectlCluster({ customResourceDefinitions: true });
    const applied = await kubectl(["apply", "-f", "-"], crd);
    expect(applied).toMatchObject({
      code: 0,
      stdout: "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n",
    });
    expect(
      (
        await kubectl([
          "wait",
          "--for=condition=established",
          "crd/crontabs.stable.example.com",
          "--timeout=20s",
        ])
      ).stdout,
    ).toBe("customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met\n");

    const created = await kubectl(
      ["apply", "-f", "-"],
      crontab("nightly", '  cronSpec: "0 0 * * *"\n  image: backup'),
    );
    expect(created).toMatchObject({ code: 0, stdout: "crontab.stable.example.com/nightly created\n" });
    const listed = await kubectl(["get", "ct"]);
    expect(listed.stdout.split("\n")[0]?.split(/\s+/)).toEqual(["NAME", "SPEC", "REPLICAS"]);
    expect(listed.stdout.split("\n")[1]?.split(/\s{2,}/)).toEqual(["nightly", "0 0 * * *", "1"]);

    const invalid = await kubectl(["apply", "-f", "-"], crontab("bad", "  replicas: -1"));
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      'The CronTab "bad" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    );

    expect((await kubectl(["scale", "crontab/nightly", "--replicas=3"])).stdout).toBe(
      "crontab.stable.example.com/nightly scaled\n",
    );
    const status = await kubectl([
      "patch",
      "crontab/nightly",
      "--subresource=status",
      "--type=merge",
      "-p",
      '{"status":{"replicas":3,"selector":"app=x"}}',
    ]);
    expect(status).toMatchObject({ code: 0, stdout: "crontab.stable.example.com/nightly patched\n" });
    const object = JSON.parse((await kubectl(["get", "crontab/nightly", "-o", "json"])).stdout);
    expect(object.spec).toEqual({ cronSpec: "0 0 * * *", image: "backup", replicas: 3 });
    expect(object.status).toEqual({ replicas: 3, selector: "app=x" });

    expect((await kubectl(["delete", "crd", "crontabs.stable.example.com"])).stdout).toBe(
      'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted\n',
    );
    const gone = await kubectl(["get", "crontabs.stable.example.com"]);
    expect(gone.code).toBe(1);
  }, 60_000);

  it("explains the custom kind from its schema and refuses its unknown fields under kubectl's Strict", async () => {
    const { kubectl } = await kubectlCluster({ customResourceDefinitions: true });
    await kubectl(["apply", "-f", "-"], crd);
    await kubectl([
      "wait",
      "--for=condition=established",
      "crd/crontabs.stable.example.com",
      "--timeout=20s",
    ]);

    const explained = await kubectl(["explain", "crontab.spec"]);
    expect(explained).toEqual({
      code: 0,
      stderr: "",
      stdout: `GROUP:      stable.example.com
KIND:       CronTab
VERSION:    v1

FIELD: spec <Object>


DESCRIPTION:
    <empty>
FIELDS:
  cronSpec\t<string>
    <no description>

  image\t<string>
    <no description>

  replicas\t<integer>
    <no description>


`,
    });

    const strict = await kubectl(["create", "-f", "-"], crontab("typo", "  cronSpec: x\n  imagee: y"));
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe(
      'Error from server (BadRequest): error when creating "STDIN": CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.imagee"\n',
    );
    const warned = await kubectl(
      ["create", "--validate=warn", "-f", "-"],
      crontab("typo", "  cronSpec: x\n  imagee: y"),
    );
    expect(warned).toEqual({
      code: 0,
      stdout: "crontab.stable.example.com/typo created\n",
      stderr: 'Warning: unknown field "spec.imagee"\n',
    });
  }, 60_000);
});
