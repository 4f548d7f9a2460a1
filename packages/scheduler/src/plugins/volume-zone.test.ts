import type { Node, Pod } from "@reconcile/api";
import type { ControllerIndexer } from "@reconcile/controller";
import type { PersistentVolume, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";
import { describe, expect, it } from "vitest";
import type { Status } from "../framework.js";
import { nodeInfoOf, runFilter } from "./testing.js";
import type { VolumeListers } from "./volume-binding.js";
import { errReasonVolumeZoneConflict, volumeZone } from "./volume-zone.js";

// Upstream's volume_zone_test.go tables: TestSingleZone, TestMultiZone, TestWithBinding.

const betaZone = "failure-domain.beta.kubernetes.io/zone";
const betaRegion = "failure-domain.beta.kubernetes.io/region";
const zone = "topology.kubernetes.io/zone";
const region = "topology.kubernetes.io/region";

/** An indexer over fixed objects, keyed as the informers key them. */
function indexer<T>(entries: [string, T][]): ControllerIndexer<T> {
  const byKey = new Map(entries);
  return { getByKey: (key: string) => byKey.get(key) } as unknown as ControllerIndexer<T>;
}

function listers(
  volumes: Record<string, Record<string, string>>,
  claims: Record<string, Partial<PersistentVolumeClaim["spec"]>>,
  classes: Record<string, StorageClass["volumeBindingMode"] | undefined> = {},
): VolumeListers {
  return {
    volumes: indexer(
      Object.entries(volumes).map(([name, labels]) => [
        name,
        { metadata: { name, labels } } as PersistentVolume,
      ]),
    ),
    claims: indexer(
      Object.entries(claims).map(([name, spec]) => [
        `default/${name}`,
        { metadata: { name, namespace: "default" }, spec } as PersistentVolumeClaim,
      ]),
    ),
    classes: indexer(
      Object.entries(classes).map(([name, mode]) => [
        name,
        {
          metadata: { name },
          provisioner: "p",
          ...(mode === undefined ? {} : { volumeBindingMode: mode }),
        } as StorageClass,
      ]),
    ),
  };
}

const podWith = (claim?: string): Pod =>
  ({
    metadata: { name: "pod_1", namespace: "default" },
    spec: {
      containers: [{ name: "c", image: "x" }],
      volumes: claim === undefined ? [] : [{ name: "v", persistentVolumeClaim: { claimName: claim } }],
    },
  }) as Pod;

const nodeWith = (labels: Record<string, string> = {}): Node =>
  ({ metadata: { name: "host1", labels } }) as Node;

const conflict: Status = { code: "UnschedulableAndUnresolvable", reasons: [errReasonVolumeZoneConflict] };
const ok: Status = { code: "Success", reasons: [] };

type Case = [name: string, claim: string | undefined, node: Record<string, string>, want: Status];

function check(volumeListers: VolumeListers, cases: Case[]): void {
  const plugin = volumeZone(volumeListers);
  for (const [name, claim, labels, want] of cases)
    expect([name, runFilter(plugin, podWith(claim), nodeInfoOf(nodeWith(labels)))]).toEqual([name, want]);
}

describe("VolumeZone", () => {
  it("TestSingleZone", () => {
    const volumeListers = listers(
      {
        Vol_1: { [betaZone]: "us-west1-a" },
        Vol_2: { [betaRegion]: "us-west1", uselessLabel: "none" },
        Vol_3: { [betaRegion]: "us-west1" },
        Vol_Stable_1: { [zone]: "us-west1-a" },
        Vol_Stable_2: { [region]: "us-west1", uselessLabel: "none" },
        Vol_Stable_3: { [zone]: "us-west1-a", [region]: "us-west1-a" },
      },
      {
        PVC_1: { volumeName: "Vol_1" },
        PVC_2: { volumeName: "Vol_2" },
        PVC_3: { volumeName: "Vol_3" },
        PVC_4: { volumeName: "Vol_not_exist" },
        PVC_Stable_1: { volumeName: "Vol_Stable_1" },
        PVC_Stable_2: { volumeName: "Vol_Stable_2" },
        PVC_Stable_3: { volumeName: "Vol_Stable_3" },
      },
    );
    check(volumeListers, [
      ["pod without volume", undefined, { [betaZone]: "us-west1-a" }, ok],
      ["node without labels", "PVC_1", {}, ok],
      ["beta zone label matched", "PVC_1", { [betaZone]: "us-west1-a", uselessLabel: "none" }, ok],
      ["beta region label matched", "PVC_2", { [betaRegion]: "us-west1", uselessLabel: "none" }, ok],
      [
        "beta region label doesn't match",
        "PVC_2",
        { [betaRegion]: "no_us-west1", uselessLabel: "none" },
        conflict,
      ],
      [
        "beta zone label doesn't match",
        "PVC_1",
        { [betaZone]: "no_us-west1-a", uselessLabel: "none" },
        conflict,
      ],
      ["zone label matched", "PVC_Stable_1", { [zone]: "us-west1-a", uselessLabel: "none" }, ok],
      ["region label matched", "PVC_Stable_2", { [region]: "us-west1", uselessLabel: "none" }, ok],
      [
        "region label doesn't match",
        "PVC_Stable_2",
        { [region]: "no_us-west1", uselessLabel: "none" },
        conflict,
      ],
      [
        "zone label doesn't match",
        "PVC_Stable_1",
        { [zone]: "no_us-west1-a", uselessLabel: "none" },
        conflict,
      ],
      ["pv with zone and region, node with only zone", "PVC_Stable_3", { [zone]: "us-west1-a" }, conflict],
      ["pv with zone,node with beta zone", "PVC_Stable_1", { [betaZone]: "us-west1-a" }, conflict],
      ["pv with beta label,node with ga label, matched", "PVC_1", { [zone]: "us-west1-a" }, ok],
      ["pv with beta label,node with ga label, don't match", "PVC_1", { [zone]: "us-west1-b" }, conflict],
      [
        "a volume that does not exist",
        "PVC_4",
        { [zone]: "us-west1-a" },
        { code: "UnschedulableAndUnresolvable", reasons: ['persistentvolume "Vol_not_exist" not found'] },
      ],
    ]);
  });

  it("TestMultiZone", () => {
    const volumeListers = listers(
      {
        Vol_1: { [betaZone]: "us-west1-a" },
        Vol_2: { [betaZone]: "us-west1-b", uselessLabel: "none" },
        Vol_3: { [betaZone]: "us-west1-c__us-west1-a" },
        Vol_Stable_1: { [zone]: "us-west1-a" },
        Vol_Stable_2: { [zone]: "us-west1-c__us-west1-a" },
      },
      {
        PVC_1: { volumeName: "Vol_1" },
        PVC_2: { volumeName: "Vol_2" },
        PVC_3: { volumeName: "Vol_3" },
        PVC_Stable_1: { volumeName: "Vol_Stable_1" },
        PVC_Stable_2: { volumeName: "Vol_Stable_2" },
      },
    );
    check(volumeListers, [
      ["node without labels", "PVC_3", {}, ok],
      ["beta zone label matched", "PVC_3", { [betaZone]: "us-west1-a", uselessLabel: "none" }, ok],
      [
        "beta zone label doesn't match",
        "PVC_1",
        { [betaZone]: "us-west1-b", uselessLabel: "none" },
        conflict,
      ],
      ["zone label matched", "PVC_Stable_2", { [zone]: "us-west1-a", uselessLabel: "none" }, ok],
      ["zone label doesn't match", "PVC_Stable_1", { [zone]: "us-west1-b", uselessLabel: "none" }, conflict],
    ]);
  });

  it("TestWithBinding", () => {
    const volumeListers = listers(
      { Vol_1: { [betaZone]: "us-west1-a" } },
      {
        PVC_1: { volumeName: "Vol_1" },
        PVC_NoSC: { storageClassName: "Class_0" },
        PVC_EmptySC: {},
        PVC_WaitSC: { storageClassName: "Class_Wait" },
        PVC_ImmediateSC: { storageClassName: "Class_Immediate" },
        PVC_ImmediateSet: { storageClassName: "Class_Immediate_Set" },
      },
      { Class_Immediate: undefined, Class_Wait: "WaitForFirstConsumer", Class_Immediate_Set: "Immediate" },
    );
    const node = { [betaZone]: "us-west1-a", uselessLabel: "none" };
    const unresolvable = (reason: string): Status => ({
      code: "UnschedulableAndUnresolvable",
      reasons: [reason],
    });
    check(volumeListers, [
      ["label zone failure domain matched", "PVC_1", node, ok],
      [
        "unbound volume empty storage class",
        "PVC_EmptySC",
        node,
        unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
      ],
      [
        "unbound volume no storage class",
        "PVC_NoSC",
        node,
        unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
      ],
      [
        "unbound volume immediate binding mode",
        "PVC_ImmediateSC",
        node,
        unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
      ],
      // A served StorageClass always has its mode (defaulted to Immediate): its unbound claim has no volume yet.
      ["unbound volume, Immediate", "PVC_ImmediateSet", node, unresolvable("PersistentVolume had no name")],
      ["unbound volume wait binding mode", "PVC_WaitSC", node, ok],
    ]);
  });
});
