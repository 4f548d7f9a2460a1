import { createHash } from "node:crypto";
import { type Deployment, deployments, isConflict, type ReplicaSet, replicaSets } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// `kubectl rollout` against the embedded server, with a tiny stand-in for the Deployment
// controller: one ReplicaSet per pod template (owned, labelled with pod-template-hash,
// annotated with its revision), and a status that reports the rollout complete at once.

afterEach(closeKubectlClusters);

async function cluster() {
  const { client, kubectl, defer } = await kubectlCluster();
  const stop = new AbortController();
  const controller = runDeploymentStandIn(client, stop.signal);
  defer(async () => {
    stop.abort();
    await controller;
  });
  return { client, kubectl };
}

/** Reconciles every deployment on each change until the signal aborts. */
async function runDeploymentStandIn(client: Client, signal: AbortSignal): Promise<void> {
  const all = client.resource(deployments);
  const list = await all.list();
  const watch = await all.watch({ resourceVersion: list.metadata.resourceVersion, signal });
  for (const item of list.items) await reconcile(client, item);
  try {
    for await (const event of watch) {
      if (event.type !== "ADDED" && event.type !== "MODIFIED") continue;
      try {
        await reconcile(client, event.object);
      } catch (error) {
        // A write raced with kubectl's: the event of that write reconciles again.
        if (!isConflict(error)) throw error;
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

const revisionAnnotation = "deployment.kubernetes.io/revision";

async function reconcile(client: Client, deployment: Deployment): Promise<void> {
  const namespace = deployment.metadata!.namespace!;
  const name = deployment.metadata!.name!;
  if (deployment.metadata?.deletionTimestamp) return;
  const rsClient = client.resource(replicaSets, namespace);
  const owned = (await rsClient.list()).items.filter((rs) =>
    rs.metadata?.ownerReferences?.some((ref) => ref.uid === deployment.metadata?.uid),
  );
  const template = structuredClone(deployment.spec!.template);
  delete template.metadata?.labels?.["pod-template-hash"];
  const hash = createHash("sha256").update(canonicalJson(template)).digest("hex").slice(0, 10);
  const revisionOf = (rs: ReplicaSet) => Number(rs.metadata?.annotations?.[revisionAnnotation] ?? 0);
  const maxRevision = Math.max(0, ...owned.map(revisionOf));
  const replicas = deployment.spec?.replicas ?? 1;
  let current = owned.find((rs) => rs.metadata?.labels?.["pod-template-hash"] === hash);
  let revision = current ? revisionOf(current) : maxRevision + 1;
  if (current && revision !== maxRevision) revision = maxRevision + 1;
  const labels = { ...(template.metadata?.labels ?? {}), "pod-template-hash": hash };
  const wanted: ReplicaSet = {
    metadata: {
      ...(current?.metadata ?? {}),
      name: `${name}-${hash}`,
      labels,
      annotations: { ...(current?.metadata?.annotations ?? {}), [revisionAnnotation]: String(revision) },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name,
          uid: deployment.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas,
      selector: {
        matchLabels: { ...(deployment.spec?.selector.matchLabels ?? {}), "pod-template-hash": hash },
      },
      template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
    },
  };
  current = current ? await rsClient.update(wanted) : await rsClient.create(wanted);
  for (const old of owned) {
    if (old.metadata?.name !== current.metadata?.name && old.spec?.replicas !== 0) {
      await rsClient.patch(old.metadata!.name!, { spec: { replicas: 0 } }, { type: "merge" });
    }
  }
  const fresh = await client.resource(deployments, namespace).get(name);
  if (fresh.metadata?.annotations?.[revisionAnnotation] !== String(revision)) {
    await client
      .resource(deployments, namespace)
      .patch(
        name,
        { metadata: { annotations: { [revisionAnnotation]: String(revision) } } },
        { type: "merge" },
      );
  }
  const latest = await client.resource(deployments, namespace).get(name);
  await client.resource(deployments, namespace).updateStatus({
    ...latest,
    status: {
      observedGeneration: latest.metadata?.generation ?? 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        },
        {
          type: "Progressing",
          status: "True",
          reason: "NewReplicaSetAvailable",
          message: `ReplicaSet "${name}-${hash}" has successfully progressed.`,
        },
      ],
    },
  });
}

/** JSON with sorted keys, so equal templates hash alike whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("kubectl rollout against the embedded server", { timeout: 120_000 }, () => {
  it("rollout status waits for the new generation to be observed and reports success", async () => {
    const { kubectl } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx:1.26", "--replicas=2"]);
    await kubectl(["set", "image", "deploy/web", "nginx=nginx:1.27"]);
    const result = await kubectl(["rollout", "status", "deploy/web", "--timeout=20s"]);
    expect([result.code, result.stdout.trim().split("\n").at(-1)]).toEqual([
      0,
      'deployment "web" successfully rolled out',
    ]);
  });

  it("rollout history lists the revisions and undo goes back to the previous template", async () => {
    const { kubectl, client } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx:1.26"]);
    await kubectl(["rollout", "status", "deploy/web", "--timeout=20s"]);
    await kubectl(["set", "image", "deploy/web", "nginx=nginx:1.27"]);
    await kubectl(["rollout", "status", "deploy/web", "--timeout=20s"]);
    const history = await kubectl(["rollout", "history", "deploy/web"]);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);

    const undo = await kubectl(["rollout", "undo", "deploy/web"]);
    expect([undo.code, undo.stdout.trim()]).toEqual([0, "deployment.apps/web rolled back"]);
    const web = await client.resource(deployments, "default").get("web");
    expect(web.spec?.template.spec?.containers[0]?.image).toBe("nginx:1.26");
    await kubectl(["rollout", "status", "deploy/web", "--timeout=20s"]);
    const after = await kubectl(["rollout", "history", "deploy/web"]);
    expect(after.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
  });

  it("rollout restart stamps the pod template, which makes a new revision", async () => {
    const { kubectl, client } = await cluster();
    await kubectl(["create", "deployment", "web", "--image=nginx"]);
    const result = await kubectl(["rollout", "restart", "deploy/web"]);
    expect([result.code, result.stdout.trim()]).toEqual([0, "deployment.apps/web restarted"]);
    const web = await client.resource(deployments, "default").get("web");
    expect(web.spec?.template.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"]).toMatch(
      /^\d{4}-\d\d-\d\dT/,
    );
    expect(web.metadata?.generation).toBe(2);
    const status = await kubectl(["rollout", "status", "deploy/web", "--timeout=20s"]);
    expect(status.code).toBe(0);
  });
});
