// Upstream's nodevolumelimits csi_test.go (TestCSILimits) for what this cluster
// has: CSI volumes through claims, pending and ephemeral claims, limits per
// driver — from the node's allocatable `attachable-volumes-csi-*` resources,
// where upstream's table reads CSINode (not served here); no in-tree migration.
import type { Node, Pod } from "@reconcile/api";
import type { ControllerIndexer } from "@reconcile/controller";
import type { PersistentVolume, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";
import { describe, expect, it } from "vitest";
import type { Status } from "../framework.js";
import {
  csiAttachLimitKey,
  errReasonMaxVolumeCountExceeded,
  nodeVolumeLimits,
} from "./node-volume-limits.js";
import { nodeInfoOf, runFilter } from "./testing.js";
import type { VolumeListers } from "./volume-binding.js";

const ebs = "ebs.csi.aws.com";
const gce = "pd.csi.storage.gke.io";
const scName = "csi-sc";

function indexer<T>(entries: [string, T][]): ControllerIndexer<T> {
  const byKey = new Map(entries);
  return { getByKey: (key: string) => byKey.get(key) } as unknown as ControllerIndexer<T>;
}

/** Upstream's fixtures: `csi-<driver>-<i>` claims bound to CSI volumes of the same name; csi-4 pending in an EBS class, csi-5 without a class, csi-6 bound to a volume that is gone. */
function listers(extraClaims: PersistentVolumeClaim[] = []): VolumeListers {
  const claims: PersistentVolumeClaim[] = [...extraClaims];
  const volumes: PersistentVolume[] = [];
  for (const driver of [ebs, gce]) {
    for (let i = 0; i < 4; i++) {
      const name = `csi-${driver}-${i}`;
      claims.push({ metadata: { name, namespace: "test" }, spec: { volumeName: name } });
      volumes.push({ metadata: { name }, spec: { csi: { driver, volumeHandle: name } } });
    }
  }
  claims.push({ metadata: { name: "csi-4", namespace: "test" }, spec: { storageClassName: scName } });
  claims.push({ metadata: { name: "csi-5", namespace: "test" }, spec: {} });
  claims.push({
    metadata: { name: "csi-6", namespace: "test" },
    spec: { storageClassName: scName, volumeName: "missing" },
  });
  return {
    claims: indexer(claims.map((c) => [`${c.metadata!.namespace}/${c.metadata!.name}`, c])),
    volumes: indexer(volumes.map((v) => [v.metadata!.name!, v])),
    classes: indexer<StorageClass>([[scName, { metadata: { name: scName }, provisioner: ebs }]]),
  };
}

function pod(claims: string[], name = "p"): Pod {
  return {
    metadata: { name, namespace: "test", uid: `uid-${name}-${claims.join(",")}` },
    spec: {
      containers: [],
      volumes: claims.map((claimName, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName } })),
    },
  };
}

/** A node whose allocatable limits each driver to `maxVols` volumes; none when `maxVols` is undefined. */
function node(drivers: string[], maxVols: number | undefined): Node {
  const allocatable: Record<string, string> = { pods: "110" };
  if (maxVols !== undefined)
    for (const driver of drivers) allocatable[csiAttachLimitKey(driver)] = String(maxVols);
  return { metadata: { name: "node-name" }, status: { allocatable } };
}

const runningPod = pod([`csi-${ebs}-3`], "running");
const pendingVolumePod = pod(["csi-4"], "pending");
const unboundPVCPod2 = pod(["csi-4"], "pending-2");
const missingPVPod = pod(["csi-6"], "missing-pv");
const noSCPVCPod = pod(["csi-5"], "no-sc");
const gceTwoVolPod = pod([`csi-${gce}-1`, `csi-${gce}-2`], "gce-two");
const csiEBSOneVolPod = pod([`csi-${ebs}-0`], "ebs-one");
const csiEBSTwoVolPod = pod([`csi-${ebs}-1`, `csi-${ebs}-2`], "ebs-two");

const ephemeralVolumePod: Pod = {
  metadata: { name: "abc", namespace: "test", uid: "12345" },
  spec: { containers: [], volumes: [{ name: "xyz", ephemeral: {} }] },
};
const ephemeralClaim: PersistentVolumeClaim = {
  metadata: {
    name: "abc-xyz",
    namespace: "test",
    ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "abc", uid: "12345", controller: true }],
  },
  spec: { storageClassName: scName },
};
const conflictingClaim: PersistentVolumeClaim = {
  ...ephemeralClaim,
  metadata: { ...ephemeralClaim.metadata, ownerReferences: [] },
};

