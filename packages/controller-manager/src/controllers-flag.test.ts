import { describe, expect, it } from "vitest";
import { ControllerDescriptors } from "./controller-descriptors.js";
import { isControllerEnabled, parseControllersFlag, UnknownControllerError } from "./controllers-flag.js";

const construct = () => ({ run: async () => {} });

function table(): ControllerDescriptors {
  return new ControllerDescriptors([
    { name: "replicaset-controller", aliases: ["replicaset"], construct },
    { name: "deployment-controller", aliases: ["deployment"], construct },
    { name: "bootstrap-signer-controller", aliases: ["bootstrapsigner"], disabledByDefault: true, construct },
  ]);
}

describe("isControllerEnabled (upstream's IsControllerEnabled table)", () => {
  const cases: { name: string; controllers: string[]; disabledByDefault?: boolean; expected: boolean }[] = [
    { name: "foo", controllers: ["foo"], expected: true },
    { name: "foo", controllers: ["-foo"], expected: false },
    { name: "foo", controllers: ["foo", "-foo"], expected: true },
    { name: "foo", controllers: ["-foo", "foo"], expected: false },
    { name: "foo", controllers: ["*"], expected: true },
    { name: "foo", controllers: ["*", "-foo"], expected: false },
    { name: "foo", controllers: ["-foo", "*"], expected: false },
    { name: "foo", controllers: ["*", "bar"], expected: true },
    { name: "foo", controllers: ["bar"], expected: false },
    { name: "foo", controllers: [], expected: false },
    { name: "foo", controllers: ["*"], disabledByDefault: true, expected: false },
    { name: "foo", controllers: ["*", "foo"], disabledByDefault: true, expected: true },
    { name: "foo", controllers: ["foo"], disabledByDefault: true, expected: true },
  ];
  for (const c of cases) {
    it(`${c.name} under [${c.controllers.join(",")}]${c.disabledByDefault ? " (disabled by default)" : ""} → ${c.expected}`, () => {
      expect(isControllerEnabled(c.name, c.disabledByDefault ?? false, c.controllers)).toBe(c.expected);
    });
  }
});

describe("parseControllersFlag", () => {
  it("maps aliases to canonical names and keeps the leading -", () => {
    expect(parseControllersFlag("*,-replicaset,deployment", table())).toEqual([
      "*",
      "-replicaset-controller",
      "deployment-controller",
    ]);
  });

  it("accepts an array and skips empty entries", () => {
    expect(parseControllersFlag(["", "replicaset-controller", " "], table())).toEqual([
      "replicaset-controller",
    ]);
    expect(parseControllersFlag("", table())).toEqual([]);
  });

  it("names an unknown entry as the user wrote it, without the -", () => {
    expect(() => parseControllersFlag("*,-nosuch", table())).toThrow(new UnknownControllerError("nosuch"));
    expect(() => parseControllersFlag("replicaset,bogus", table())).toThrow(
      "bogus is not in the list of known controllers",
    );
  });
});

describe("ControllerDescriptors", () => {
  it("rejects an empty name, a duplicate, an alias used twice, and an alias equal to a name", () => {
    expect(() => new ControllerDescriptors([{ name: "", construct }])).toThrow(/non-empty name/);
    expect(() => table().register({ name: "replicaset-controller", construct })).toThrow(/registered twice/);
    expect(() => table().register({ name: "x", aliases: ["deployment"], construct })).toThrow(
      /alias "deployment" of "x"/,
    );
    expect(() => table().register({ name: "y", aliases: ["deployment-controller"], construct })).toThrow(
      /alias "deployment-controller" of "y"/,
    );
    expect(() => table().register({ name: "replicaset", construct })).toThrow(/registered twice/);
    expect(() => table().register({ name: "z" } as never)).toThrow(/no construct function/);
  });

  it("lists known and disabled-by-default names sorted, and resolves aliases", () => {
    const descriptors = table();
    expect(descriptors.knownControllers()).toEqual([
      "bootstrap-signer-controller",
      "deployment-controller",
      "replicaset-controller",
    ]);
    expect(descriptors.disabledByDefaultControllers()).toEqual(["bootstrap-signer-controller"]);
    expect(descriptors.canonicalName("bootstrapsigner")).toBe("bootstrap-signer-controller");
    expect(descriptors.canonicalName("deployment-controller")).toBe("deployment-controller");
    expect(descriptors.canonicalName("nope")).toBeUndefined();
  });
});
