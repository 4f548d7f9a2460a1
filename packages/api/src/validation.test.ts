import { describe, expect, it } from "vitest";
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
} from "./validation.js";

const labelRule =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe("validation", () => {
  it.each([
    "a",
    "A",
    "a.b-c_d",
    "example.com/MyName",
    "k8s.io/app",
    "1",
  ])("accepts the qualified name %j", (name) => {
    expect(isQualifiedName(name)).toEqual([]);
  });

  it.each(["", "-a", "a-", "a b", "a/b/c", "/a", "A.com/b"])("rejects the qualified name %j", (name) => {
    expect(isQualifiedName(name).length).toBeGreaterThan(0);
  });

  it.each(["", "a", "A_b.c-1", "v".repeat(63)])("accepts the label value %j", (value) => {
    expect(isValidLabelValue(value)).toEqual([]);
  });

  it.each(["-a", "a!", "a b", "é"])("rejects the label value %j", (value) => {
    expect(isValidLabelValue(value).length).toBe(1);
  });

  it("counts length in UTF-8 bytes, as Go does", () => {
    expect(isValidLabelValue("é".repeat(32))[0]).toBe("must be no more than 63 characters");
  });

  it("checks RFC 1123 labels and subdomains", () => {
    expect(isDNS1123Label("my-name")).toEqual([]);
    expect(isDNS1123Label("My-name")).toEqual([labelRule]);
    expect(isDNS1123Label("a".repeat(64))).toEqual(["must be no more than 63 characters"]);
    expect(isDNS1123Subdomain("a.b-c.d")).toEqual([]);
    expect(isDNS1123Subdomain("a..b").length).toBe(1);
    expect(isDNS1123Subdomain(`${"a".repeat(250)}.com`)).toEqual(["must be no more than 253 characters"]);
  });
});

describe("isValidPortNum and isValidPortName (upstream IsValidPortNum, IsValidPortName)", () => {
  it.each([
    [1, []],
    [65535, []],
    [0, ["must be between 1 and 65535, inclusive"]],
    [65536, ["must be between 1 and 65535, inclusive"]],
    [8.5, ["must be between 1 and 65535, inclusive"]],
  ])("port %d", (port, problems) => {
    expect(isValidPortNum(port)).toEqual(problems);
  });

  it.each([
    ["http", []],
    ["web-8080", []],
    ["8080", ["must contain at least one letter (a-z)"]],
    ["-web", ["must not begin or end with a hyphen"]],
    ["a--b", ["must not contain consecutive hyphens"]],
    [
      "Web_Port-Name-Long",
      [
        "must be no more than 15 characters",
        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
      ],
    ],
  ])("name %s", (name, problems) => {
    expect(isValidPortName(name)).toEqual(problems);
  });
});
