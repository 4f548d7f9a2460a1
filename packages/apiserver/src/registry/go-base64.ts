/**
 * Go's `base64.StdEncoding.Decode` as encoding/json runs it on a []byte
 * field: undefined when it decodes, else its error (`illegal base64 data at
 * input byte 4`). Padding is required; `\r` and `\n` are skipped anywhere;
 * positions count bytes of the UTF-8 text.
 */
export function goBase64Error(text: string): string | undefined {
  const src = Buffer.from(text, "utf8");
  const corrupt = (at: number) => `illegal base64 data at input byte ${at}`;
  const isNewline = (at: number) => src[at] === 0x0a || src[at] === 0x0d;
  let si = 0;
  for (;;) {
    // One quantum of four characters.
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? undefined : corrupt(si - j);
      const c = src[si++]!;
      if (isAlphabet(c)) continue;
      if (c === 0x0a || c === 0x0d) {
        j--;
        continue;
      }
      if (c !== 0x3d || j < 2) return corrupt(si - 1);
      if (j === 2) {
        // "==" wanted: the second "=" may follow newlines.
        while (si < src.length && isNewline(si)) si++;
        if (si === src.length) return corrupt(src.length);
        if (src[si] !== 0x3d) return corrupt(si - 1);
        si++;
      }
      while (si < src.length && isNewline(si)) si++;
      return si < src.length ? corrupt(si) : undefined;
    }
  }
}

function isAlphabet(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x2f
  );
}
