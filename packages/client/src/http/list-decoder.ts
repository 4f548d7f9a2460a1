const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const itemsKey = Buffer.from("items");

/**
 * Decodes a list response (`{"kind":"PodList",...,"items":[{...},{...}]}`) as
 * its bytes arrive: each item is parsed on its own as soon as it is complete,
 * and everything else (kind, metadata) is parsed at the end. A 100,000-pod
 * list so never needs one `JSON.parse` of the whole body, which would hold the
 * event loop for seconds and keep the body twice in memory (bytes and string).
 *
 * It scans bytes, not characters: the structural characters of JSON are ASCII
 * and never occur inside a multi-byte UTF-8 sequence. Malformed JSON surfaces
 * as a `SyntaxError` from `end()` or from the item that is broken.
 */
export class ListDecoder {
  readonly items: unknown[] = [];
  private readonly envelope: Uint8Array[] = [];
  private depth = 0;
  private inString = false;
  /** Backslashes at the end of the previous chunk, inside a string. */
  private carriedBackslashes = 0;
  private inItems = false;
  private itemsSeen = false;
  /** Pieces of the item being read, when it spans chunks. */
  private itemPieces: Uint8Array[] = [];
  private inItem = false;
  /** The last string that ended at depth 1 (a key, or a value), kept only while short. */
  private lastTopString: Uint8Array[] = [];
  private topStringLength = 0;
  private capturingTopString = false;

  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const n = bytes.length;
    let envelopeStart = this.inItems ? -1 : 0;
    let itemStart = this.inItem ? 0 : -1;
    let stringStart = this.capturingTopString ? 0 : -1;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        const quote = bytes.indexOf(QUOTE, i);
        if (quote === -1) {
          let run = 0;
          for (let k = n - 1; k >= i && bytes[k] === BACKSLASH; k--) run++;
          this.carriedBackslashes = run === n - i ? this.carriedBackslashes + run : run;
          if (stringStart >= 0) this.keepTopString(bytes.subarray(stringStart, n));
          i = n;
          break;
        }
        let run = 0;
        let k = quote - 1;
        while (k >= i && bytes[k] === BACKSLASH) {
          run++;
          k--;
        }
        if (k < i) run += this.carriedBackslashes;
        this.carriedBackslashes = 0;
        if (run % 2 === 1) {
          i = quote + 1;
          continue;
        }
        this.inString = false;
        if (stringStart >= 0) {
          this.keepTopString(bytes.subarray(stringStart, quote));
          stringStart = -1;
          this.capturingTopString = false;
        }
        i = quote + 1;
        continue;
      }
      const c = bytes[i]!;
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && !this.inItems) {
          this.lastTopString = [];
          this.topStringLength = 0;
          this.capturingTopString = true;
          stringStart = i + 1;
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (this.inItems && this.depth === 2 && !this.inItem) {
          this.inItem = true;
          itemStart = i;
        }
        this.depth++;
        if (
          c === OPEN_BRACKET &&
          this.depth === 2 &&
          !this.inItems &&
          !this.itemsSeen &&
          this.lastTopStringIsItems()
        ) {
          this.envelope.push(bytes.subarray(envelopeStart, i + 1));
          envelopeStart = -1;
          this.inItems = true;
          this.itemsSeen = true;
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
        if (this.inItems) {
          if (this.inItem && this.depth === 2) {
            this.finishItem(bytes, itemStart, i + 1);
            itemStart = -1;
          } else if (this.depth === 1) {
            this.inItems = false;
            envelopeStart = i;
          }
        }
      }
      i++;
    }
    if (envelopeStart >= 0) this.envelope.push(bytes.subarray(envelopeStart, n));
    if (this.inItem && itemStart >= 0) this.itemPieces.push(bytes.subarray(itemStart, n));
  }

  /** The whole list: the envelope's fields with the items decoded along the way. */
  end(): Record<string, unknown> {
    if (this.inString || this.depth !== 0)
      throw new SyntaxError("the list response ended in the middle of its JSON");
    const text = Buffer.concat(this.envelope).toString("utf8");
    const list = JSON.parse(text) as Record<string, unknown>;
    if (list === null || typeof list !== "object" || Array.isArray(list)) {
      throw new SyntaxError("the list response is not a JSON object");
    }
    if (this.itemsSeen) list.items = this.items;
    return list;
  }

  private finishItem(bytes: Buffer, start: number, end: number): void {
    let text: string;
    if (this.itemPieces.length === 0) text = bytes.toString("utf8", start, end);
    else {
      this.itemPieces.push(bytes.subarray(start === -1 ? 0 : start, end));
      text = Buffer.concat(this.itemPieces).toString("utf8");
      this.itemPieces = [];
    }
    this.inItem = false;
    this.items.push(JSON.parse(text));
  }

  private keepTopString(piece: Uint8Array): void {
    // Only "items" matters; longer strings need not be kept.
    this.topStringLength += piece.length;
    if (this.topStringLength <= itemsKey.length) this.lastTopString.push(piece);
  }

  private lastTopStringIsItems(): boolean {
    if (this.topStringLength !== itemsKey.length) return false;
    return Buffer.concat(this.lastTopString).equals(itemsKey);
  }
}
