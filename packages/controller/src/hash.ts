import type { DeepReadonly, PodTemplateSpec } from "@reconcile/api";

/**
 * The hash of a pod template that names what a controller makes from it
 * (upstream `controller.ComputeHash`): a Deployment's `pod-template-hash`, a
 * DaemonSet's ControllerRevision names. FNV-1a (32 bit) over a canonical JSON dump of
 * the template (keys sorted, so field order never matters), followed, when
 * `collisionCount` is given, by that count as a little-endian uint32 and four
 * zero bytes; the decimal value is then spelled in the safe alphabet. The
 * value is stable across processes and restarts; it does not equal Go's,
 * whose dump format is spew's.
 */
export function computeHash(
  template: PodTemplateSpec | DeepReadonly<PodTemplateSpec> | undefined,
  collisionCount?: number | undefined,
): string {
  let hash = fnvOffsetBasis;
  hash = fnv1a(hash, encoder.encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined && collisionCount !== null) {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hash = fnv1a(hash, bytes);
  }
  return safeEncodeString(String(hash));
}

/**
 * Maps every character onto `bcdfghjklmnpqrstvwxz2456789` (no vowels, no
 * 0/1/3, so a generated name never spells a word), as apimachinery's
 * `rand.SafeEncodeString` does.
 */
export function safeEncodeString(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) out += safeAlphabet[value.charCodeAt(i) % safeAlphabet.length];
  return out;
}

const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789";
const fnvOffsetBasis = 0x811c9dc5;
const fnvPrime = 0x01000193;
const encoder = new TextEncoder();

function fnv1a(hash: number, bytes: Uint8Array): number {
  let h = hash;
  for (const byte of bytes) h = Math.imul(h ^ byte, fnvPrime) >>> 0;
  return h;
}

/**
 * The hash of a ControllerRevision's data (upstream
 * `history.HashControllerRevision`): FNV-1 (32 bit) over the data's
 * canonical JSON, then `probe` in decimal when given, spelled in the safe
 * alphabet.
 */
export function hashControllerRevisionData(data: unknown, probe?: number | undefined): string {
  let hash = fnvOffsetBasis;
  hash = fnv1(hash, encoder.encode(canonicalJson(data ?? null)));
  if (probe !== undefined && probe !== null) hash = fnv1(hash, encoder.encode(String(probe)));
  return safeEncodeString(String(hash));
}

function fnv1(hash: number, bytes: Uint8Array): number {
  let h = hash;
  for (const byte of bytes) h = (Math.imul(h, fnvPrime) ^ byte) >>> 0;
  return h;
}

/** JSON with every object's keys sorted, as Go's encoding/json writes a map: the same value, the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  }
  return `{${parts.join(",")}}`;
}
