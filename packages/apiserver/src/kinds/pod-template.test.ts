import { podTemplates } from "@reconcile/api";
import type { PodTemplate } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";
import { refusalLine } from "./kinds.test-util.js";

afterEach(closeKubectlClusters);

const web: PodTemplate = {
  metadata: { name: "web" },
  template: {
    metadata: { labels: { tier: "fe", app: "web" } },
    spec: {
      containers: [
        { name: "nginx", image: "nginx:1.27" },
        { name: "side", image: "busybox" },
      ],
    },
  },
};

describe("PodTemplates", () => {
  it("are defaulted as a pod's spec and count changes of their template in metadata.generation", async () => {
    const { client } = await kubectlCluster();
    const templates = client.resource(podTemplates, "default");
    const created = await templates.create(web);
    expect(created.metadata?.generation).toBe(1);
    const spec = created.template?.spec;
    expect([
      spec?.restartPolicy,
      spec?.dnsPolicy,
      spec?.schedulerName,
      spec?.terminationGracePeriodSeconds,
    ]).toEqual(["Always", "ClusterFirst", "default-scheduler", 30]);
    expect(spec?.containers.map((c) => c.imagePullPolicy)).toEqual(["IfNotPresent", "Always"]);

    const relabelled = await templates.update({
      ...created,
      metadata: { ...created.metadata, labels: { owner: "me" } },
    });
    expect(relabelled.metadata?.generation).toBe(1);
    const changed = await templates.update({
      ...relabelled,
      template: { ...relabelled.template, metadata: { labels: { app: "web" } } },
    });
    expect(changed.metadata?.generation).toBe(2);
  });

  it("refuse a template that is not a valid pod template", async () => {
    const { client } = await kubectlCluster();
    const templates = client.resource(podTemplates, "default");
    expect(await refusalLine(() => templates.create({ metadata: { name: "empty" } }))).toBe(
      '422 PodTemplate "empty" is invalid: template.spec.containers: Required value',
    );
    expect(
      await refusalLine(() =>
        templates.create({
          metadata: { name: "ephemeral" },
          template: {
            metadata: { labels: { "bad label": "x" } },
            spec: {
              containers: [{ name: "c", image: "busybox" }],
              ephemeralContainers: [{ name: "debug", image: "busybox" }],
            },
          },
        }),
      ),
    ).toBe(
      "422 PodTemplate \"ephemeral\" is invalid: [template.metadata.labels: Invalid value: \"bad label\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template]",
    );
  });

  it("kubectl lists them with the template's containers, images and pod labels, and no age", async () => {
    const { client, kubectl } = await kubectlCluster();
    await client.resource(podTemplates, "default").create(web);
    const listed = await kubectl(["get", "podtemplates", "-n", "default"]);
    expect(listed.stderr).toBe("");
    expect(listed.stdout.split("\n").map((line) => line.split(/\s+/).join(" "))).toEqual([
      "NAME CONTAINERS IMAGES POD LABELS",
      "web nginx,side nginx:1.27,busybox app=web,tier=fe",
      "",
    ]);
    const resources = await kubectl(["api-resources", "--api-group=", "--no-headers"]);
    expect(resources.stdout).toMatch(/^podtemplates\s+v1\s+true\s+PodTemplate$/m);
  });
});
