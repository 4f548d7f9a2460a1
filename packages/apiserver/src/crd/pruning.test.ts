import { describe, expect, it } from "vitest";
import { dropNulls, prune } from "./pruning.js";
import type { JSONSchemaProps } from "./schema.js";

const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        size: { type: "integer" },
        list: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
        labels: { type: "object", additionalProperties: { type: "string" } },
        free: { type: "object", additionalProperties: true },
        open: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { inner: { type: "object", properties: { a: { type: "string" } } } },
        },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true,
        },
        plain: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      },
    },
  },
};

describe("pruning unknown fields", () => {
  it("removes undeclared fields everywhere, reports their paths sorted, and keeps the declared ones", () => {
    const object = {
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "x", labels: { a: "b" }, unknown: 1 },
      unknownTop: true,
      spec: {
        size: 3,
        replicass: 2,
        list: [{ name: "a", extra: 1 }, { name: "b" }],
        labels: { any: "thing" },
        free: { anything: { goes: 1 } },
        open: { kept: 1, inner: { a: "x", dropped: 2 } },
        template: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", creationTimestamp: null, unspecified: 1 },
          spec: { x: 1 },
        },
        plain: { metadata: { unspecified: 1 } },
      },
    };
    expect(prune(object, schema)).toEqual([
      "metadata.unknown",
      "spec.list[0].extra",
      "spec.open.inner.dropped",
      "spec.replicass",
      "spec.template.metadata.unspecified",
      "unknownTop",
    ]);
    expect(object).toEqual({
      apiVersion: "stable.example.com/v1",
      kind: "CronTab",
      metadata: { name: "x", labels: { a: "b" } },
      spec: {
        size: 3,
        list: [{ name: "a" }, { name: "b" }],
        labels: { any: "thing" },
        free: { anything: { goes: 1 } },
        open: { kept: 1, inner: { a: "x" } },
        template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { x: 1 } },
        plain: { metadata: { unspecified: 1 } },
      },
    });
  });

  it("keeps a resource's apiVersion, kind and metadata even when the schema does not declare them", () => {
    const object = { apiVersion: "a/v1", kind: "K", metadata: { name: "n" }, spec: {} };
    expect(prune(object, { type: "object" })).toEqual(["spec"]);
    expect(object).toEqual({ apiVersion: "a/v1", kind: "K", metadata: { name: "n" } });
  });

  it("drops nulls of non-nullable undefaulted properties, but not in arrays", () => {
    const value = { a: null, b: null, c: null, list: [null], m: { k: null } };
    dropNulls(value, {
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: "string", nullable: true },
        c: { type: "string", default: "x" },
        list: { type: "array", items: { type: "string" } },
        m: { type: "object", additionalProperties: { type: "string" } },
      },
    });
    expect(value).toEqual({ b: null, c: null, list: [null], m: {} });
  });
});
