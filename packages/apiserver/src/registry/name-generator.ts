/** What `generateName` appends: 5 characters of apimachinery's `utilrand` alphabet (no vowels, no 0/1/3). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

/** A random name suffix, as apimachinery's `SimpleNameGenerator` makes one. */
export function randomSuffix(): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)];
  return suffix;
}
