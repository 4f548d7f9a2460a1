import { describe, expect, it } from "vitest";
import { isBadRequest, StatusError } from "./errors.js";
import {
  escapeFieldValue,
  fieldSelectorError,
  fieldSelectorFromSet,
  objectFieldSet,
  parseFieldSelector,
  supportedFieldLabels,
  validateFieldSelector,
} from "./fields.js";
import { configMaps, events, namespaces, nodes, pods, replicaSets, secrets } from "./resources.js";
import { SelectorParseError } from "./selector-errors.js";

function parseError(text: string): SelectorParseError {
  try {
    parseFieldSelector(text);
  } catch (error) {
    if (error instanceof SelectorParseError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe("parseFieldSelector", () => {
  it.each([
    ["", ""],
    ["metadata.name=web", "metadata.name=web"],
    ["metadata.name==web", "metadata.name=web"],
    ["status.phase!=Running", "status.phase!=Running"],
    ["spec.nodeName=n1,metadata.namespace=default", "metadata.namespace=default,spec.nodeName=n1"],
    ["a=,b!=", "a=,b!="],
    ["a=x,,b=y", "a=x,b=y"],
    ["a=x\\,y\\=z\\\\", "a=x\\,y\\=z\\\\"],
  ])("parses %j into the canonical %j", (text, canonical) => {
    const selector = parseFieldSelector(text);
    expect(selector.toString()).toBe(canonical);
    expect(parseFieldSelector(selector.toString()).toString()).toBe(canonical);
  });

  it("unescapes values and splits each term at its first operator", () => {
    expect(parseFieldSelector("a=x\\,y\\=z\\\\,b!=\\=c").requirements()).toEqual([
      { field: "a", operator: "=", value: "x,y=z\\" },
      { field: "b", operator: "!=", value: "=c" },
    ]);
  });

  it.each([
    ["abc", "abc", 0, "can't understand 'abc'"],
    ["a=b,cd", "cd", 4, "can't understand 'cd'"],
    ["a=b=c", "a=b=c", 3, "unescaped character in value: '='"],
    ["x=1,a=b,c", "c", 8, "can't understand 'c'"],
    ["a=b\\x", "a=b\\x", 3, "invalid escape sequence: \\x"],
    ["a=b\\", "a=b\\", 3, "invalid escape sequence: \\"],
  ])("rejects %j naming the term %j at position %i", (text, term, position, reason) => {
    const error = parseError(text);
    expect(error.term).toBe(term);
    expect(error.position).toBe(position);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(
      `invalid field selector ${JSON.stringify(text)}: ${reason} (at position ${position})`,
    );
    expect(error.code).toBe("api.selector-parse");
    expect(error.legacyCode).toBe("selector.parse");
  });

  it("rejects a value that is not a string", () => {
    expect(() => parseFieldSelector(3 as never)).toThrow("a field selector must be a string, got number");
  });

  it("escapeFieldValue escapes backslash, comma and equals", () => {
    expect(escapeFieldValue("a\\b,c=d")).toBe("a\\\\b\\,c\\=d");
    expect(escapeFieldValue("plain")).toBe("plain");
  });
});

describe("FieldSelector.matches", () => {
  it.each([
    ["", {}, true],
    ["a=x", { a: "x" }, true],
    ["a=x", { a: "y" }, false],
    ["a=", {}, true],
    ["a=x", {}, false],
    ["a!=x", {}, true],
    ["a!=x", { a: "x" }, false],
    ["a!=x,b=y", { a: "z", b: "y" }, true],
    ["a!=x,b=y", { a: "z", b: "z" }, false],
    ["toString=", {}, true],
  ])("%j on %j is %s", (text, fields, expected) => {
    expect(parseFieldSelector(text).matches(fields)).toBe(expected);
  });

  it("empty() is true only without terms", () => {
    expect(parseFieldSelector("").empty()).toBe(true);
    expect(parseFieldSelector("a=b").empty()).toBe(false);
  });

  it("requiresExactMatch reports only = terms", () => {
    const selector = parseFieldSelector("metadata.name=web,status.phase!=Failed");
    expect(selector.requiresExactMatch("metadata.name")).toBe("web");
    expect(selector.requiresExactMatch("status.phase")).toBeUndefined();
  });

  it("fieldSelectorFromSet requires every field", () => {
    const selector = fieldSelectorFromSet({ "spec.nodeName": "n1", "metadata.name": "a,b" });
    expect(selector.toString()).toBe("metadata.name=a\\,b,spec.nodeName=n1");
    expect(selector.matches({ "metadata.name": "a,b", "spec.nodeName": "n1" })).toBe(true);
    expect(selector.matches({ "metadata.name": "a,b" })).toBe(false);
  });
});

describe("objectFieldSet", () => {
  it("gives a pod's metadata, spec and status fields", () => {
    expect(
      objectFieldSet(pods, {
        metadata: { name: "web-1", namespace: "default" },
        spec: {
          containers: [],
          nodeName: "n1",
          restartPolicy: "Always",
          schedulerName: "default-scheduler",
          serviceAccountName: "default",
        },
        status: { phase: "Running", podIP: "10.0.0.9", podIPs: [{ ip: "10.0.0.7" }] },
      } as never),
    ).toEqual({
      "metadata.name": "web-1",
      "metadata.namespace": "default",
      "spec.nodeName": "n1",
      "spec.restartPolicy": "Always",
      "spec.schedulerName": "default-scheduler",
      "spec.serviceAccountName": "default",
      "spec.hostNetwork": "false",
      "status.phase": "Running",
      "status.podIP": "10.0.0.7",
      "status.nominatedNodeName": "",
    });
  });

  it("gives an empty string for fields a pod does not set", () => {
    const fields = objectFieldSet(pods, { metadata: { name: "p", namespace: "ns" } });
    expect(fields["spec.nodeName"]).toBe("");
    expect(fields["status.phase"]).toBe("");
    expect(fields["status.podIP"]).toBe("");
  });

  it("gives an event's involvedObject, reason, type and source", () => {
    const fields = objectFieldSet(events, {
      metadata: { name: "e1", namespace: "default" },
      involvedObject: {
        kind: "Pod",
        namespace: "default",
        name: "web-1",
        uid: "u1",
        apiVersion: "v1",
        resourceVersion: "7",
        fieldPath: "spec.containers{web}",
      },
      reason: "Scheduled",
      type: "Normal",
      reportingComponent: "scheduler",
    } as never);
    expect(fields).toEqual({
      "metadata.name": "e1",
      "metadata.namespace": "default",
      "involvedObject.kind": "Pod",
      "involvedObject.namespace": "default",
      "involvedObject.name": "web-1",
      "involvedObject.uid": "u1",
      "involvedObject.apiVersion": "v1",
      "involvedObject.resourceVersion": "7",
      "involvedObject.fieldPath": "spec.containers{web}",
      reason: "Scheduled",
      reportingComponent: "scheduler",
      source: "scheduler",
      type: "Normal",
    });
    expect(
      objectFieldSet(events, {
        metadata: { name: "e2" },
        involvedObject: {},
        source: { component: "kubelet" },
        reportingComponent: "other",
      } as never).source,
    ).toBe("kubelet");
  });

  it("gives node, secret, namespace and replica set fields; cluster-scoped kinds have no namespace", () => {
    expect(
      objectFieldSet(nodes, { metadata: { name: "n1" }, spec: { unschedulable: true } } as never),
    ).toEqual({
      "metadata.name": "n1",
      "spec.unschedulable": "true",
    });
    expect(objectFieldSet(nodes, { metadata: { name: "n2" } })["spec.unschedulable"]).toBe("false");
    expect(
      objectFieldSet(secrets, { metadata: { name: "s", namespace: "ns" }, type: "Opaque" } as never),
    ).toEqual({ "metadata.name": "s", "metadata.namespace": "ns", type: "Opaque" });
    expect(
      objectFieldSet(namespaces, { metadata: { name: "ns" }, status: { phase: "Active" } } as never),
    ).toEqual({ "metadata.name": "ns", "status.phase": "Active" });
    expect(
      objectFieldSet(replicaSets, {
        metadata: { name: "rs", namespace: "ns" },
        status: { replicas: 3 },
      } as never),
    ).toEqual({ "metadata.name": "rs", "metadata.namespace": "ns", "status.replicas": "3" });
  });

  it("gives only metadata fields for other kinds", () => {
    expect(objectFieldSet(configMaps, { metadata: { name: "c", namespace: "ns" } })).toEqual({
      "metadata.name": "c",
      "metadata.namespace": "ns",
    });
  });

  it("works with a parsed selector to filter pods by node", () => {
    const selector = parseFieldSelector("spec.nodeName=n1,status.phase!=Failed");
    const pod = (node: string, phase: string) =>
      ({
        metadata: { name: `${node}-${phase}`, namespace: "d" },
        spec: { containers: [], nodeName: node },
        status: { phase },
      }) as never;
    expect(selector.matches(objectFieldSet(pods, pod("n1", "Running")))).toBe(true);
    expect(selector.matches(objectFieldSet(pods, pod("n1", "Failed")))).toBe(false);
    expect(selector.matches(objectFieldSet(pods, pod("n2", "Running")))).toBe(false);
  });
});

describe("validateFieldSelector", () => {
  it("accepts the labels a kind supports", () => {
    expect(() =>
      validateFieldSelector(pods, parseFieldSelector("spec.nodeName=n1,metadata.name=x")),
    ).not.toThrow();
    expect(
      fieldSelectorError(events, parseFieldSelector("involvedObject.uid=u,type=Warning")),
    ).toBeUndefined();
  });

  it("rejects an unsupported label with kube-apiserver's 400 message", () => {
    const error = fieldSelectorError(pods, parseFieldSelector("metadata.name=x,spec.bogus=y"));
    expect(error).toBeInstanceOf(StatusError);
    expect(isBadRequest(error)).toBe(true);
    expect(error?.status.code).toBe(400);
    expect(error?.message).toBe("field label not supported: spec.bogus");
    expect(() => validateFieldSelector(nodes, parseFieldSelector("metadata.namespace=x"))).toThrow(
      "field label not supported: metadata.namespace",
    );
  });

  it("rejects a non-metadata label on a kind without its own fields with the default message", () => {
    expect(fieldSelectorError(configMaps, parseFieldSelector("data.x=y"))?.message).toBe(
      `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`,
    );
  });

  it("lists the supported labels of a kind", () => {
    expect(supportedFieldLabels(replicaSets)).toEqual([
      "metadata.name",
      "metadata.namespace",
      "status.replicas",
    ]);
    expect(supportedFieldLabels(namespaces)).toEqual(["metadata.name", "status.phase"]);
    expect(supportedFieldLabels(configMaps)).toEqual(["metadata.name", "metadata.namespace"]);
  });
});
