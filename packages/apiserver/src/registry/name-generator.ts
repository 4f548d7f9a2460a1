import { type Random, realRandom } from "@reconcile/clock";

/** What `generateName` appends: 5 characters of apimachinery's `utilrand` alphabet (no vowels, no 0/1/3). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

/** A random name suffix, as apimachinery's `SimpleNameGenerator` makes one. */
export function randomSuffix(random: Random = realRandom): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += suffixAlphabet[Math.floor(random() * suffixAlphabet.length)];
  return suffix;
}
