import { describe, expect, it } from "vitest";
import type { AdmissionAttributes } from "../registry/admission.js";
import {
  celRequestValues,
  celValueOf,
  compileAdmissionExpression,
  type ReadParts,
  readsEverything,
  requestReads,
  runAdmissionExpression,
} from "./cel.js";

/** Reads as plain data: `1` for a whole value, an object of the fields read otherwise. */
function shown(parts: ReadParts): unknown {
  return parts === true ? 1 : Object.fromEntries([...parts].map(([field, below]) => [field, shown(below)]));
}

function reads(...expressions: string[]) {
  const found = requestReads(expressions);
  return { object: shown(found.object), oldObject: shown(found.oldObject), request: found.request };
}

/** A core kind's admission attributes, as alice in `default`. */
function attributesOf(
  operation: string,
  kind: string,
  plural: string,
  object: { metadata: { name?: string } },
  oldObject?: unknown,
): AdmissionAttributes {
  return {
    object,
    oldObject,
    operation,
    resource: { group: "", version: "v1", plural, kind, namespaced: true },
    kind: { group: "", version: "v1", kind },
    name: object.metadata.name,
    namespace: "default",
    subresource: "",
    dryRun: false,
    user: { username: "alice", groups: ["system:authenticated"] },
  } as unknown as AdmissionAttributes;
}

describe("what admission expressions read of the request", () => {
  it.each([
    ["object.spec.replicas > 1", { object: { spec: { replicas: 1 } }, oldObject: {}, request: false }],
    [
      "object.spec.containers.all(c, c.image != '') && has(object.spec.hostNetwork)",
      { object: { spec: { containers: 1, hostNetwork: 1 } }, oldObject: {}, request: false },
    ],
    [
      "object['metadata'].?labels.orValue({}).size() > 0",
      { object: { metadata: { labels: 1 } }, oldObject: {}, request: false },
    ],
    // a computed index reads all it indexes, and is itself read
    [
      "object.metadata.labels[object.spec.key].x == 'a'",
      { object: { metadata: { labels: 1 }, spec: { key: 1 } }, oldObject: {}, request: false },
    ],
    // passed whole, compared whole or tested for presence: all of it
    ["object == oldObject", { object: 1, oldObject: 1, request: false }],
    ["'spec' in object || oldObject == null", { object: 1, oldObject: 1, request: false }],
    [
      "object.spec == oldObject.spec.template",
      { object: { spec: 1 }, oldObject: { spec: { template: 1 } }, request: false },
    ],
    // the request holds both objects
    ["request.operation == 'CREATE'", { object: 1, oldObject: 1, request: true }],
    // a comprehension's own variables read nothing of the request
    ["[1, 2].all(object, object > 0)", { object: 1, oldObject: {}, request: false }],
  ])("%s", (expression, expected) => {
    expect(reads(expression)).toEqual(expected);
  });

  it("says whether an expression names namespaceObject, which is looked up only then", () => {
    expect(requestReads(["object.metadata.name != ''"]).namespaceObject).toBe(false);
    expect(requestReads(["namespaceObject.metadata.labels.env == 'prod'"]).namespaceObject).toBe(true);
    expect(requestReads(["object.x == 1", "namespaceObject == null"]).namespaceObject).toBe(true);
    // A comprehension variable of that name is not the namespace, but reading it anyway costs only a lookup.
    expect(requestReads(["[1].all(namespaceObject, namespaceObject > 0)"]).namespaceObject).toBe(true);
    expect(requestReads(["request.namespace == 'x'"]).namespaceObject).toBe(true);
  });

  it("joins the reads of several expressions, a whole read covering the fields below it", () => {
    expect(reads("object.spec.a == 1", "object.spec.b.c == 2", "size(object.spec.b) > 0")).toEqual({
      object: { spec: { a: 1, b: 1 } },
      oldObject: {},
      request: false,
    });
    expect(reads("object.spec.a == 1", "not valid (")).toEqual({ object: 1, oldObject: 1, request: true });
    expect(requestReads(["not valid ("])).toBe(readsEverything);
  });

  it("keeps a body's own __proto__ member a member, converted whole or in part", () => {
    const object = JSON.parse('{"metadata":{"name":"x"},"__proto__":{"polluted":true}}');
    const attributes = attributesOf("CREATE", "ConfigMap", "configmaps", object);
    for (const expression of ["object['__proto__'].polluted == true", "!has(object.polluted)"]) {
      const program = compileAdmissionExpression(expression);
      if (program instanceof Error) throw program;
      for (const reads of [readsEverything, requestReads([expression])])
        expect(runAdmissionExpression(program, celRequestValues(attributes, reads))).toEqual({ value: true });
    }
  });

  it("answers every expression as the whole request would", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "default", labels: { app: "web", tier: "front" } },
      spec: {
        key: "tier",
        hostNetwork: false,
        containers: [
          { name: "a", image: "nginx:1.27", ports: [{ containerPort: 80 }] },
          { name: "b", image: "busybox:latest", resources: { limits: { cpu: "1" } } },
        ],
      },
      status: { phase: "Pending" },
    };
    const attributes = attributesOf("UPDATE", "Pod", "pods", pod, {
      ...pod,
      metadata: { ...pod.metadata, labels: { app: "web" } },
    });
    const expressions = [
      "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
      "object.spec.containers.exists(c, has(c.resources))",
      "object.metadata.labels[object.spec.key] == 'front'",
      "object.metadata.labels.size() > oldObject.metadata.labels.size()",
      "object.spec.containers[0].ports[0].containerPort == 80",
      "has(object.spec.nodeName)",
      "object.?status.?phase.orValue('') == 'Pending'",
      "object.metadata == oldObject.metadata",
      "request.userInfo.username == 'alice' && request.operation == 'UPDATE'",
    ];
    const whole = celRequestValues(attributes);
    const answers: unknown[] = [];
    for (const expression of expressions) {
      const program = compileAdmissionExpression(expression);
      if (program instanceof Error) throw program;
      const read = celRequestValues(attributes, requestReads([expression]));
      expect([expression, runAdmissionExpression(program, read)]).toEqual([
        expression,
        runAdmissionExpression(program, whole),
      ]);
      answers.push(runAdmissionExpression(program, read));
    }
    expect(answers).toEqual(
      [false, true, true, true, true, false, true, false, true].map((value) => ({ value })),
    );
  });
});

