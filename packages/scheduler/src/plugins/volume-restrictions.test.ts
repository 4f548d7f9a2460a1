import type { Pod } from "@reconcile/api";
import type { ControllerIndexer } from "@reconcile/controller";
import type { PersistentVolumeClaim, Volume } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { type CycleState, cloneCycleState, type Status } from "../framework.js";
import { node, nodeInfoOf, runFilter } from "./testing.js";
import {
  errReasonDiskConflict,
  errReasonReadWriteOncePodConflict,
  volumeRestrictions,
} from "./volume-restrictions.js";

// Upstream's volume_restrictions_test.go tables: the GCE, AWS, RBD and iSCSI
// disk conflicts, and the ReadWriteOncePod access mode conflicts.

const claims = new Map<string, PersistentVolumeClaim>(
  [
    ["claim-with-rwop-1", ["ReadWriteOncePod"]],
    ["claim-with-rwop-2", ["ReadWriteOncePod"]],
    ["claim-with-rwo", ["ReadWriteOnce"]],
  ].map(([name, modes]) => [
    `default/${name}`,
    { metadata: { name: name as string, namespace: "default" }, spec: { accessModes: modes as string[] } },
  ]),
);
const plugin = volumeRestrictions({
  claims: {
    getByKey: (key: string) => claims.get(key),
  } as unknown as ControllerIndexer<PersistentVolumeClaim>,
});

let uid = 0;
const podWith = (volumes: Volume[], name = `p${++uid}`): Pod =>
  ({
    metadata: { name, namespace: "default", uid: name },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "x" }], volumes },
  }) as Pod;
const claimVolume = (claimName: string): Volume => ({
  name: claimName,
  persistentVolumeClaim: { claimName },
});

const ok: Status = { code: "Success", reasons: [] };
const disk: Status = { code: "Unschedulable", reasons: [errReasonDiskConflict] };
const rwop: Status = { code: "Unschedulable", reasons: [errReasonReadWriteOncePodConflict] };

function diskTable(state: Volume, other: Volume): [string, Pod, Pod[], Status][] {
  return [
    ["nothing", podWith([]), [], ok],
    ["one state", podWith([]), [podWith([state])], ok],
    ["same state", podWith([state]), [podWith([state])], disk],
    ["different state", podWith([other]), [podWith([state])], ok],
  ];
}

function check(table: [string, Pod, Pod[], Status][]): void {
  for (const [name, pod, existing, want] of table)
    expect([name, runFilter(plugin, pod, nodeInfoOf(node("n1"), existing))]).toEqual([name, want]);
}

describe("VolumeRestrictions", () => {
  it("TestGCEDiskConflicts: the same disk conflicts unless both mount it read-only", () => {
    const foo: Volume = { name: "v", gcePersistentDisk: { pdName: "foo" } };
    check(diskTable(foo, { name: "v", gcePersistentDisk: { pdName: "bar" } }));
    const readOnly: Volume = { name: "v", gcePersistentDisk: { pdName: "foo", readOnly: true } };
    check([["both read-only", podWith([readOnly]), [podWith([readOnly])], ok]]);
  });

  it("TestAWSDiskConflicts: the same volume ID always conflicts", () => {
    const foo: Volume = { name: "v", awsElasticBlockStore: { volumeID: "foo" } };
    check(diskTable(foo, { name: "v", awsElasticBlockStore: { volumeID: "bar" } }));
    const readOnly: Volume = { name: "v", awsElasticBlockStore: { volumeID: "foo", readOnly: true } };
    check([["read-only too", podWith([readOnly]), [podWith([readOnly])], disk]]);
  });

  it("TestRBDDiskConflicts: a shared monitor, the same pool and image", () => {
    const state: Volume = {
      name: "v",
      rbd: { monitors: ["a", "b"], pool: "foo", image: "bar", fsType: "ext4" },
    };
    const other: Volume = {
      name: "v",
      rbd: { monitors: ["c", "d"], pool: "foo", image: "bar", fsType: "ext4" },
    };
    check(diskTable(state, other));
    const overlapping: Volume = { name: "v", rbd: { monitors: ["b", "c"], pool: "foo", image: "bar" } };
    check([["one monitor shared", podWith([overlapping]), [podWith([state])], disk]]);
  });

  it("TestISCSIDiskConflicts: the same IQN unless both are read-only", () => {
    const target = (iqn: string, readOnly = false): Volume => ({
      name: "v",
      iscsi: { targetPortal: "127.0.0.1:3260", iqn, lun: 0, fsType: "ext4", readOnly },
    });
    check(
      diskTable(target("iqn.2016-12.server:storage.target01"), target("iqn.2016-12.server:storage.target02")),
    );
    const readOnly = target("iqn.2016-12.server:storage.target01", true);
    check([["both read-only", podWith([readOnly]), [podWith([readOnly])], ok]]);
  });

  it("TestAccessModeConflicts: a ReadWriteOncePod claim another pod uses keeps the pod off every node", () => {
    const withOne = podWith([claimVolume("claim-with-rwop-1")], "one");
    const withTwo = podWith([claimVolume("claim-with-rwop-1"), claimVolume("claim-with-rwop-2")], "two");
    const elsewhere = podWith([claimVolume("claim-with-rwop-1")], "elsewhere");
    const nodeInfo = nodeInfoOf(node("n1"));
    const otherNode = nodeInfoOf(node("n2"), [
      { ...elsewhere, spec: { ...elsewhere.spec, nodeName: "n2" } } as Pod,
    ]);
    const filterWith = (pod: Pod, infos = [nodeInfo, otherNode]) => {
      const state: CycleState = new Map();
      const pre = plugin.preFilter!(state, pod, infos);
      return pre.code === "Success" ? plugin.filter!(state, pod, nodeInfo) : pre;
    };
    expect(filterWith(withOne)).toEqual(rwop);
    expect(filterWith(withTwo)).toEqual(rwop);
    expect(filterWith(withOne, [nodeInfo])).toEqual({ code: "Skip", reasons: [] });
    expect(
      runFilter(plugin, podWith([claimVolume("claim-with-rwo")]), nodeInfoOf(node("n1"), [withOne])),
    ).toEqual(ok);
    expect(runFilter(plugin, podWith([claimVolume("claim-not-found")]), nodeInfo)).toEqual({
      code: "UnschedulableAndUnresolvable",
      reasons: ['persistentvolumeclaim "claim-not-found" not found'],
    });
  });

  it("preemption's what-if: removing the pod that uses the claim lifts the conflict", () => {
    const user = podWith([claimVolume("claim-with-rwop-1")], "user");
    const nodeInfo = nodeInfoOf(node("n1"), [user]);
    const pod = podWith([claimVolume("claim-with-rwop-1")], "incoming");
    const state: CycleState = new Map();
    expect(plugin.preFilter!(state, pod, [nodeInfo]).code).toBe("Success");
    expect(plugin.filter!(state, pod, nodeInfo)).toEqual(rwop);
    const whatIf = cloneCycleState(state);
    plugin.removePod!(whatIf, pod, nodeInfo.pods.get("user")!, nodeInfo);
    expect(plugin.filter!(whatIf, pod, nodeInfo)).toEqual(ok);
    // The original state is untouched.
    expect(plugin.filter!(state, pod, nodeInfo)).toEqual(rwop);
  });
});
