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
  const seconds = isoSeconds(ms);
  if (seconds !== lastStampBase) {
    lastStamp = `${seconds}Z`;
    lastStampBase = seconds;
  }
  return lastStamp;
}

let lastStampBase = "";
let lastStamp = "";

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

// The last second written and its text: a server stamps many writes within one second.
let lastSecond = Number.NaN;
let lastText = "";

// `YYYY-MM-DDTHH:MM:SS` of the whole second at or before `ms`.
function isoSeconds(ms: number): string {
  const second = Math.floor(micros(ms) / 1_000_000);
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().slice(0, 19);
    lastSecond = second;
  }
  return lastText;
}

// The first `digits` fractional digits of the second.
function fraction(ms: number, digits: number): string {
  const total = micros(ms);
  const within = total - Math.floor(total / 1_000_000) * 1_000_000;
  return String(within).padStart(6, "0").padEnd(digits, "0").slice(0, digits);
}
