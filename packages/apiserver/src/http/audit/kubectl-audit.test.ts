import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/kubectl.js";
import type { AuditEvent } from "./event.js";

afterEach(closeKubectlClusters);

describe("audit with the real kubectl", () => {
  it("records kubectl's protobuf create as JSON, its apply patch, and a delete's DeleteOptions", async () => {
    const events: AuditEvent[] = [];
    const cluster = await kubectlCluster(
      {},
      {
        tls: true,
        token: "admin-token",
        audit: {
          policy: [
            "apiVersion: audit.k8s.io/v1",
            "kind: Policy",
            "omitStages: [RequestReceived]",
            "rules:",
            "- level: Request",
            "  resources: [{group: '', resources: [configmaps]}]",
            "  verbs: [create, patch, delete]",
          ].join("\n"),
          backend: { process: (event) => void events.push(event) },
        },
      },
    );
    expect(
      (await cluster.kubectl(["create", "configmap", "settings", "--from-literal=color=red"])).code,
    ).toBe(0);
    const applied = await cluster.kubectl(
      ["apply", "--server-side", "--force-conflicts", "-f", "-"],
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n",
    );
    expect(applied.stderr).toBe("");
    expect((await cluster.kubectl(["delete", "configmap", "settings"])).code).toBe(0);
    await expect.poll(() => events.map((e) => e.verb)).toEqual(["create", "patch", "delete"]);
    const [create, patch, remove] = events;
    expect(create!.userAgent).toMatch(/^kubectl\//);
    expect(create!.objectRef).toEqual({
      resource: "configmaps",
      namespace: "default",
      name: "settings",
      apiVersion: "v1",
    });
    expect(create!.requestObject).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings" },
      data: { color: "red" },
    });
    expect(patch!.requestURI).toBe(
      "/api/v1/namespaces/default/configmaps/settings?fieldManager=kubectl&fieldValidation=Strict&force=true&timeout=20s",
    );
    expect(patch!.requestObject).toMatchObject({ data: { color: "blue" } });
    expect(patch!.responseStatus).toEqual({ metadata: {}, code: 200 });
    expect(remove!.requestObject).toEqual({
      kind: "DeleteOptions",
      apiVersion: "meta.k8s.io/v1",
      propagationPolicy: "Background",
    });
    expect(events.every((e) => e.responseObject === undefined)).toBe(true);
  });
});
