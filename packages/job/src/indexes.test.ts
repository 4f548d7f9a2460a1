import { describe, expect, it } from "vitest";
import { formatIndexes, parseIndexes } from "./indexes.js";
import { failureBackoffMs } from "./job-conditions.js";

describe("completed indexes (upstream's orderedIntervals)", () => {
  it.each([
    [[], ""],
    [[0], "0"],
    [[0, 1, 2], "0-2"],
    [[4, 0, 2, 1], "0-2,4"],
    [[1, 3, 5, 6, 7, 9], "1,3,5-7,9"],
    [[2, 2, 3], "2-3"],
  ])("%j is %s", (indexes, text) => {
    expect(formatIndexes(indexes)).toBe(text);
  });

  it.each([
    ["", 5, []],
    ["0-2,4", 5, [0, 1, 2, 4]],
    ["1,3-4", 4, [1, 3]],
    ["x,2", 5, [2]],
  ])("%s below %i reads as %j", (text, completions, indexes) => {
    expect([...parseIndexes(text, completions)]).toEqual(indexes);
  });
});

describe("failureBackoffMs", () => {
  it.each([
    [0, 0],
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [7, 600_000],
    [30, 600_000],
  ])("after %i failures waits %i ms", (failures, ms) => {
    expect(failureBackoffMs(failures)).toBe(ms);
  });
});