const fits: Status = { code: "Success", reasons: [] };
const exceeded: Status = { code: "Unschedulable", reasons: [errReasonMaxVolumeCountExceeded] };

describe("NodeVolumeLimits (CSI)", () => {
  it.each<[string, Pod, Pod[], string[], number | undefined, Status, PersistentVolumeClaim[]?]>([
    [
      "fits when node volume limit >= new pods CSI volume",
      csiEBSOneVolPod,
      [runningPod, csiEBSTwoVolPod],
      [ebs],
      4,
      fits,
    ],
    [
      "doesn't when node volume limit <= pods CSI volume",
      csiEBSOneVolPod,
      [runningPod, csiEBSTwoVolPod],
      [ebs],
      2,
      exceeded,
    ],
    [
      "fits when the node reports no limit",
      csiEBSOneVolPod,
      [runningPod, csiEBSTwoVolPod],
      [ebs],
      undefined,
      fits,
    ],
    [
      "count pending PVCs towards volume limit",
      csiEBSOneVolPod,
      [pendingVolumePod, csiEBSTwoVolPod],
      [ebs],
      2,
      exceeded,
    ],
    [
      "count two pods' same pending PVC once",
      csiEBSOneVolPod,
      [pendingVolumePod, unboundPVCPod2, csiEBSTwoVolPod],
      [ebs],
      4,
      fits,
    ],
    [
      "count PVCs with invalid PV name but valid SC",
      csiEBSOneVolPod,
      [missingPVPod, csiEBSTwoVolPod],
      [ebs],
      2,
      exceeded,
    ],
    ["don't count PVCs with a missing SC", csiEBSOneVolPod, [runningPod, noSCPVCPod], [ebs], 2, fits],
    [
      "count PVCs of the same driver",
      csiEBSOneVolPod,
      [gceTwoVolPod, csiEBSTwoVolPod],
      [ebs, gce],
      2,
      exceeded,
    ],
    ["don't count PVCs of another driver", gceTwoVolPod, [csiEBSTwoVolPod, runningPod], [ebs, gce], 2, fits],
    [
      "a volume the node's pods already use counts once",
      pod([`csi-${ebs}-1`], "again"),
      [csiEBSTwoVolPod],
      [ebs],
      2,
      fits,
    ],
    [
      "ephemeral volume missing",
      ephemeralVolumePod,
      [],
      [ebs],
      undefined,
      {
        code: "UnschedulableAndUnresolvable",
        reasons: ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'],
      },
    ],
    [
      "ephemeral volume not owned",
      ephemeralVolumePod,
      [],
      [ebs],
      undefined,
      { code: "Error", reasons: ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"] },
      [conflictingClaim],
    ],
    ["ephemeral volume unbound", ephemeralVolumePod, [], [ebs], undefined, fits, [ephemeralClaim]],
    [
      "ephemeral volume counted against the limit",
      ephemeralVolumePod,
      [runningPod, csiEBSTwoVolPod],
      [ebs],
      3,
      exceeded,
      [ephemeralClaim],
    ],
    [
      "ephemeral volume within the limit",
      ephemeralVolumePod,
      [runningPod, csiEBSTwoVolPod],
      [ebs],
      4,
      fits,
      [ephemeralClaim],
    ],
  ])("%s", (_name, newPod, existing, drivers, maxVols, status, extraClaims = []) => {
    const plugin = nodeVolumeLimits(listers(extraClaims));
    expect(runFilter(plugin, newPod, nodeInfoOf(node(drivers, maxVols), existing))).toEqual(status);
  });

  it("skips a pod without claims, whatever else it mounts", () => {
    const plugin = nodeVolumeLimits(listers());
    const state = new Map();
    const configOnly: Pod = {
      metadata: { name: "c", namespace: "test" },
      spec: {
        containers: [],
        volumes: [
          { name: "a", configMap: { name: "x" } },
          { name: "b", secret: {} },
        ],
      },
    };
    expect(plugin.preFilter!(state, configOnly, [])).toEqual({ code: "Skip", reasons: [] });
  });

  it("names a driver's limit as upstream's GetCSIAttachLimitKey does, hashing long names", () => {
    expect(csiAttachLimitKey(ebs)).toBe("attachable-volumes-csi-ebs.csi.aws.com");
    const long = "a-very-long-csi-driver-name.storage.example.com";
    const key = csiAttachLimitKey(long);
    expect(key).toMatch(/^attachable-volumes-csi-a-very-long-csi-driver-[0-9a-f]{16}$/);
    expect(key.length).toBe(62);
  });
});
