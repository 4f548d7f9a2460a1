import { RE2JS } from "re2js";

/**
 * Every user-supplied regular expression (a CRD field's `pattern`, CEL's
 * `matches`, `find` and `findAll`) runs on RE2, as kube-apiserver's Go
 * `regexp` does: linear in the input whatever the pattern, with RE2's syntax
 * (no lookaround, no backreferences) and its error texts
 * (`error parsing regexp: missing closing ]: `[``). JavaScript's
 * backtracking `RegExp` would let `^(a+)+$` stop the event loop for hours.
 */
const compiled = new Map<string, RE2JS | Error>();

/** The compiled pattern, or the RE2 parse error (`error parsing regexp: …`). Cached, failures included. */
export function re2(pattern: string): RE2JS {
  let regex = compiled.get(pattern);
  if (regex === undefined) {
    try {
      regex = RE2JS.compile(pattern);
    } catch (error) {
      regex = new Error((error as Error).message);
    }
    if (compiled.size >= 1_000) compiled.clear();
    compiled.set(pattern, regex);
  }
  if (regex instanceof Error) throw regex;
  return regex;
}

/** Whether `pattern` matches anywhere in `text` (Go's `regexp.MatchString`). */
export function re2Matches(text: string, pattern: string): boolean {
  return re2(pattern).test(text);
}

/** The first match of `pattern` in `text`, or undefined. */
export function re2Find(text: string, pattern: string): string | undefined {
  const matcher = re2(pattern).matcher(text);
  return matcher.find() ? (matcher.group() ?? "") : undefined;
}

/** Every non-overlapping match, at most `limit` of them (negative: all). */
export function re2FindAll(text: string, pattern: string, limit: number): string[] {
  const matcher = re2(pattern).matcher(text);
  const out: string[] = [];
  while ((limit < 0 || out.length < limit) && matcher.find()) out.push(matcher.group() ?? "");
  return out;
}

/** Ajv's `code.regExp` engine on RE2 (`pattern` keywords). */
export const re2Engine = Object.assign(
  (pattern: string) => {
    const regex = re2(pattern);
    // Ajv keys its compiled patterns by toString(): each must name its own pattern.
    return { test: (text: string) => regex.test(text), toString: () => `re2:${pattern}` };
  },
  { code: "re2" },
);
