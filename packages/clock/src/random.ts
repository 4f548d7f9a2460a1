import { randomUUID } from "node:crypto";

/**
 * A source of random numbers in [0, 1), the shape of `Math.random`. Every
 * part of reconcile that draws at random (jitter, backoff, generated names,
 * UIDs, the simulated runtime) takes one, so a whole cluster can run from one
 * seed: see {@link seededRandom}.
 */
export type Random = () => number;

/** The default source: `Math.random`, looked up on every call (so test spies see it). */
export const realRandom: Random = () => Math.random();

/**
 * A deterministic source from a 32-bit seed (the sfc32 generator, seeded
 * through splitmix32): the same seed gives the same sequence on every
 * machine and Node version. Not for secrets.
 */
export function seededRandom(seed: number): Random {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  };
  let a = next();
  let b = next();
  let c = next();
  let d = next();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

/**
 * A version-4 UUID drawn from `random`; from the platform's
 * `crypto.randomUUID` when `random` is undefined or {@link realRandom}.
 */
export function uuidFrom(random: Random | undefined): string {
  if (random === undefined || random === realRandom) return randomUUID();
  let hex = "";
  for (let i = 0; i < 4; i++)
    hex += Math.floor(random() * 4294967296)
      .toString(16)
      .padStart(8, "0");
  // Version 4, variant 10xx, as RFC 9562 lays them out.
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** An integer in [0, n) from `random`. */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}
