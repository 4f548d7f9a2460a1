import { readFileSync } from "node:fs";
import { crdDescriptors } from "@reconcile/runtime/envtest";
import { describe, expect, it } from "vitest";
import { websiteCRD, websites, websitesV1alpha1 } from "./website.js";

describe("the Website CRD", () => {
  it("config/crd.json, for kubectl apply, is the CRD the code installs", () => {
    const file = JSON.parse(readFileSync(new URL("../config/crd.json", import.meta.url), "utf8"));
    expect(file).toEqual(websiteCRD);
  });

  it("defines the kind the operator reads", () => {
    expect(crdDescriptors(websiteCRD)).toEqual([websites, websitesV1alpha1]);
  });
});
