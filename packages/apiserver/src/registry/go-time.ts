/**
 * Go's `time.Parse` for the two layouts Kubernetes' time types read: what it
 * accepts and the error it words, so a body kube-apiserver's decoder refuses
 * is refused here with the same text.
 *
 * `metav1.Time` parses with `time.RFC3339` (a fractional second is allowed
 * though the layout has none); `metav1.MicroTime` with
 * `2006-01-02T15:04:05.000000Z07:00`, which wants exactly six digits.
 */
export const rfc3339Layout = "2006-01-02T15:04:05Z07:00";
export const rfc3339MicroLayout = "2006-01-02T15:04:05.000000Z07:00";

type Element = "2006" | "01" | "02" | "15" | "04" | "05" | ".000000" | "Z07:00";

/** RFC 3339's elements, each with the literal text before it. */
const rfc3339Elements: ReadonlyArray<readonly [prefix: string, element: Element]> = [
  ["", "2006"],
  ["-", "01"],
  ["-", "02"],
  ["T", "15"],
  [":", "04"],
  [":", "05"],
  ["", "Z07:00"],
];

const layouts: Record<string, ReadonlyArray<readonly [prefix: string, element: Element]>> = {
  [rfc3339Layout]: rfc3339Elements,
  // The same with six fractional digits before the zone.
  [rfc3339MicroLayout]: [...rfc3339Elements.slice(0, 6), ["", ".000000"], rfc3339Elements[6]!],
};

/** Go's error for `value` under `layout`, or undefined when Go parses it. */
export function goTimeParseError(value: string, layout: string): string | undefined {
  if (canonicalAndInRange(value, layout === rfc3339MicroLayout)) return undefined;
  return goTimeParseErrorByElements(value, layout);
}

/**
 * The quick path: the form servers and clients write
 * (`2026-11-30T09:12:58Z`; with six fractional digits for MicroTime), read
 * by character with each field's range checked. Anything else, valid or
 * not, goes the element-by-element way, which words Go's errors.
 */
function canonicalAndInRange(value: string, micro: boolean): boolean {
  if (value.length !== (micro ? 27 : 20) || value.charCodeAt(value.length - 1) !== 90 /* Z */) return false;
  const separators = micro ? microSeparators : plainSeparators;
  for (let at = 0; at < value.length - 1; at++) {
    const separator = separators[at];
    if (separator === undefined ? !isDigit(value, at) : value[at] !== separator) return false;
  }
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2);
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(month, year) &&
    twoDigits(value, 11) < 24 &&
    twoDigits(value, 14) < 60 &&
    twoDigits(value, 17) < 60
  );
}

/** The number the two digits at `at` write. */
function twoDigits(value: string, at: number): number {
  return (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48;
}

const plainSeparators: Readonly<Record<number, string>> = { 4: "-", 7: "-", 10: "T", 13: ":", 16: ":" };
const microSeparators: Readonly<Record<number, string>> = { ...plainSeparators, 19: "." };

/** {@link goTimeParseError} without its quick path: each element of the layout read in turn, as Go reads it. */
export function goTimeParseErrorByElements(value: string, layout: string): string | undefined {
  const elements = layouts[layout];
  if (elements === undefined) throw new Error(`unsupported layout ${layout}`);
  const fail = (valueElem: string, layoutElem: string) =>
    `parsing time ${timeQuote(value)} as ${timeQuote(layout)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`;
  const outOfRange = (what: string) => `parsing time ${timeQuote(value)}: ${what} out of range`;
  let rest = value;
  let year = 0;
  let month = 0;
  let day = 0;
  for (let index = 0; index < elements.length; index++) {
    const [prefix, element] = elements[index]!;
    if (prefix !== "" && !rest.startsWith(prefix)) return fail(rest, prefix);
    rest = rest.slice(prefix.length);
    const hold = rest;
    let bad = false;
    let range: string | undefined;
    switch (element) {
      case "2006":
        if (rest.length < 4 || !isDigit(rest, 0) || !/^\d{4}$/.test(rest.slice(0, 4))) bad = true;
        else {
          year = Number(rest.slice(0, 4));
          rest = rest.slice(4);
        }
        break;
      case "01":
      case "02":
      case "04":
      case "15": {
        const read = number(rest, element !== "15");
        if (read === undefined) bad = true;
        else {
          rest = read.rest;
          if (element === "01") {
            month = read.value;
            if (month <= 0 || month > 12) range = "month";
          } else if (element === "02") {
            // Any two digits: the day is checked against the month once all is read.
            day = read.value;
          } else if (element === "15" && read.value >= 24) range = "hour";
          else if (element === "04" && read.value >= 60) range = "minute";
        }
        break;
      }
      case "05": {
        const read = number(rest, true);
        if (read === undefined) {
          bad = true;
          break;
        }
        rest = read.rest;
        if (read.value >= 60) {
          range = "second";
          break;
        }
        // A fractional second the layout does not name is read all the same.
        if (rest.length >= 2 && (rest[0] === "." || rest[0] === ",") && isDigit(rest, 1)) {
          if (elements[index + 1]?.[1] === ".000000") break;
          let n = 2;
          while (n < rest.length && isDigit(rest, n)) n++;
          rest = rest.slice(n);
        }
        break;
      }
      case ".000000":
        if (rest.length < 7 || (rest[0] !== "." && rest[0] !== ",") || !/^\d{6}$/.test(rest.slice(1, 7)))
          bad = true;
        else rest = rest.slice(7);
        break;
      case "Z07:00":
        if (rest.startsWith("Z")) rest = rest.slice(1);
        else if (rest.length < 6 || rest[3] !== ":" || (rest[0] !== "+" && rest[0] !== "-")) bad = true;
        else {
          const hours = number(rest.slice(1, 3), true);
          const minutes = number(rest.slice(4, 6), true);
          if (hours === undefined || minutes === undefined) bad = true;
          else if (hours.value > 24) range = "time zone offset hour";
          else if (minutes.value > 60) range = "time zone offset minute";
          else rest = rest.slice(6);
        }
        break;
    }
    if (range !== undefined) return outOfRange(range);
    if (bad) return fail(hold, element);
  }
  if (rest !== "") return `parsing time ${timeQuote(value)}: extra text: ${timeQuote(rest)}`;
  if (day < 1 || day > daysIn(month, year)) return outOfRange("day");
  return undefined;
}

/** Go's `getnum`: one or two digits (exactly two when `fixed`). */
function number(text: string, fixed: boolean): { value: number; rest: string } | undefined {
  if (!isDigit(text, 0)) return undefined;
  if (!isDigit(text, 1)) {
    if (fixed) return undefined;
    return { value: Number(text[0]), rest: text.slice(1) };
  }
  return { value: Number(text.slice(0, 2)), rest: text.slice(2) };
}

function isDigit(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 48 && code <= 57;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Go's `time.quote`, which its parse errors use: double quotes, `"` and `\` escaped, control bytes
 * and non-ASCII as `\x..`. Not `strconv.Quote` (`goQuote` of field-validation), which keeps printable
 * non-ASCII.
 */
function timeQuote(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, "utf8")) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x80) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}
