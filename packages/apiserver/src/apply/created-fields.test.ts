import { describe, expect, it } from "vitest";
import { createdFieldsV1 } from "./created-fields.js";
import { typeFor } from "./index.js";

type Obj = Record<string, unknown>;

function pod(name: string, extra: Obj = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      uid: "u",
      labels: { app: "web" },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "x", controller: true },
      ],
    },
    spec: {
      containers: [
        {
          name: "web",
          image: "nginx",
          ports: [
            { containerPort: 8080, protocol: "TCP" },
            { containerPort: 53, protocol: "UDP" },
          ],
          env: [
            { name: "B", value: "2" },
            { name: "A", value: "1" },
          ],
          resources: {},
        },
        { name: "sidecar", image: "busybox", args: [] },
      ],
      volumes: [{ name: "config", configMap: { name: "c" } }],
      securityContext: {},
      tolerations: [{ key: "k", operator: "Exists" }],
      ...extra,
    },
    status: { phase: "Pending" },
  };
}

describe("createdFieldsV1", () => {
  const podType = typeFor("v1", "Pod");

  it("writes upstream's FieldsV1 for a created pod, the same shared tree each time", () => {
    const first = createdFieldsV1(pod("a"), podType, [["status"]]);
    expect(first).toEqual({
      "f:metadata": {
        "f:labels": { ".": {}, "f:app": {} },
        "f:ownerReferences": { ".": {}, 'k:{"uid":"x"}': {} },
      },
      "f:spec": {
        "f:containers": {
          // An empty list is a value the creator set.
          'k:{"name":"sidecar"}': { ".": {}, "f:args": {}, "f:image": {}, "f:name": {} },
          'k:{"name":"web"}': {
            ".": {},
            "f:env": {
              ".": {},
              'k:{"name":"A"}': { ".": {}, "f:name": {}, "f:value": {} },
              'k:{"name":"B"}': { ".": {}, "f:name": {}, "f:value": {} },
            },
            "f:image": {},
            "f:name": {},
            "f:ports": {
              ".": {},
              'k:{"containerPort":53,"protocol":"UDP"}': { ".": {}, "f:containerPort": {}, "f:protocol": {} },
              'k:{"containerPort":8080,"protocol":"TCP"}': {
                ".": {},
                "f:containerPort": {},
                "f:protocol": {},
              },
            },
            "f:resources": {},
          },
        },
        "f:securityContext": {},
        "f:tolerations": {},
        "f:volumes": {
          ".": {},
          'k:{"name":"config"}': { ".": {}, "f:configMap": { ".": {}, "f:name": {} }, "f:name": {} },
        },
      },
    });
    // Another pod of the same shape (other name, other values) shares the tree.
    for (let i = 0; i < 3; i++) expect(createdFieldsV1(pod(`p-${i}`), podType, [["status"]])).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it("tells shapes apart that differ in one key, one list item or one empty value", () => {
    const base = createdFieldsV1(pod("a"), podType, [["status"]]) as Obj;
    const label = pod("a");
    (label.metadata as { labels: Obj }).labels.tier = "x";
    const emptyEnv = pod("a");
    ((emptyEnv.spec as { containers: Obj[] }).containers[0] as Obj).env = [];
    const renamed = pod("a");
    ((renamed.spec as { containers: Obj[] }).containers[1] as Obj).name = "other";
    type Tree = Record<string, Record<string, Record<string, Obj>>>;
    const [withLabel, withoutEnv, withRenamed] = [label, emptyEnv, renamed].map(
      (object) => createdFieldsV1(object, podType, [["status"]]) as Tree,
    );
    expect(withLabel!["f:metadata"]!["f:labels"]).toEqual({ ".": {}, "f:app": {}, "f:tier": {} });
    expect(withLabel!["f:spec"]).toBe(base["f:spec"]);
    // An empty list is a value the creator set, with nothing below it.
    expect(withoutEnv!["f:spec"]!["f:containers"]!['k:{"name":"web"}']).toMatchObject({ "f:env": {} });
    expect(Object.keys(withRenamed!["f:spec"]!["f:containers"]!)).toEqual([
      'k:{"name":"other"}',
      'k:{"name":"web"}',
    ]);
  });

  it("leaves a keyed list with a repeated key, or a reset path below the root, to the general path", () => {
    const repeated = pod("a", {
      containers: [
        { name: "web", image: "a" },
        { name: "web", image: "b" },
      ],
    });
    expect(createdFieldsV1(repeated, podType, [["status"]])).toBeUndefined();
    expect(createdFieldsV1(pod("a"), podType, [["spec", "nodeName"]])).toBeUndefined();
  });
});
