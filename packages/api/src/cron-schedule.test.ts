import { describe, expect, it } from "vitest";
import { CronSchedule, formatInZone } from "./cron-schedule.js";

const at = (text: string) => Date.parse(text);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe("CronSchedule.next (robfig/cron's standard parser)", () => {
  it.each([
    // [spec, after, next]
    ["*/15 * * * *", "2012-07-09T14:45:00Z", "2012-07-09T15:00:00.000Z"],
    ["*/15 * * * *", "2012-07-09T14:59:00Z", "2012-07-09T15:00:00.000Z"],
    ["*/15 * * * *", "2012-07-09T14:59:59Z", "2012-07-09T15:00:00.000Z"],
    ["*/15 * * * *", "2012-07-09T23:46:00Z", "2012-07-10T00:00:00.000Z"],
    ["0 */2 * * *", "2012-07-09T23:00:00Z", "2012-07-10T00:00:00.000Z"],
    ["0 0 9 Apr-Oct ?", "2012-07-09T23:35:00Z", "2012-08-09T00:00:00.000Z"],
    ["0 0 1 * *", "2012-12-31T23:59:00Z", "2013-01-01T00:00:00.000Z"],
    ["0 0 29 2 *", "2013-01-01T00:00:00Z", "2016-02-29T00:00:00.000Z"],
    ["0 9 * * MON-FRI", "2026-11-27T09:00:00Z", "2026-11-30T09:00:00.000Z"],
    ["0 9 * * 7", "2026-11-28T00:00:00Z", "2026-11-29T09:00:00.000Z"],
    // Both day fields restricted: either matches (the 1st, or a Friday).
    ["0 0 1 * 5", "2026-11-28T00:00:00Z", "2026-12-01T00:00:00.000Z"],
    ["0 0 15 * 5", "2026-11-28T00:00:00Z", "2026-12-04T00:00:00.000Z"],
    ["30 6-16/4 * * 1-5", "2026-11-30T07:00:00Z", "2026-11-30T10:30:00.000Z"],
    ["@hourly", "2026-11-28T13:59:00Z", "2026-11-28T14:00:00.000Z"],
    ["@daily", "2026-11-28T13:59:00Z", "2026-11-29T00:00:00.000Z"],
    ["@weekly", "2026-11-28T13:59:00Z", "2026-11-29T00:00:00.000Z"],
    ["@monthly", "2026-11-28T13:59:00Z", "2026-12-01T00:00:00.000Z"],
    ["@yearly", "2026-11-28T13:59:00Z", "2027-01-01T00:00:00.000Z"],
    ["59 23 31 2 *", "2026-01-01T00:00:00Z", undefined],
  ])("%s after %s is %s", (spec, after, next) => {
    expect(iso(CronSchedule.parse(spec).next(at(after)))).toBe(next);
  });

  it.each([
    ["", "empty spec string"],
    ["* * * *", "expected exactly 5 fields, found 4: [* * * *]"],
    ["60 * * * *", "end of range (60) above maximum (59): 60"],
    ["* * 0 * *", "beginning of range (0) below minimum (1): 0"],
    ["5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"],
    ["x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ["@every 5m", "unrecognized descriptor: @every 5m"],
    ["@fortnightly", "unrecognized descriptor: @fortnightly"],
  ])("%j fails: %s", (spec, message) => {
    expect(() => CronSchedule.parse(spec)).toThrow(message);
  });

  it("computes activations in the CronJob's time zone, across a DST change", () => {
    const tokyo = CronSchedule.parse("0 9 * * *", "Asia/Tokyo");
    expect(iso(tokyo.next(at("2026-11-28T00:00:00Z")))).toBe("2026-11-29T00:00:00.000Z");
    const newYork = CronSchedule.parse("30 2 * * *", "America/New_York");
    // 2026-03-08 02:30 does not exist in New York (clocks jump 02:00 → 03:00): it runs at 03:30 EDT, as Go's time.Date reads it.
    expect(iso(newYork.next(at("2026-03-07T08:00:00Z")))).toBe("2026-03-08T07:30:00.000Z");
    expect(iso(newYork.next(at("2026-03-08T07:30:00Z")))).toBe("2026-03-09T06:30:00.000Z");
    // 2026-11-01 01:30 happens twice (EDT, then EST): once, at the first.
    const repeated = CronSchedule.parse("30 1 * * *", "America/New_York");
    expect(iso(repeated.next(at("2026-11-01T00:00:00Z")))).toBe("2026-11-01T05:30:00.000Z");
    expect(iso(repeated.next(at("2026-11-01T05:30:00Z")))).toBe("2026-11-02T06:30:00.000Z");
    const winter = CronSchedule.parse("0 12 * * *", "America/New_York");
    expect(iso(winter.next(at("2026-11-28T00:00:00Z")))).toBe("2026-11-28T17:00:00.000Z");
    expect(() => CronSchedule.parse("* * * * *", "Mars/Olympus")).toThrow("unknown time zone Mars/Olympus");
  });

  it("formats the scheduled time in the zone as RFC 3339", () => {
    expect(formatInZone(at("2026-11-28T00:00:00Z"), "UTC")).toBe("2026-11-28T00:00:00Z");
    expect(formatInZone(at("2026-11-28T00:00:00Z"), "Asia/Tokyo")).toBe("2026-11-28T09:00:00+09:00");
    expect(formatInZone(at("2026-11-28T17:00:00Z"), "America/New_York")).toBe("2026-11-28T12:00:00-05:00");
  });
});
