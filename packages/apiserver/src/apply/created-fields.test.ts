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

function withLabels(object: Obj, labels: Obj): Obj {
  (object.metadata as Obj).labels = labels;
  return object;
}

function withImage(object: Obj, image: string): Obj {
  ((object.spec as { containers: Obj[] }).containers[0] as Obj).image = image;
  return object;
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

  it("answers a known shape as a walk would: values of list items count, values of members do not", () => {
    // Each pair is read cold, then again warm (from the shape trie), in both orders.
    const variants: [string, Obj][] = [
      ["base", pod("a")],
      ["another name and image", withImage(pod("b"), "other")],
      [
        "a port's key as a string",
        pod("a", { containers: [{ name: "web", ports: [{ containerPort: "8080" }] }] }),
      ],
      [
        "a port's key as a number",
        pod("a", { containers: [{ name: "web", ports: [{ containerPort: 8080 }] }] }),
      ],
      ["a member null", pod("a", { securityContext: null })],
      ["a member a string", pod("a", { securityContext: "x" })],
      ["keys named like markers", withLabels(pod("a"), { "0": "x", "1": "y" })],
      ["a set's item", pod("a", { containers: [{ name: "web", args: ["x"] }], finalizers: ["a"] })],
      ["two containers swapped", pod("a", { containers: [{ name: "b" }, { name: "a" }] })],
    ];
    const cold = variants.map(([, object]) => JSON.stringify(createdFieldsV1(object, podType, [["status"]])));
    for (const order of [variants, [...variants].reverse()])
      for (const [name, object] of order) {
        const index = variants.findIndex(([other]) => other === name);
        expect(JSON.stringify(createdFieldsV1(structuredClone(object), podType, [["status"]])), name).toBe(
          cold[index],
        );
      }
    expect(cold[1]).toBe(cold[0]);
    expect(cold[2]).not.toBe(cold[3]);
    expect(cold[2]).toContain('k:{\\"containerPort\\":\\"8080\\",');
    expect(cold[3]).toContain('k:{\\"containerPort\\":8080,');
    // A null and a string read apart, and both are a leaf the creator set.
    expect(cold[4]).toBe(cold[5]);
    expect(cold[6]).toContain('"f:0":{},"f:1":{}');
    // The reset fields are part of the answer too.
    expect(createdFieldsV1(pod("a"), podType, undefined)).toHaveProperty("f:status");
    expect(createdFieldsV1(pod("a"), podType, [["status"]])).not.toHaveProperty("f:status");
  });

  it("stays exact for objects that never share a shape (which it stops reading shapes for)", () => {
    const configMapType = typeFor("v1", "ConfigMap");
    for (let i = 0; i < 300; i++) {
      const object = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `c${i}` },
        data: { [`key-${i}`]: "v" },
      };
      expect(createdFieldsV1(object, configMapType, undefined)).toEqual({
        "f:data": { ".": {}, [`f:key-${i}`]: {} },
      });
    }
    const repeated = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { "key-7": "v" } };
    expect(createdFieldsV1(repeated, configMapType, undefined)).toEqual({
      "f:data": { ".": {}, "f:key-7": {} },
    });
  });
});
