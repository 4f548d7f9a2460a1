import { describe, expect, it } from "vitest";
import { getControllerOf, isControlledBy, newControllerRef } from "./owner-references.js";
import { replicaSets } from "./resources.js";
import type { KubeObject } from "./types.js";

const rs: KubeObject = { metadata: { name: "web", namespace: "default", uid: "rs-uid" } };

describe("owner references", () => {
  it("newControllerRef marks the owner as controller that blocks deletion", () => {
    expect(newControllerRef(rs, replicaSets)).toEqual({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: "web",
      uid: "rs-uid",
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(newControllerRef(rs, { group: "", version: "v1", kind: "ReplicationController" }).apiVersion).toBe(
      "v1",
    );
  });

  it("newControllerRef rejects an owner without name or uid", () => {
    expect(() => newControllerRef({ metadata: { uid: "u" } }, replicaSets)).toThrow(
      "cannot reference a ReplicaSet owner without metadata.name",
    );
    expect(() => newControllerRef({ metadata: { name: "web" } }, replicaSets)).toThrow(
      'cannot reference ReplicaSet "web" as owner: it has no metadata.uid',
    );
  });

  it("getControllerOf returns a copy of the controller reference, skipping other owners", () => {
    const controller = newControllerRef(rs, replicaSets);
    const pod: KubeObject = {
      metadata: {
        name: "p",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "c-uid" },
          { apiVersion: "v1", kind: "Thing", name: "t", uid: "t-uid", controller: false },
          controller,
        ],
      },
    };
    const found = getControllerOf(pod);
    expect(found).toEqual(controller);
    expect(found).not.toBe(controller);
  });

  it("getControllerOf is undefined without a controller reference", () => {
    expect(getControllerOf({ metadata: { name: "p" } })).toBeUndefined();
    expect(getControllerOf({})).toBeUndefined();
    expect(
      getControllerOf({
        metadata: { ownerReferences: [{ apiVersion: "v1", kind: "K", name: "n", uid: "u" }] },
      }),
    ).toBeUndefined();
  });

  it("isControlledBy compares the controller reference's uid with the owner's", () => {
    const pod: KubeObject = { metadata: { name: "p", ownerReferences: [newControllerRef(rs, replicaSets)] } };
    expect(isControlledBy(pod, rs)).toBe(true);
    expect(isControlledBy(pod, { metadata: { name: "web", uid: "other-uid" } })).toBe(false);
    expect(isControlledBy({ metadata: { name: "p" } }, rs)).toBe(false);
  });

  it("isControlledBy is false for an owner without uid, even against a reference without one", () => {
    const pod = {
      metadata: { ownerReferences: [{ apiVersion: "v1", kind: "K", name: "n", controller: true }] },
    } as KubeObject;
    expect(isControlledBy(pod, { metadata: { name: "n" } })).toBe(false);
  });
});
