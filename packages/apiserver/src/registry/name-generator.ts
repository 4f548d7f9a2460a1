import { type Random, realRandom } from "@reconcile/clock";

/** What `generateName` appends: 5 characters of apimachinery's `utilrand` alphabet (no vowels, no 0/1/3). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

/** A random name suffix, as apimachinery's `SimpleNameGenerator` makes one. */
export function randomSuffix(random: Random = realRandom): string {
  // One string made at once, rather than four partial ones on the way (arguments are drawn left to right).
  return String.fromCharCode(
    suffixCharacter(random),
    suffixCharacter(random),
    suffixCharacter(random),
    suffixCharacter(random),
    suffixCharacter(random),
  );
}

function suffixCharacter(random: Random): number {
  return suffixAlphabet.charCodeAt(Math.floor(random() * suffixAlphabet.length));
}
