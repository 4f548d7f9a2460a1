/**
 * Timestamps as Kubernetes writes them. All take a clock reading in
 * milliseconds since the Unix epoch (fractions allowed, counted to the
 * microsecond) and write UTC.
 */

/**
 * `metav1.Time`: RFC 3339 truncated to whole seconds, `2006-01-02T15:04:05Z`.
 * Truncates, as Go's `Time.MarshalJSON` drops the fraction rather than rounding.
 */
export function rfc3339(ms: number): string {
  return secondOf(ms).stamp;
}

/**
 * `metav1.MicroTime` (Lease `renewTime`, events.k8s.io `eventTime`): RFC 3339
 * with exactly six fractional digits, `2006-01-02T15:04:05.000000Z`.
 */
export function rfc3339Micro(ms: number): string {
  return `${isoSeconds(ms)}.${fraction(ms, 6)}Z`;
}

/**
 * Go's `time.RFC3339Nano` (container log lines, `kubectl logs --timestamps`):
 * up to nine fractional digits with trailing zeros dropped, and no fraction
 * at all on a whole second. Readings count to the microsecond, so at most six
 * digits are ever non-zero.
 */
export function rfc3339Nano(ms: number): string {
  const digits = fraction(ms, 9).replace(/0+$/, "");
  return digits === "" ? `${isoSeconds(ms)}Z` : `${isoSeconds(ms)}.${digits}Z`;
}

// A reading counts to the microsecond: rounding there first keeps float noise
// (123.456 ms is 123.45599… ms) out of the digits, and the second and its
// fraction always come from the same instant.
function micros(ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`a timestamp needs a finite clock reading, got ${ms}`);
  return Math.round(ms * 1000);
}

// The last second written, as `YYYY-MM-DDTHH:MM:SS` and as RFC 3339: a server stamps many
// writes within one second.
let last = { second: Number.NaN, text: "", stamp: "" };

function secondOf(ms: number): { text: string; stamp: string } {
  const second = Math.floor(micros(ms) / 1_000_000);
  if (second !== last.second) {
    const text = new Date(second * 1000).toISOString().slice(0, 19);
    last = { second, text, stamp: `${text}Z` };
  }
  return last;
}

// `YYYY-MM-DDTHH:MM:SS` of the whole second at or before `ms`.
function isoSeconds(ms: number): string {
  return secondOf(ms).text;
}

// The first `digits` fractional digits of the second.
function fraction(ms: number, digits: number): string {
  const total = micros(ms);
  const within = total - Math.floor(total / 1_000_000) * 1_000_000;
  return String(within).padStart(6, "0").padEnd(digits, "0").slice(0, digits);
}