describe("a JSON value as admission expressions see it", () => {
  it("makes whole numbers ints and copies only the parts that hold one", () => {
    const labels = { app: "web" };
    const containers = [{ name: "c", image: "nginx" }];
    const ports = [{ name: "http", containerPort: 80, weight: 0.5 }];
    const pod = { metadata: { name: "p", labels }, spec: { containers, ports, missing: undefined } };
    const value = celValueOf(pod) as typeof pod;
    expect(value).toEqual({
      metadata: { name: "p", labels: { app: "web" } },
      spec: { containers, ports: [{ name: "http", containerPort: 80n, weight: 0.5 }], missing: null },
    });
    expect(value).not.toBe(pod);
    // Parts without a whole number or an undefined member are the value's own, not copies.
    expect(value.metadata).toBe(pod.metadata);
    expect(value.spec.containers).toBe(containers);
    expect(value.spec.ports).not.toBe(ports);
    expect(pod.spec.ports[0]!.containerPort).toBe(80);
    const plain = { a: ["x", { b: true, c: null }] };
    expect(celValueOf(plain)).toBe(plain);
    expect(celValueOf([1, "x"])).toEqual([1n, "x"]);
  });

  it("keeps a __proto__ member an own member when it copies", () => {
    const parsed = JSON.parse('{"__proto__": {"n": 1}, "m": 2}');
    const value = celValueOf(parsed) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__", "m"]);
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toEqual({ n: 1n });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
