// `status.completedIndexes` and `status.failedIndexes` of Indexed Jobs: sorted
// interval lists written as `1,3-5,7` (upstream's orderedIntervals).

/** The indexes of an interval list below `completions`; malformed parts are skipped as upstream skips them. */
export function parseIndexes(text: string | undefined, completions: number): Set<number> {
  const result = new Set<number>();
  if (text === undefined || text === "") return result;
  for (const part of text.split(",")) {
    const [first, last = first] = part.split("-").map((n) => Number(n));
    if (!Number.isInteger(first) || !Number.isInteger(last)) continue;
    for (let i = first as number; i <= (last as number) && i < completions; i++) result.add(i);
  }
  return result;
}

/** `[0,1,2,4]` → `0-2,4`. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i] as number;
    let end = start;
    while (i + 1 < sorted.length && sorted[i + 1] === end + 1) end = sorted[++i] as number;
    parts.push(start === end ? String(start) : `${start}-${end}`);
  }
  return parts.join(",");
}
