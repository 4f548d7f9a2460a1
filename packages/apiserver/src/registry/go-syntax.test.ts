import { describe, expect, it } from "vitest";
import { goLabelSelector, goStringMap, goStrings, goTime, goToleration } from "./go-syntax.js";

// Field errors' bad values as Go's %#v writes them (apimachinery 1.32's
// field.Error.ErrorBody for what is not a string, number or bool).

describe("Go syntax for field errors' values", () => {
  it("writes string slices and maps as %#v does: nil apart from empty, map keys sorted, no space after a colon", () => {
    expect(goStrings(undefined).text).toBe("[]string(nil)");
    expect(goStrings([]).text).toBe("[]string{}");
    expect(goStrings(["a", 'b"c'], "[]core.IPFamily").text).toBe('[]core.IPFamily{"a", "b\\"c"}');
    expect(goStringMap(undefined).text).toBe("map[string]string(nil)");
    expect(goStringMap({ z: "1", a: "2" }).text).toBe('map[string]string{"a":"2", "z":"1"}');
  });

  it("writes a selector's requirements and a toleration's fields in the Go structs' order", () => {
    expect(
      goLabelSelector({ matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }] }).text,
    ).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"tier", Operator:"In", Values:[]string{"web"}}}}',
    );
    expect(goToleration({ key: "k", operator: "Exists" }).text).toBe(
      'core.Toleration{Key:"k", Operator:"Exists", Value:"", Effect:"", TolerationSeconds:(*int64)(nil)}',
    );
    // A set pointer shows its value where Go prints an address.
    expect(goToleration({ key: "k", effect: "NoExecute", tolerationSeconds: 30 }).text).toBe(
      'core.Toleration{Key:"k", Operator:"", Value:"", Effect:"NoExecute", TolerationSeconds:(*int64)(30)}',
    );
  });
});

describe("goTime", () => {
  it("prints a metav1.Time as time.Time's GoString: local when read, Go's zero time in UTC when unset", () => {
    expect(goTime("2026-12-01T09:05:03Z").text).toBe(
      "time.Date(2026, time.December, 1, 9, 5, 3, 0, time.Local)",
    );
    expect(goTime("2024-02-29T23:59:59.250Z").text).toBe(
      "time.Date(2024, time.February, 29, 23, 59, 59, 250000000, time.Local)",
    );
    expect(goTime(undefined).text).toBe("time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)");
  });
});
