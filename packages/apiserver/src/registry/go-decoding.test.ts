import { describe, expect, it } from "vitest";
import { goBase64Error } from "./go-base64.js";
import {
  goTimeParseError,
  goTimeParseErrorByElements,
  rfc3339Layout,
  rfc3339MicroLayout,
} from "./go-time.js";

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

describe("goTimeParseError's quick path", () => {
  it("answers as the element-by-element parse for every canonical value around each field's range", () => {
    const pad = (n: number, width = 2) => String(n).padStart(width, "0");
    let compared = 0;
    const differences: string[] = [];
    for (const year of [0, 1900, 2000, 2023, 2024, 2100, 9999])
      for (let month = 0; month <= 13; month++)
        for (const day of [0, 1, 28, 29, 30, 31, 32])
          for (const hour of [0, 23, 24])
            for (const minute of [0, 59, 60])
              for (const second of [0, 59, 60]) {
                const base = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}`;
                for (const [value, layout] of [
                  [`${base}Z`, rfc3339Layout],
                  [`${base}.123456Z`, rfc3339MicroLayout],
                ] as const) {
                  compared++;
                  const quick = goTimeParseError(value, layout);
                  if (quick !== goTimeParseErrorByElements(value, layout))
                    differences.push(`${value}: ${quick}`);
                }
              }
    expect(compared).toBe(37_044);
    expect(differences).toEqual([]);
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
