import { controllerRevisions, daemonSets, isInvalid, StatusError } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

/** A revision owned by a DaemonSet that exists (the garbage collector removes one whose owner does not). */
async function ownedRevision(client: Client) {
  const daemonSet = await client.resource(daemonSets, "default").create({
    metadata: { name: "web" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  } as never);
  const owner = {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    name: "web",
    uid: daemonSet.metadata!.uid!,
    controller: true,
  };
  return {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: { name: "web-7d9f", ownerReferences: [owner] },
    data: { spec: { template: { metadata: { labels: { app: "web" } } } } },
    revision: 3,
  };
}

async function failure(promise: Promise<unknown>): Promise<StatusError> {
  const error = await promise.catch((e: unknown) => e);
  if (!(error instanceof StatusError)) throw new Error(`expected a StatusError, got ${String(error)}`);
  return error;
}

describe("ControllerRevisions", () => {
  it("need data, a non-negative revision, and never change their data", async () => {
    const { client } = await kubectlCluster();
    const revisions = client.resource(controllerRevisions, "default");
    const missing = await failure(revisions.create({ metadata: { name: "r" }, revision: -1 } as never));
    expect(isInvalid(missing)).toBe(true);
    expect(missing.status.message).toBe(
      'ControllerRevision.apps "r" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]',
    );
    const created = await revisions.create((await ownedRevision(client)) as never);
    expect(created.metadata?.generation).toBeUndefined();
    const changed = await failure(revisions.update({ ...created, data: { spec: {} } } as never));
    expect(changed.status.message).toBe(
      'ControllerRevision.apps "web-7d9f" is invalid: data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{0x7b, 0x22, 0x73, 0x70, 0x65, 0x63, 0x22, 0x3a, 0x7b, 0x7d, 0x7d}, ContentEncoding:"", ContentType:"application/json"}: field is immutable',
    );
    const relabelled = await revisions.update({
      ...created,
      metadata: { ...created.metadata, labels: { a: "b" } },
    } as never);
    expect(relabelled.metadata?.labels).toEqual({ a: "b" });
  });

  it("kubectl lists them with their controller as kind.group/name and their revision", async () => {
    const { client, kubectl } = await kubectlCluster();
    const revisions = client.resource(controllerRevisions, "default");
    await revisions.create((await ownedRevision(client)) as never);
    await revisions.create({ metadata: { name: "orphan" }, data: {}, revision: 1 } as never);
    const listed = await kubectl(["get", "controllerrevisions", "-n", "default"]);
    expect(listed.stderr).toBe("");
    expect(listed.stdout.split("\n").map((line) => line.split(/\s+/).slice(0, 3).join(" "))).toEqual([
      "NAME CONTROLLER REVISION",
      "orphan <none> 1",
      "web-7d9f daemonset.apps/web 3",
      "",
    ]);
    const resources = await kubectl(["api-resources", "--api-group=apps", "--no-headers"]);
    expect(resources.stdout).toContain("controllerrevisions");
  });
});
