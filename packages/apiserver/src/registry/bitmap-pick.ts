/**
 * A free index of a bitmap allocator with a static band (upstream's
 * `randomScanStrategyWithOffset`): first a random free index at or above
 * `offset`, scanning on from a random start, then one below it; undefined
 * when every index in [0, size) is taken.
 */
export function pickFree(
  taken: ReadonlySet<number>,
  offset: number,
  size: number,
  random: () => number,
): number | undefined {
  return scan(taken, offset, size, random) ?? scan(taken, 0, offset, random);
}

/** A random free index in [from, to), scanning on from a random start. */
function scan(
  taken: ReadonlySet<number>,
  from: number,
  to: number,
  random: () => number,
): number | undefined {
  const span = to - from;
  if (span <= 0) return undefined;
  const start = Math.floor(random() * span);
  for (let step = 0; step < span; step++) {
    const index = from + ((start + step) % span);
    if (!taken.has(index)) return index;
  }
  return undefined;
}
