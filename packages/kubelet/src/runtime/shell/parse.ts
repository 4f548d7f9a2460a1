// The grammar of the simulated containers' shell: a small POSIX sh subset.
// Lists of pipelines joined by `;`, `&&`, `||`, newlines; simple commands with
// assignments and redirections; `for`/`while`/`until`/`if`, `{ …; }` and
// `( … )`; words with quotes, `$VAR`, `${VAR}`, `$?`, `$(…)`, backquotes and
// `$((…))`.

/** One piece of a word: literal text, a parameter, a command substitution or arithmetic. */
export type WordPart =
  | { type: "text"; text: string; quoted: boolean }
  | { type: "param"; name: string; quoted: boolean }
  | { type: "command"; list: List; quoted: boolean }
  | { type: "arith"; expression: Word; quoted: boolean };

export type Word = WordPart[];

export interface Redirect {
  /** 1 (stdout) or 2 (stderr), or 0 for `<`. */
  fd: 0 | 1 | 2;
  op: ">" | ">>" | "<" | ">&";
  /** The file, or the descriptor (`1`/`2`) for `>&`. */
  target: Word;
}

export type Command =
  | { type: "simple"; assignments: [string, Word][]; words: Word[]; redirects: Redirect[] }
  | { type: "for"; variable: string; items: Word[] | undefined; body: List; redirects: Redirect[] }
  | { type: "loop"; until: boolean; condition: List; body: List; redirects: Redirect[] }
  | {
      type: "if";
      branches: { condition: List; body: List }[];
      otherwise: List | undefined;
      redirects: Redirect[];
    }
  | { type: "group"; subshell: boolean; body: List; redirects: Redirect[] };

export interface Pipeline {
  negated: boolean;
  commands: Command[];
}

/** Pipelines joined by `&&`/`||`, in order: `rest[i].op` joins it to what came before. */
export interface AndOr {
  first: Pipeline;
  rest: { op: "&&" | "||"; pipeline: Pipeline }[];
}

export type List = AndOr[];

/** A script the shell cannot read: `sh: <message>`, exit status 2. */
export class ShellSyntaxError extends Error {}

type Token = { type: "word"; word: Word; raw: string } | { type: "op"; op: string } | { type: "end" };

const operators = ["&&", "||", ";;", ">>", ">&", "&>", ";", "&", "|", "(", ")", "<", ">", "\n"];

/** Parses a whole script. */
export function parseScript(script: string): List {
  const parser = new Parser(tokenize(script));
  const list = parser.list(new Set());
  parser.expectEnd();
  return list;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i] as string;
    if (char === " " || char === "\t" || char === "\r") {
      i++;
    } else if (char === "#") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (char === "\\" && source[i + 1] === "\n") {
      i += 2;
    } else {
      // `2>`, `2>>`, `1>&2`: a descriptor glued to a redirection.
      const fd = /^([012])(>>|>&|>|<)/.exec(source.slice(i, i + 4));
      if (fd !== null) {
        tokens.push({ type: "op", op: `${fd[1]}${fd[2]}` });
        i += fd[0].length;
        continue;
      }
      const op = operators.find((o) => source.startsWith(o, i));
      if (op !== undefined) {
        tokens.push({ type: "op", op });
        i += op.length;
      } else {
        const [word, end] = readWord(source, i);
        tokens.push({ type: "word", word, raw: source.slice(i, end) });
        i = end;
      }
    }
  }
  tokens.push({ type: "end" });
  return tokens;
}

/** Reads one word from `start`; returns it and the index after it. */
function readWord(source: string, start: number): [Word, number] {
  const parts: Word = [];
  const text = (value: string, quoted: boolean) => {
    const last = parts[parts.length - 1];
    if (last?.type === "text" && last.quoted === quoted) last.text += value;
    else parts.push({ type: "text", text: value, quoted });
  };
  let i = start;
  let quote: '"' | undefined;
  while (i < source.length) {
    const char = source[i] as string;
    if (quote === undefined && (/[\s;&|()<>]/.test(char) || (char === "#" && i === start))) break;
    if (char === '"') {
      quote = quote === undefined ? '"' : undefined;
      if (quote !== undefined) text("", true); // "" is a word of its own
      i++;
    } else if (char === "'" && quote === undefined) {
      const end = source.indexOf("'", i + 1);
      if (end === -1) throw new ShellSyntaxError("syntax error: unterminated quoted string");
      text(source.slice(i + 1, end), true);
      i = end + 1;
    } else if (char === "\\") {
      const next = source[i + 1] ?? "";
      if (quote === undefined || '"\\$`'.includes(next)) text(next, true);
      else text(`\\${next}`, true);
      i += 2;
    } else if (char === "$" || char === "`") {
      const [part, end] = readExpansion(source, i, quote !== undefined);
      if (part === undefined) text("$", quote !== undefined);
      else parts.push(part);
      i = end;
    } else {
      text(char, quote !== undefined);
      i++;
    }
  }
  if (quote !== undefined) throw new ShellSyntaxError("syntax error: unterminated quoted string");
  return [parts, i];
}

