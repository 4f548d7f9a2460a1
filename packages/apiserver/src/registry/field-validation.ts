import { newBadRequest, newInvalid } from "@reconcile/api";

/**
 * kube-apiserver's `fieldValidation` directive: what to do about fields a
 * body holds that the kind's schema does not declare, and about fields given
 * twice in one JSON object. They are dropped under every directive; `Strict`
 * refuses the write, `Warn` (the default) answers with one `Warning` per field,
 * `Ignore` says nothing.
 */
export type FieldValidationDirective = "Strict" | "Warn" | "Ignore";

/** What a write tells the registry about field validation, and where warnings go. */
export interface FieldValidation {
  directive: FieldValidationDirective;
  /** Fields the body's JSON text held twice (`metadata.name`), found where the text was read. */
  duplicates?: readonly string[] | undefined;
  /** Collects the texts of `Warning` headers under `Warn` (`unknown field "spec.replicass"`). */
  warnings?: string[] | undefined;
}

const directives: readonly FieldValidationDirective[] = ["Ignore", "Warn", "Strict"];

/**
 * The `fieldValidation` query parameter: absent or empty is `Warn`, the
 * server's default since 1.25; anything but the three directives is a 400.
 */
export function parseFieldValidation(value: string | null): FieldValidationDirective {
  if (value === null || value === "") return "Warn";
  if ((directives as readonly string[]).includes(value)) return value as FieldValidationDirective;
  throw newBadRequest(
    `fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Strict", "Warn"`,
  );
}

/**
 * Reports what decoding found, as kube-apiserver does for a typed kind: a key
 * both duplicate and unknown counts as unknown only; duplicates come first.
 * Under Strict a create or update is a 400 (`<Kind> in version "v1" cannot be
 * handled as a <Kind>: strict decoding error: unknown field "spec.x"`) and a
 * patch a 422 on the field `patch`, whose value is the patched object's JSON.
 */
export function reportFieldProblems(
  validation: FieldValidation | undefined,
  unknown: readonly string[],
  /** `patched`: the patched object's JSON, made only for the 422. */
  context: { what: string; patched?: () => string },
): void {
  const directive = validation?.directive ?? "Warn";
  if (directive === "Ignore") return;
  const unknownSet = new Set(unknown);
  const problems = [
    ...(validation?.duplicates ?? []).filter((path) => !unknownSet.has(path)).map(duplicateField),
    ...unknown.map(unknownField),
  ];
  if (problems.length === 0) return;
  if (directive === "Warn") {
    validation?.warnings?.push(...problems);
    return;
  }
  const message = `strict decoding error: ${problems.join(", ")}`;
  if (context.patched === undefined) throw newBadRequest(`${context.what}: ${message}`);
  const value = JSON.stringify(context.patched());
  throw newInvalid({ group: "", kind: "" }, "", [
    { type: "FieldValueInvalid", field: "patch", message: `patch: Invalid value: ${value}: ${message}` },
  ]);
}

export function unknownField(path: string): string {
  return `unknown field ${goQuote(path)}`;
}

export function duplicateField(path: string): string {
  return `duplicate field ${goQuote(path)}`;
}

/**
 * Go's `%q` of a string, as upstream formats field paths: `"` and `\` escaped,
 * control characters as `\n`, `\t`, `\x01`… (so a hostile key cannot put a
 * control character in a message or a header).
 */
export function goQuote(text: string): string {
  const named: Record<string, string> = {
    "\u0007": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
  };
  let body = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (named[c] !== undefined) body += named[c];
    else if (code < 0x20 || code === 0x7f) body += `\\x${code.toString(16).padStart(2, "0")}`;
    else body += c;
  }
  return `"${body}"`;
}

/**
 * The paths of keys given more than once in one object of a JSON text, in
 * document order (`metadata.name`, `spec.template.spec.containers[0].image`).
 * The text must be valid JSON; an invalid text yields what was found so far.
 */
export function duplicateFields(text: string): string[] {
  const found: string[] = [];
  // One frame per open object or array: the keys seen (objects) or the next index (arrays).
  const frames: { keys?: Set<string>; index: number; segment: string }[] = [];
  let pendingKey: string | undefined;
  let expectKey = false;
  const segmentFor = () => {
    const parent = frames.at(-1);
    if (parent === undefined) return "";
    if (parent.keys !== undefined) return pendingKey ?? "";
    return `[${parent.index}]`;
  };
  const path = (last: string) => {
    let out = "";
    for (const frame of frames.slice(1)) out += joinSegment(out, frame.segment);
    return out + joinSegment(out, last);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      let escaped = false;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (escaped) escaped = false;
        else if (d === 0x5c /* \ */) escaped = true;
        else if (d === 0x22) break;
      }
      const frame = frames.at(-1);
      if (expectKey && frame?.keys !== undefined) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          return found;
        }
        if (frame.keys.has(key)) found.push(path(key));
        else frame.keys.add(key);
        pendingKey = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      frames.push({ keys: new Set(), index: 0, segment: segmentFor() });
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      frames.push({ index: 0, segment: segmentFor() });
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const frame = frames.at(-1);
      if (frame?.keys !== undefined) expectKey = true;
      else if (frame !== undefined) frame.index++;
    }
  }
  return found;
}

function joinSegment(out: string, segment: string): string {
  if (segment === "") return "";
  return out === "" || segment.startsWith("[") ? segment : `.${segment}`;
}
