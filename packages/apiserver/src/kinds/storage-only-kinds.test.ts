import {
  clusterRoleBindings,
  cronJobs,
  daemonSets,
  isInvalid,
  type KubeObject,
  persistentVolumeClaims,
  priorityClasses,
  type ResourceDescriptor,
  replicationControllers,
  StatusError,
  statefulSets,
  storageClasses,
} from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function client<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string) {
  const server = new ApiServer();
  servers.push(server);
  return server.client().resource(resource, namespace);
}

const template = {
  metadata: { labels: { app: "x" } },
  spec: { containers: [{ name: "c", image: "nginx" }] },
};

async function failure(promise: Promise<unknown>): Promise<StatusError> {
  const error = await promise.catch((e: unknown) => e);
  if (!(error instanceof StatusError)) throw new Error(`expected a StatusError, got ${String(error)}`);
  return error;
}

describe("kinds served as storage, with upstream's defaults", () => {
  it("a StatefulSet gets SetDefaults_StatefulSet's values, its status is cleared on create, and it scales", async () => {
    const sets = client(statefulSets, "default");
    const created = await sets.create({
      metadata: { name: "db" },
      spec: { selector: { matchLabels: { app: "x" } }, serviceName: "db", template },
      status: { replicas: 9 },
    } as never);
    expect(created.spec).toMatchObject({
      replicas: 1,
      podManagementPolicy: "OrderedReady",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
    });
    expect(created.spec?.template.spec?.restartPolicy).toBe("Always");
    // The status sent is cleared; what remains is what Go writes for an empty StatefulSetStatus.
    expect(created.status).toEqual({ availableReplicas: 0, replicas: 0 });
    const scale = await sets.updateScale("db", { spec: { replicas: 3 } } as never);
    expect(scale.spec?.replicas).toBe(3);
    expect(scale.status?.selector).toBe("app=x");
    expect((await sets.get("db")).spec?.replicas).toBe(3);
  });

  it("a DaemonSet and a CronJob get their update and history defaults", async () => {
    const ds = await client(daemonSets, "default").create({
      metadata: { name: "agent" },
      spec: { selector: { matchLabels: { app: "x" } }, template },
    } as never);
    expect(ds.spec?.updateStrategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    expect(ds.spec?.revisionHistoryLimit).toBe(10);
    const cj = await client(cronJobs, "default").create({
      metadata: { name: "nightly" },
      spec: {
        schedule: "0 0 * * *",
        jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: "Never" } } } },
      },
    } as never);
    expect(cj.spec).toMatchObject({
      concurrencyPolicy: "Allow",
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
  });

  it("a ReplicationController's selector and labels default to its template's labels", async () => {
    const rc = await client(replicationControllers, "default").create({
      metadata: { name: "old" },
      spec: { template },
    } as never);
    expect(rc.spec?.selector).toEqual({ app: "x" });
    expect(rc.metadata?.labels).toEqual({ app: "x" });
    expect(rc.spec?.replicas).toBe(1);
  });

  it("refuses a workload whose selector does not select its template", async () => {
    const error = await failure(
      client(daemonSets, "default").create({
        metadata: { name: "agent" },
        spec: { selector: { matchLabels: { app: "y" } }, template },
      } as never),
    );
    expect(error.status.message).toBe(
      'DaemonSet.apps "agent" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
    );
  });

  it("a PersistentVolumeClaim starts Pending with a Filesystem volume mode, and needs its access modes", async () => {
    const claims = client(persistentVolumeClaims, "default");
    const claim = (await claims.create({
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    } as never)) as PersistentVolumeClaim;
    expect(claim.status).toEqual({ phase: "Pending" });
    expect(claim.spec?.volumeMode).toBe("Filesystem");
    const error = await failure(
      claims.create({
        metadata: { name: "bad" },
        spec: { resources: { requests: { storage: "1Gi" } } },
      } as never),
    );
    expect(isInvalid(error)).toBe(true);
    expect(error.status.message).toContain(
      "spec.accessModes: Required value: at least 1 access mode is required",
    );
  });

  it("a StorageClass and a PriorityClass get their defaults and keep what may not change", async () => {
    const classes = client(storageClasses);
    const sc = await classes.create({ metadata: { name: "fast" }, provisioner: "example.com/disk" } as never);
    expect(sc).toMatchObject({ reclaimPolicy: "Delete", volumeBindingMode: "Immediate" });
    const changed = await failure(classes.update({ ...sc, provisioner: "other" } as never));
    expect(changed.status.message).toContain("provisioner: Forbidden: updates to provisioner are forbidden.");
    const pc = await client(priorityClasses).create({ metadata: { name: "high" }, value: 1000 } as never);
    expect(pc).toMatchObject({ preemptionPolicy: "PreemptLowerPriority" });
  });

  it("a ClusterRoleBinding's roleRef cannot change", async () => {
    const bindings = client(clusterRoleBindings);
    const binding = await bindings.create({
      metadata: { name: "admins" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
      subjects: [{ kind: "Group", name: "admins", apiGroup: "rbac.authorization.k8s.io" }],
    } as never);
    const error = await failure(
      bindings.update({ ...binding, roleRef: { ...binding.roleRef, name: "view" } } as never),
    );
    expect(error.status.message).toContain("roleRef: Invalid value:");
    expect(error.status.message).toContain("cannot change roleRef");
  });
});
