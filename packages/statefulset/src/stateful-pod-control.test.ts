import type { Pod, StatefulSet } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { wantedOwnerRefs } from "./stateful-pod-control.js";

const setRef = { apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "set-uid" };
const podRef = (name: string) => ({ apiVersion: "v1", kind: "Pod", name, uid: `${name}-uid` });
const pod = (name: string): Pod => ({ metadata: { name, namespace: "ns", uid: `${name}-uid` } });

function set(whenDeleted: string, whenScaled: string): StatefulSet {
  return {
    metadata: { name: "db", namespace: "ns", uid: "set-uid" },
    spec: {
      replicas: 2,
      serviceName: "db",
      selector: {},
      template: {},
      persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled },
    },
  };
}

// Upstream's TestClaimOwnerMatchesSetAndPod / TestUpdateClaimOwnerRefForSetAndPod cases.
describe("wantedOwnerRefs", () => {
  it.each([
    ["Retain", "Retain", "db-1", [], []],
    ["Retain", "Retain", "db-1", [setRef, podRef("db-1")], []],
    ["Delete", "Retain", "db-1", [], [setRef]],
    ["Delete", "Retain", "db-5", [podRef("db-5")], [setRef]],
    ["Retain", "Delete", "db-1", [setRef], []],
    ["Retain", "Delete", "db-5", [], [podRef("db-5")]],
    ["Delete", "Delete", "db-1", [podRef("db-1")], [setRef]],
    ["Delete", "Delete", "db-5", [setRef], [podRef("db-5")]],
  ])("whenDeleted %s, whenScaled %s, member %s: %j becomes %j", (deleted, scaled, member, have, want) => {
    const claim = { metadata: { name: "data", ownerReferences: have } };
    const result = wantedOwnerRefs(set(deleted, scaled), pod(member), claim);
    if (JSON.stringify(have) === JSON.stringify(want)) expect(result).toBeUndefined();
    else expect(result).toEqual(want);
  });

  it("keeps owner references of others, and leaves a claim that is right alone", () => {
    const other = { apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "x" };
    const claim = { metadata: { name: "data", ownerReferences: [other] } };
    expect(wantedOwnerRefs(set("Delete", "Retain"), pod("db-0"), claim)).toEqual([other, setRef]);
    const right = { metadata: { name: "data", ownerReferences: [other, setRef] } };
    expect(wantedOwnerRefs(set("Delete", "Retain"), pod("db-0"), right)).toBeUndefined();
  });
});