/** `$name`, `${name}`, `$?`, `$(…)`, `$((…))` or a backquoted command at `start`. */
function readExpansion(source: string, start: number, quoted: boolean): [WordPart | undefined, number] {
  if (source[start] === "`") {
    const end = source.indexOf("`", start + 1);
    if (end === -1) throw new ShellSyntaxError("syntax error: unterminated `");
    return [{ type: "command", list: parseScript(source.slice(start + 1, end)), quoted }, end + 1];
  }
  const next = source[start + 1] ?? "";
  if (next === "(" && source[start + 2] === "(") {
    const end = matching(source, start + 2);
    if (source[end + 1] !== ")") throw new ShellSyntaxError("syntax error: missing '))'");
    const [expression] = readWord(`"${source.slice(start + 3, end).replaceAll('"', "")}"`, 0);
    return [{ type: "arith", expression, quoted }, end + 2];
  }
  if (next === "(") {
    const end = matching(source, start + 1);
    return [{ type: "command", list: parseScript(source.slice(start + 2, end)), quoted }, end + 1];
  }
  if (next === "{") {
    const end = source.indexOf("}", start + 2);
    if (end === -1) throw new ShellSyntaxError("syntax error: missing '}'");
    return [{ type: "param", name: source.slice(start + 2, end), quoted }, end + 1];
  }
  const name = /^([A-Za-z_][A-Za-z0-9_]*|[0-9?#$@*!-])/.exec(source.slice(start + 1, start + 64));
  if (name === null) return [undefined, start + 1];
  return [{ type: "param", name: name[1] as string, quoted }, start + 1 + (name[1] as string).length];
}

/** The index of the `)` that closes the `(` at `open`, quotes honoured. */
function matching(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const char = source[i];
    if (char === "'") {
      const end = source.indexOf("'", i + 1);
      i = end === -1 ? source.length : end;
    } else if (char === "\\") i++;
    else if (char === "(") depth++;
    else if (char === ")" && --depth === 0) return i;
  }
  throw new ShellSyntaxError("syntax error: missing ')'");
}

class Parser {
  #at = 0;
  constructor(readonly tokens: Token[]) {}

  expectEnd(): void {
    const token = this.#peek();
    if (token.type !== "end") throw new ShellSyntaxError(`syntax error: unexpected "${describe(token)}"`);
  }

  /** Commands up to one of the `stops` keywords (or `)` / the end). */
  list(stops: ReadonlySet<string>): List {
    const list: List = [];
    for (;;) {
      this.#skipSeparators();
      const token = this.#peek();
      if (token.type === "end" || (token.type === "op" && token.op === ")")) return list;
      if (token.type === "word" && stops.has(token.raw)) return list;
      list.push(this.#andOr());
      const after = this.#peek();
      if (after.type === "op" && (after.op === ";" || after.op === "\n" || after.op === "&")) continue;
      return list;
    }
  }

  #andOr(): AndOr {
    const first = this.#pipeline();
    const rest: AndOr["rest"] = [];
    for (;;) {
      const token = this.#peek();
      if (token.type !== "op" || (token.op !== "&&" && token.op !== "||")) return { first, rest };
      this.#at++;
      while (this.#isOp("\n")) this.#at++;
      rest.push({ op: token.op, pipeline: this.#pipeline() });
    }
  }

  #pipeline(): Pipeline {
    const negated = this.#isWord("!");
    if (negated) this.#at++;
    const commands = [this.#command()];
    while (this.#isOp("|")) {
      this.#at++;
      while (this.#isOp("\n")) this.#at++;
      commands.push(this.#command());
    }
    return { negated, commands };
  }

  #command(): Command {
    const token = this.#peek();
    if (token.type === "op" && token.op === "(") {
      this.#at++;
      const body = this.list(new Set());
      this.#expectOp(")");
      return { type: "group", subshell: true, body, redirects: this.#redirects() };
    }
    if (token.type === "word") {
      switch (token.raw) {
        case "{": {
          this.#at++;
          const body = this.list(new Set(["}"]));
          this.#expectWord("}");
          return { type: "group", subshell: false, body, redirects: this.#redirects() };
        }
        case "for":
          return this.#for();
        case "while":
        case "until": {
          this.#at++;
          const condition = this.list(new Set(["do"]));
          const body = this.#doGroup();
          return {
            type: "loop",
            until: token.raw === "until",
            condition,
            body,
            redirects: this.#redirects(),
          };
        }
        case "if":
          return this.#if();
      }
    }
    return this.#simple();
  }

  #for(): Command {
    this.#at++;
    const name = this.#peek();
    if (name.type !== "word" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name.raw))
      throw new ShellSyntaxError(`syntax error: bad for loop variable`);
    this.#at++;
    let items: Word[] | undefined;
    this.#skipNewlines();
    if (this.#isWord("in")) {
      this.#at++;
      items = [];
      for (let t = this.#peek(); t.type === "word"; t = this.#peek()) {
        items.push(t.word);
        this.#at++;
      }
    }
    this.#skipSeparators();
    return { type: "for", variable: name.raw, items, body: this.#doGroup(), redirects: this.#redirects() };
  }

  #if(): Command {
    this.#at++;
    const branches: { condition: List; body: List }[] = [];
    let otherwise: List | undefined;
    for (;;) {
      const condition = this.list(new Set(["then"]));
      this.#expectWord("then");
      const body = this.list(new Set(["elif", "else", "fi"]));
      branches.push({ condition, body });
      if (this.#isWord("elif")) {
        this.#at++;
        continue;
      }
      if (this.#isWord("else")) {
        this.#at++;
        otherwise = this.list(new Set(["fi"]));
      }
      this.#expectWord("fi");
      return { type: "if", branches, otherwise, redirects: this.#redirects() };
    }
  }

  #doGroup(): List {
    this.#expectWord("do");
    const body = this.list(new Set(["done"]));
    this.#expectWord("done");
    return body;
  }

  #simple(): Command {
    const assignments: [string, Word][] = [];
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    for (;;) {
      const token = this.#peek();
      if (token.type === "word") {
        const assignment = words.length === 0 ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(token.raw) : null;
        if (assignment !== null) {
          const [value] = readWord(token.raw.slice(assignment[0].length), 0);
          assignments.push([assignment[1] as string, value]);
        } else words.push(token.word);
        this.#at++;
      } else if (token.type === "op" && isRedirect(token.op)) {
        redirects.push(this.#redirect(token.op));
      } else break;
    }
    if (words.length === 0 && assignments.length === 0 && redirects.length === 0)
      throw new ShellSyntaxError(`syntax error: unexpected "${describe(this.#peek())}"`);
    return { type: "simple", assignments, words, redirects };
  }

  #redirects(): Redirect[] {
    const redirects: Redirect[] = [];
    for (let t = this.#peek(); t.type === "op" && isRedirect(t.op); t = this.#peek())
      redirects.push(this.#redirect(t.op));
    return redirects;
  }

  #redirect(op: string): Redirect {
    this.#at++;
    const target = this.#peek();
    if (target.type !== "word") throw new ShellSyntaxError(`syntax error: unexpected "${describe(target)}"`);
    this.#at++;
    const explicit = /^[012]/.test(op) ? (Number(op[0]) as 0 | 1 | 2) : undefined;
    const bare = explicit === undefined ? op : op.slice(1);
    if (op === "&>")
      return { fd: 1, op: ">", target: [...target.word, { type: "text", text: "", quoted: true }] };
    return {
      fd: explicit ?? (bare === "<" ? 0 : 1),
      op: bare as Redirect["op"],
      target: target.word,
    };
  }

  #peek(): Token {
    return this.tokens[this.#at] as Token;
  }

  #isOp(op: string): boolean {
    const token = this.#peek();
    return token.type === "op" && token.op === op;
  }

  #isWord(raw: string): boolean {
    const token = this.#peek();
    return token.type === "word" && token.raw === raw;
  }

  #expectOp(op: string): void {
    if (!this.#isOp(op))
      throw new ShellSyntaxError(`syntax error: unexpected "${describe(this.#peek())}" (expecting "${op}")`);
    this.#at++;
  }

  #expectWord(raw: string): void {
    if (!this.#isWord(raw))
      throw new ShellSyntaxError(`syntax error: unexpected "${describe(this.#peek())}" (expecting "${raw}")`);
    this.#at++;
  }

  #skipSeparators(): void {
    while (this.#isOp(";") || this.#isOp("\n") || this.#isOp("&")) this.#at++;
  }

  #skipNewlines(): void {
    while (this.#isOp("\n")) this.#at++;
  }
}

function isRedirect(op: string): boolean {
  return /^[012]?(>>|>&|>|<)$/.test(op) || op === "&>";
}

function describe(token: Token): string {
  if (token.type === "end") return "end of file";
  if (token.type === "op") return token.op === "\n" ? "newline" : token.op;
  return token.raw;
}
