import { configMaps } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

// End-to-end: the real kubectl (v1.32, on the PATH) doing server-side apply against our server.

const configMap = (data: Record<string, string>) =>
  `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
${Object.entries(data)
  .map(([key, value]) => `  ${key}: "${value}"`)
  .join("\n")}
`;

describe("kubectl apply --server-side", () => {
  it("refuses a value another manager owns with upstream's message, and takes it with --force-conflicts", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const first = await kubectl([
      "apply",
      "--server-side",
      "--field-manager=alice",
      "-f",
      await file("a.yaml", configMap({ color: "red" })),
    ]);
    expect(first).toMatchObject({ code: 0, stdout: "configmap/settings serverside-applied\n" });

    const path = await file("b.yaml", configMap({ color: "blue" }));
    const conflict = await kubectl(["apply", "--server-side", "--field-manager=bob", "-f", path]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(
      'error: Apply failed with 1 conflict: conflict with "alice": .data.color\n',
    );
    expect(conflict.stderr).toContain("--force-conflicts");
    expect((await client.resource(configMaps, "default").get("settings")).data).toEqual({ color: "red" });

    const forced = await kubectl([
      "apply",
      "--server-side",
      "--field-manager=bob",
      "--force-conflicts",
      "-f",
      path,
    ]);
    expect(forced.code).toBe(0);
    const stored = await client.resource(configMaps, "default").get("settings");
    expect(stored.data).toEqual({ color: "blue" });
    expect(
      stored.metadata?.managedFields?.map((entry) => [entry.manager, entry.operation, entry.fieldsV1]),
    ).toEqual([["bob", "Apply", { "f:data": { "f:color": {} } }]]);
  });

  it("removes a field dropped from the applied manifest", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    await kubectl(["apply", "--server-side", "-f", await file("a.yaml", configMap({ a: "1", b: "2" }))]);
    const result = await kubectl([
      "apply",
      "--server-side",
      "-f",
      await file("b.yaml", configMap({ a: "1" })),
    ]);
    expect(result.code).toBe(0);
    expect((await client.resource(configMaps, "default").get("settings")).data).toEqual({ a: "1" });
  });

  it("shows managedFields only with --show-managed-fields", async () => {
    const { kubectl, file } = await kubectlCluster();
    await kubectl(["apply", "--server-side", "-f", await file("a.yaml", configMap({ a: "1" }))]);
    const plain = await kubectl(["get", "configmap", "settings", "-o", "yaml"]);
    expect(plain.stdout).not.toContain("managedFields");
    const shown = await kubectl(["get", "configmap", "settings", "-o", "yaml", "--show-managed-fields"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /managedFields:\n {2}- apiVersion: v1\n {4}fieldsType: FieldsV1\n {4}fieldsV1:\n {6}f:data:\n {8}f:a: \{\}\n {4}manager: kubectl\n {4}operation: Apply\n {4}time: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\n/,
    );
  });

  it("takes over from client-side apply: the last-applied migration lets a dropped field be removed", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const clientSide = await kubectl(["apply", "-f", await file("a.yaml", configMap({ a: "1", b: "2" }))]);
    expect(clientSide).toMatchObject({ code: 0, stdout: "configmap/settings created\n" });
    const before = await client.resource(configMaps, "default").get("settings");
    expect(before.metadata?.managedFields?.map((entry) => [entry.manager, entry.operation])).toEqual([
      ["kubectl-client-side-apply", "Update"],
    ]);

    const serverSide = await kubectl([
      "apply",
      "--server-side",
      "-f",
      await file("b.yaml", configMap({ a: "1" })),
    ]);
    expect(serverSide.stderr).toBe("");
    expect(serverSide).toMatchObject({ code: 0, stdout: "configmap/settings serverside-applied\n" });
    const after = await client.resource(configMaps, "default").get("settings");
    expect(after.data).toEqual({ a: "1" });
    expect(after.metadata?.managedFields?.map((entry) => entry.manager).sort()).toEqual([
      "kubectl",
      "kubectl-last-applied",
    ]);
  });
});
