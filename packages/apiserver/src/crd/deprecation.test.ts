import { describe, expect, it } from "vitest";
import { defaultDeprecationWarning } from "./custom-kind.js";
import type { CustomResourceDefinition } from "./definition-validation.js";

const crd = (versions: { name: string; served: boolean; deprecated?: boolean }[]) =>
  ({
    spec: {
      group: "example.com",
      names: { plural: "widgets", kind: "Widget" },
      scope: "Namespaced",
      versions: versions.map((v) => ({ storage: false, ...v })),
    },
  }) as unknown as CustomResourceDefinition;

// apiextensions-apiserver's Test_defaultDeprecationWarning cases.
describe("defaultDeprecationWarning", () => {
  it("names no replacement when no newer version is served and not deprecated", () => {
    const spec = crd([
      { name: "v1", served: true, deprecated: true },
      { name: "v2", served: true, deprecated: true },
      { name: "v3", served: false },
    ]);
    expect(defaultDeprecationWarning("v1", spec)).toBe("example.com/v1 Widget is deprecated");
  });

  it("names the highest served replacement", () => {
    const names = [
      "v1",
      "v1alpha1",
      "v1alpha2",
      "v1beta1",
      "v1beta2",
      "v2",
      "v2alpha1",
      "v2alpha2",
      "v2beta1",
      "v2beta2",
    ];
    const unserved = ["v3", "v3alpha1", "v3alpha2", "v3beta1", "v3beta2"];
    const spec = crd([
      ...names.map((name) => ({ name, served: true })),
      ...unserved.map((name) => ({ name, served: false })),
    ]);
    expect(defaultDeprecationWarning("v1", spec)).toBe(
      "example.com/v1 Widget is deprecated; use example.com/v2 Widget",
    );
  });

  it("names no replacement of lower stability, nor a deprecated one", () => {
    const spec = crd([
      { name: "v1", served: true },
      { name: "v3", served: false },
      { name: "v3alpha1", served: true },
      { name: "v3beta1", served: true },
      { name: "v4", served: true, deprecated: true },
    ]);
    expect(defaultDeprecationWarning("v2", spec)).toBe("example.com/v2 Widget is deprecated");
  });
});
