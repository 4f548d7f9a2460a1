import { describe, expect, it } from "vitest";
import { createdFieldsV1, strippedMetadata } from "./created-fields.js";
import { compare, encodeFieldSet, type FieldSet, fieldElement, type TypeNode, typeFor } from "./index.js";

type Obj = Record<string, unknown>;

/** What the general path owns for a created object: `compare(undefined, object).added`, stripped and reset. */
function generalPath(object: Obj, type: TypeNode, resetFields: string[][] = []): unknown {
  const metadata = fieldElement("metadata");
  let set: FieldSet = compare(undefined, object, type)
    .added.withoutMember([])
    .without([], [fieldElement("apiVersion"), fieldElement("kind")])
    .withoutMember([metadata])
    .without([metadata], strippedMetadata.map(fieldElement));
  for (const path of resetFields)
    set = set.without(path.slice(0, -1).map(fieldElement), [fieldElement(path.at(-1)!)]);
  return set.empty() ? {} : encodeFieldSet(set);
}

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

  it("owns what the general path owns, for objects with keyed lists, sets, empty containers and zero structs", () => {
    const objects: [Obj, TypeNode, string[][]][] = [
      [pod("a"), podType, [["status"]]],
      [pod("b", { nodeSelector: {}, containers: [{ name: "only", image: "x" }] }), podType, [["status"]]],
      [pod("c"), podType, []],
      [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "cm", finalizers: ["b", "a"] },
          data: { x: "1" },
        },
        typeFor("v1", "ConfigMap"),
        [],
      ],
      [
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template: {} } },
        typeFor("apps/v1", "Deployment"),
        [["status"]],
      ],
    ];
    for (const [object, type, reset] of objects) {
      const expected = generalPath(object, type, reset);
      // The first write of a shape makes text; the second adds it to the trie; the third reads the trie.
      for (let time = 0; time < 3; time++) expect(createdFieldsV1(object, type, reset)).toEqual(expected);
    }
  });

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
    const base = createdFieldsV1(pod("a"), podType, [["status"]]);
    createdFieldsV1(pod("a"), podType, [["status"]]);
    const label = pod("a");
    (label.metadata as { labels: Obj }).labels.tier = "x";
    const emptyEnv = pod("a");
    ((emptyEnv.spec as { containers: Obj[] }).containers[0] as Obj).env = [];
    const renamed = pod("a");
    ((renamed.spec as { containers: Obj[] }).containers[1] as Obj).name = "other";
    for (const object of [label, emptyEnv, renamed]) {
      const tree = createdFieldsV1(object, podType, [["status"]]);
      expect(tree).not.toEqual(base);
      expect(tree).toEqual(generalPath(object, podType, [["status"]]));
    }
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

  it("owns nothing of an object with only untracked fields", () => {
    const bare = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "default" } };
    for (let time = 0; time < 3; time++)
      expect(createdFieldsV1(bare, typeFor("v1", "ConfigMap"), [])).toEqual({});
  });
});
