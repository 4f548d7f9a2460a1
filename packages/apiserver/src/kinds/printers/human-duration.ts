/**
 * A duration as kubectl prints ages (`duration.HumanDuration` of
 * k8s.io/apimachinery): `45s`, `3m20s`, `17m`, `5h12m`, `3d4h`, `400d`, `2y10d`.
 * Small negative skews (up to a second) read as `0s`; anything earlier is
 * `<invalid>`.
 */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.trunc(milliseconds / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${dy}d`;
  }
  return `${Math.trunc(days / 365)}y`;
}

/** The age of a timestamp at `now`, `<unknown>` when there is none (`translateTimestampSince`). */
export function age(timestamp: string | undefined | null, now: number): string {
  if (!timestamp) return "<unknown>";
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return "<unknown>";
  return humanDuration(now - at);
}
