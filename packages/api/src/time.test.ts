import { describe, expect, it } from "vitest";
import { rfc3339, rfc3339Micro, rfc3339Nano } from "./time.js";

const at = Date.UTC(2006, 0, 2, 15, 4, 5);

describe("rfc3339 (metav1.Time)", () => {
  it.each([
    [at, "2006-01-02T15:04:05Z"],
    [at + 999, "2006-01-02T15:04:05Z"],
    [at + 1000, "2006-01-02T15:04:06Z"],
    [0, "1970-01-01T00:00:00Z"],
    [-1, "1969-12-31T23:59:59Z"],
  ])("writes %d as %s, truncating the fraction", (ms, text) => {
    expect(rfc3339(ms)).toBe(text);
  });

  it("rejects a reading that is not a finite number", () => {
    expect(() => rfc3339(Number.NaN)).toThrow(RangeError);
    expect(() => rfc3339(Number.POSITIVE_INFINITY)).toThrow("finite clock reading, got Infinity");
  });
});

describe("rfc3339Micro (metav1.MicroTime)", () => {
  it.each([
    [at, "2006-01-02T15:04:05.000000Z"],
    [at + 123, "2006-01-02T15:04:05.123000Z"],
    [at + 123.456, "2006-01-02T15:04:05.123456Z"],
    [at + 999.999, "2006-01-02T15:04:05.999999Z"],
    [at + 999.9999, "2006-01-02T15:04:06.000000Z"],
    [-0.5, "1969-12-31T23:59:59.999500Z"],
  ])("writes %d as %s with six digits", (ms, text) => {
    expect(rfc3339Micro(ms)).toBe(text);
  });
});

describe("rfc3339Nano (time.RFC3339Nano)", () => {
  it.each([
    [at, "2006-01-02T15:04:05Z"],
    [at + 120, "2006-01-02T15:04:05.12Z"],
    [at + 1, "2006-01-02T15:04:05.001Z"],
    [at + 0.5, "2006-01-02T15:04:05.0005Z"],
  ])("writes %d as %s without trailing zeros", (ms, text) => {
    expect(rfc3339Nano(ms)).toBe(text);
  });
});
