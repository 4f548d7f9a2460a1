import type { KubeObject, ObjectList } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { withItemTypeMeta } from "./list-type-meta.js";

const list = (envelope: Partial<ObjectList>, items: unknown[]): ObjectList =>
  ({ metadata: {}, ...envelope, items }) as ObjectList;

describe("withItemTypeMeta", () => {
  it("gives items without kind and apiVersion the list's kind without List and its apiVersion", () => {
    const result = withItemTypeMeta(
      list({ apiVersion: "apps/v1", kind: "DeploymentList" }, [{ metadata: { name: "a" } }]),
    );
    expect(result.items).toEqual([{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "a" } }]);
  });

  it("leaves an item that carries either field as it is, as client-go's unstructured decoder does", () => {
    const items: KubeObject[] = [
      { apiVersion: "example.com/v2", kind: "Widget", metadata: { name: "both" } },
      { kind: "Widget", metadata: { name: "kind only" } },
      { apiVersion: "example.com/v1", metadata: { name: "apiVersion only" } },
      { apiVersion: "", kind: "", metadata: { name: "empty" } },
    ];
    const result = withItemTypeMeta(list({ apiVersion: "example.com/v1", kind: "WidgetList" }, items));
    expect(result.items.map((item) => [item.apiVersion, item.kind])).toEqual([
      ["example.com/v2", "Widget"],
      [undefined, "Widget"],
      ["example.com/v1", undefined],
      ["example.com/v1", "Widget"],
    ]);
  });

  it.each([
    ["no kind", { apiVersion: "v1" }],
    ["no apiVersion", { kind: "PodList" }],
    ["a kind that is not a list's", { apiVersion: "v1", kind: "Status" }],
  ])("changes nothing when the list has %s", (_, envelope) => {
    const result = withItemTypeMeta(list(envelope, [{ metadata: { name: "a" } }, null]));
    expect(result.items).toEqual([{ metadata: { name: "a" } }, null]);
  });
});
