import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  ContainerConfigError,
  containerEnvironment,
  expandReferences,
  podHostname,
} from "./container-env.js";

describe("expandReferences (upstream's expansion tests)", () => {
  const vars = new Map([
    ["VAR_A", "A"],
    ["VAR_B", "B"],
    ["VAR_EMPTY", ""],
  ]);
  it.each([
    ["$(VAR_A)", "A"],
    ["___$(VAR_B)___", "___B___"],
    ["$(VAR_A)-$(VAR_A)", "A-A"],
    ["$(VAR_A)$(VAR_B)", "AB"],
    ["$(VAR_EMPTY)", ""],
    ["$(VAR_DNE)", "$(VAR_DNE)"],
    ["$$(VAR_B)", "$(VAR_B)"],
    ["$$$(VAR_A)", "$A"],
    ["$(VAR_A", "$(VAR_A"],
    ["$VAR_A", "$VAR_A"],
    ["f000-$$VAR_A", "f000-$VAR_A"],
    ["$$", "$"],
    ["$", "$"],
    ["$()", "$()"],
    ["no refs", "no refs"],
  ])("%s → %s", (input, output) => {
    expect(expandReferences(input, vars)).toBe(output);
  });
});

const pod: Pod = {
  metadata: {
    name: "pi-2-abcde",
    namespace: "batch",
    uid: "u-1",
    annotations: { "batch.kubernetes.io/job-completion-index": "2" },
  },
  spec: { nodeName: "node-1", serviceAccountName: "default", containers: [] },
};

const sources = (configMaps: Record<string, Record<string, string>> = {}) => ({
  configMap: async (_: string, name: string) => (configMaps[name] ? { data: configMaps[name] } : undefined),
  secret: async (_: string, name: string) =>
    name === "creds" ? { data: { password: Buffer.from("s3cret").toString("base64") } } : undefined,
  allocatable: () => ({ milliCpu: 4000, memory: 16 * 1024 ** 3 }),
  podIP: () => "10.244.0.7",
});

describe("containerEnvironment", () => {
  it("builds envFrom, then env in order with references to earlier values, then expands command and args", async () => {
    const result = await containerEnvironment(
      pod,
      {
        name: "main",
        envFrom: [{ configMapRef: { name: "settings" }, prefix: "CFG_" }],
        env: [
          {
            name: "INDEX",
            valueFrom: {
              fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
            },
          },
          { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "PASSWORD", valueFrom: { secretKeyRef: { name: "creds", key: "password" } } },
          { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
          { name: "LABEL", value: "$(POD)@$(CFG_mode)/$(LATER)" },
          { name: "LATER", value: "x" },
        ],
        command: ["sh", "-c", "echo $(INDEX) $(NOPE)"],
        args: ["$$(POD)"],
      },
      sources({ settings: { mode: "fast", "bad key": "dropped" } }),
    );
    expect(result).toEqual({
      envs: [
        { name: "CFG_mode", value: "fast" },
        { name: "INDEX", value: "2" },
        { name: "POD", value: "pi-2-abcde" },
        { name: "IP", value: "10.244.0.7" },
        { name: "PASSWORD", value: "s3cret" },
        { name: "CPU", value: "4" },
        { name: "LABEL", value: "pi-2-abcde@fast/$(LATER)" },
        { name: "LATER", value: "x" },
      ],
      command: ["sh", "-c", "echo 2 $(NOPE)"],
      args: ["$(POD)"],
    });
  });

  it.each([
    [
      { name: "A", valueFrom: { configMapKeyRef: { name: "absent", key: "k" } } },
      'configmap "absent" not found',
    ],
    [
      { name: "A", valueFrom: { configMapKeyRef: { name: "settings", key: "k" } } },
      "couldn't find key k in ConfigMap batch/settings",
    ],
    [{ name: "A", valueFrom: { secretKeyRef: { name: "absent", key: "k" } } }, 'secret "absent" not found'],
    [
      { name: "A", valueFrom: { secretKeyRef: { name: "creds", key: "k" } } },
      "couldn't find key k in Secret batch/creds",
    ],
  ])("%j is a CreateContainerConfigError: %s", async (env, message) => {
    const failure = await containerEnvironment(
      pod,
      { name: "main", env: [env] },
      sources({ settings: {} }),
    ).catch((e) => e);
    expect(failure).toBeInstanceOf(ContainerConfigError);
    expect(failure.message).toBe(message);
  });

  it("skips an optional source or key that is missing", async () => {
    const result = await containerEnvironment(
      pod,
      {
        name: "main",
        envFrom: [{ secretRef: { name: "absent", optional: true } }],
        env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "settings", key: "k", optional: true } } }],
      },
      sources({ settings: {} }),
    );
    expect(result.envs).toEqual([]);
  });

  it("names the host as spec.hostname, else the pod, cut to 63 characters", () => {
    expect(podHostname({ metadata: { name: "web" }, spec: { hostname: "pi-0", containers: [] } })).toBe(
      "pi-0",
    );
    expect(podHostname({ metadata: { name: `${"a".repeat(62)}-b` } })).toBe("a".repeat(62));
  });
});
