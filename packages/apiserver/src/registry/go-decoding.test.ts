import { describe, expect, it } from "vitest";
import { goBase64Error } from "./go-base64.js";
import { goTimeParseError, rfc3339Layout, rfc3339MicroLayout } from "./go-time.js";

describe("goTimeParseError: Go's time.Parse for metav1.Time and MicroTime", () => {
  it.each([
    ["2026-01-01T00:00:00Z", undefined],
    ["2026-01-01T00:00:00.123Z", undefined],
    ["2026-01-01T00:00:00+01:00", undefined],
    ["2024-02-29T00:00:00Z", undefined],
    ["2026-01-01", 'parsing time "2026-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'],
    [
      "2026-01-01 00:00:00Z",
      'parsing time "2026-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"',
    ],
    [
      "2026-01-01T00:00:00",
      'parsing time "2026-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
    ],
    [
      "26-01-01T00:00:00Z",
      'parsing time "26-01-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "26-01-01T00:00:00Z" as "2006"',
    ],
    [
      "2026-1-01T00:00:00Z",
      'parsing time "2026-1-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-01T00:00:00Z" as "01"',
    ],
    ["2026-13-01T00:00:00Z", 'parsing time "2026-13-01T00:00:00Z": month out of range'],
    ["2026-02-30T00:00:00Z", 'parsing time "2026-02-30T00:00:00Z": day out of range'],
    ["2026-01-01T25:00:00Z", 'parsing time "2026-01-01T25:00:00Z": hour out of range'],
    ["2026-01-01T00:00:00Zabc", 'parsing time "2026-01-01T00:00:00Zabc": extra text: "abc"'],
    [
      'tomorrow"',
      'parsing time "tomorrow\\"" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow\\"" as "2006"',
    ],
    [
      "\u00fc",
      'parsing time "\\xc3\\xbc" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xbc" as "2006"',
    ],
  ])("RFC 3339: %s", (value, error) => {
    expect(goTimeParseError(value, rfc3339Layout)).toBe(error);
  });

  it.each([
    ["2026-01-01T00:00:00.123456Z", undefined],
    ["2026-01-01T00:00:00.123456+02:00", undefined],
    [
      "2026-01-01T00:00:00.123Z",
      'parsing time "2026-01-01T00:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    ],
    [
      "2026-01-01T00:00:00.123456789Z",
      'parsing time "2026-01-01T00:00:00.123456789Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "789Z" as "Z07:00"',
    ],
  ])("RFC 3339 with microseconds: %s", (value, error) => {
    expect(goTimeParseError(value, rfc3339MicroLayout)).toBe(error);
  });
});

describe("goBase64Error: Go's base64.StdEncoding as encoding/json decodes a []byte", () => {
  it.each([
    ["", undefined],
    ["aGk=", undefined],
    ["aGk=\n", undefined],
    ["aG\r\nk=", undefined],
    ["aGVsbG8=", undefined],
    ["aG==", undefined],
    ["aGk", "illegal base64 data at input byte 0"],
    ["a===", "illegal base64 data at input byte 1"],
    ["aG=", "illegal base64 data at input byte 3"],
    ["aGk=x", "illegal base64 data at input byte 4"],
    ["c2VjcmV0!", "illegal base64 data at input byte 8"],
    ["aGk-", "illegal base64 data at input byte 3"],
  ])("%j", (text, error) => {
    expect(goBase64Error(text)).toBe(error);
  });
});
