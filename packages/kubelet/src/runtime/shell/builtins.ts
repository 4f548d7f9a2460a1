import { type CommandIO, ExitRequest, type Program, type ShellState, sleepOn } from "./context.js";
import { fileCommands } from "./file-commands.js";

// The programs of the simulated containers' shell, with busybox's messages
// and exit statuses.

const decoder = new TextDecoder();

/** `sleep` operands: seconds with an optional s/m/h/d suffix, or `inf`/`infinity`. */
function sleepMs(operand: string): number | undefined {
  if (operand === "inf" || operand === "infinity") return Number.POSITIVE_INFINITY;
  const match = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(operand);
  if (match === null) return undefined;
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit * 1000;
}

/** `echo` of busybox: `-n` drops the newline, `-e` reads backslash escapes. */
function echo(args: string[], io: CommandIO): number {
  let newline = true;
  let escapes = false;
  while (args.length > 0 && /^-[neE]+$/.test(args[0] as string)) {
    const flags = args.shift() as string;
    if (flags.includes("n")) newline = false;
    if (flags.includes("e")) escapes = true;
    if (flags.includes("E")) escapes = false;
  }
  const text = args.join(" ");
  io.out((escapes ? backslashEscapes(text) : text) + (newline ? "\n" : ""));
  return 0;
}

function backslashEscapes(text: string): string {
  return text.replace(/\\([\\abfnrtv0]|x[0-9a-fA-F]{1,2})/g, (_, code: string) => {
    const simple: Record<string, string> = {
      "\\": "\\",
      a: "\x07",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
      v: "\v",
      "0": "\0",
    };
    return simple[code] ?? String.fromCharCode(Number.parseInt(code.slice(1), 16));
  });
}

/** `printf FORMAT ARGS…`: %s %d %i %x %o %c %%, widths, the format reused while arguments remain. */
function printf(args: string[], io: CommandIO): number {
  const [format, ...rest] = args;
  if (format === undefined) {
    io.err("printf: usage: printf FORMAT [ARGUMENT]...\n");
    return 1;
  }
  let output = "";
  let status = 0;
  do {
    let used = false;
    output += backslashEscapes(format).replace(
      /%(-?\d*)(?:\.(\d+))?([sdixoc%])/g,
      (_, width: string, precision: string | undefined, conversion: string) => {
        if (conversion === "%") return "%";
        used = true;
        const arg = rest.shift() ?? "";
        let value: string;
        if (conversion === "s" || conversion === "c") {
          value =
            conversion === "c"
              ? arg.slice(0, 1)
              : precision === undefined
                ? arg
                : arg.slice(0, Number(precision));
        } else {
          const number = arg === "" ? 0 : Number(arg);
          if (!Number.isInteger(number)) {
            io.err(`printf: invalid number '${arg}'\n`);
            status = 1;
          }
          const int = Math.trunc(number) || 0;
          value = conversion === "x" ? int.toString(16) : conversion === "o" ? int.toString(8) : String(int);
        }
        const pad = Number(width.replace("-", "")) || 0;
        return width.startsWith("-")
          ? value.padEnd(pad)
          : value.padStart(pad, width.startsWith("0") && conversion !== "s" ? "0" : " ");
      },
    );
    if (!used) break;
  } while (rest.length > 0);
  io.out(output);
  return status;
}

/** `date` as busybox prints it in UTC: `Sat Nov 28 13:57:21 UTC 2026`, or `+FORMAT`. */
function date(args: string[], io: CommandIO, shell: ShellState): number {
  const now = new Date(shell.host.clock.now());
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n: number) => String(n).padStart(2, "0");
  const fields: Record<string, string> = {
    a: days[now.getUTCDay()] as string,
    b: months[now.getUTCMonth()] as string,
    d: two(now.getUTCDate()),
    e: String(now.getUTCDate()).padStart(2, " "),
    H: two(now.getUTCHours()),
    M: two(now.getUTCMinutes()),
    S: two(now.getUTCSeconds()),
    Y: String(now.getUTCFullYear()),
    m: two(now.getUTCMonth() + 1),
    s: String(Math.floor(now.getTime() / 1000)),
    Z: "UTC",
    "%": "%",
  };
  fields.T = `${fields.H}:${fields.M}:${fields.S}`;
  fields.F = `${fields.Y}-${fields.m}-${fields.d}`;
  const format = args.find((a) => a.startsWith("+"))?.slice(1) ?? "%a %b %e %T %Z %Y";
  io.out(`${format.replace(/%(.)/g, (whole, key: string) => fields[key] ?? whole)}\n`);
  return 0;
}

function seq(args: string[], io: CommandIO): number {
  const numbers = args.map(Number);
  if (numbers.length === 0 || numbers.length > 3 || numbers.some((n) => !Number.isFinite(n))) {
    io.err(`seq: invalid number '${args.find((a) => !Number.isFinite(Number(a))) ?? ""}'\n`);
    return 1;
  }
  const [first, step, last] =
    numbers.length === 1 ? [1, 1, numbers[0]] : numbers.length === 2 ? [numbers[0], 1, numbers[1]] : numbers;
  let output = "";
  for (let n = first as number, i = 0; step! > 0 ? n <= last! : n >= last!; n += step!, i++) {
    if (step === 0 || i >= 1_000_000) break;
    output += `${n}\n`;
  }
  io.out(output);
  return 0;
}

/** `test`/`[`: file tests, string and integer comparisons, `!`, one level of -a/-o. */
function test(args: string[], io: CommandIO, shell: ShellState): number {
  const holds = (operands: string[]): boolean => {
    if (operands[0] === "!") return !holds(operands.slice(1));
    const and = operands.indexOf("-a");
    if (and > 0) return holds(operands.slice(0, and)) && holds(operands.slice(and + 1));
    const or = operands.indexOf("-o");
    if (or > 0) return holds(operands.slice(0, or)) || holds(operands.slice(or + 1));
    if (operands.length === 0) return false;
    if (operands.length === 1) return operands[0] !== "";
    if (operands.length === 2) {
      const [op, operand = ""] = operands;
      if (op === "-z") return operand === "";
      if (op === "-n") return operand !== "";
      const file = shell.resolve(operand);
      if (op === "-d") return file.filesystem.isDirectory(file.path);
      if (op === "-f" || op === "-r" || op === "-s")
        return (
          file.filesystem.readFile(file.path) !== undefined &&
          (op !== "-s" || (file.filesystem.readFile(file.path)?.length ?? 0) > 0)
        );
      if (op === "-e") return file.filesystem.exists(file.path);
      throw new Error(`${op}: unary operator expected`);
    }
    const [a = "", op, b = ""] = operands;
    const integers = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    if (op !== undefined && integers.includes(op)) {
      const [x, y] = [Number(a), Number(b)];
      if (!Number.isInteger(x) || !Number.isInteger(y))
        throw new Error(`invalid number '${Number.isInteger(x) ? b : a}'`);
      return { "-eq": x === y, "-ne": x !== y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y }[
        op
      ] as boolean;
    }
    if (op === "=" || op === "==") return a === b;
    if (op === "!=") return a !== b;
    throw new Error(`${op}: binary operator expected`);
  };
  try {
    return holds(args) ? 0 : 1;
  } catch (error) {
    io.err(`sh: ${(error as Error).message}\n`);
    return 2;
  }
}

/** `read NAME…`: the next line of standard input into the names (the last takes the rest). */
function read(args: string[], io: CommandIO, shell: ShellState): number {
  const names = args.filter((a) => !a.startsWith("-"));
  const { stdin } = io;
  if (stdin.at >= stdin.text.length) return 1;
  const end = stdin.text.indexOf("\n", stdin.at);
  const line = stdin.text.slice(stdin.at, end === -1 ? undefined : end);
  stdin.at = end === -1 ? stdin.text.length : end + 1;
  const words = line.trim().split(/[ \t]+/);
  const targets = names.length === 0 ? ["REPLY"] : names;
  targets.forEach((name, i) => {
    shell.vars.set(name, i === targets.length - 1 ? words.slice(i).join(" ") : (words[i] ?? ""));
  });
  return 0;
}

/** `sh -c SCRIPT`, `sh FILE`, or `sh` reading its script from standard input. */
async function sh(args: string[], io: CommandIO, shell: ShellState): Promise<number> {
  const child = shell.child();
  const options = args.filter((a) => /^-[a-z]+$/.test(a) && a !== "-c");
  if (options.some((o) => o.includes("e"))) child.errexit = true;
  const c = args.indexOf("-c");
  if (c !== -1) return child.runScript(args[c + 1] ?? "", io);
  const file = args.find((a) => !a.startsWith("-"));
  if (file === undefined) {
    const script = io.stdin.text.slice(io.stdin.at);
    io.stdin.at = io.stdin.text.length;
    return child.runScript(script, io);
  }
  const target = shell.resolve(file);
  const data = target.filesystem.readFile(target.path);
  if (data === undefined) {
    io.err(`sh: can't open '${file}': No such file or directory\n`);
    return 2;
  }
  return child.runScript(decoder.decode(data), io);
}

export const builtins: ReadonlyMap<string, Program> = new Map<string, Program>([
  ["true", () => 0],
  [":", () => 0],
  ["false", () => 1],
  ["echo", echo],
  ["printf", printf],
  ["date", date],
  ["seq", seq],
  ["test", test],
  [
    "[",
    (args, io, shell) => {
      if (args[args.length - 1] !== "]") {
        io.err("sh: [: missing ]\n");
        return 2;
      }
      return test(args.slice(0, -1), io, shell);
    },
  ],
  ["read", read],
  ["sh", sh],
  ["bash", sh],
  [
    "exit",
    (args, io, shell) => {
      const code = args[0] === undefined ? shell.status : Number(args[0]);
      if (!Number.isInteger(code)) {
        io.err(`sh: exit: Illegal number: ${args[0]}\n`);
        throw new ExitRequest(2);
      }
      throw new ExitRequest(((code % 256) + 256) % 256);
    },
  ],
  [
    "sleep",
    async (args, io, shell) => {
      if (args.length === 0) {
        io.err("sleep: missing operand\n");
        return 1;
      }
      let total = 0;
      for (const arg of args) {
        const ms = sleepMs(arg);
        if (ms === undefined) {
          io.err(`sleep: invalid number '${arg}'\n`);
          return 1;
        }
        total += ms;
      }
      await sleepOn(shell.host, total);
      return 0;
    },
  ],
  [
    "hostname",
    (_, io, shell) => {
      io.out(`${shell.host.hostname}\n`);
      return 0;
    },
  ],
  [
    "whoami",
    (_, io) => {
      io.out("root\n");
      return 0;
    },
  ],
  [
    "env",
    (args, io, shell) => {
      if (args.length > 0) return shell.invoke(args, io);
      io.out([...shell.vars].map(([k, v]) => `${k}=${v}\n`).join(""));
      return 0;
    },
  ],
  [
    "printenv",
    (args, io, shell): number => {
      if (args.length === 0) {
        io.out([...shell.vars].map(([k, v]) => `${k}=${v}\n`).join(""));
        return 0;
      }
      let status = 0;
      for (const name of args) {
        const value = shell.vars.get(name);
        if (value === undefined) status = 1;
        else io.out(`${value}\n`);
      }
      return status;
    },
  ],
  [
    "export",
    (args, _, shell) => {
      for (const arg of args) {
        const eq = arg.indexOf("=");
        if (eq > 0) shell.vars.set(arg.slice(0, eq), arg.slice(eq + 1));
      }
      return 0;
    },
  ],
  [
    "unset",
    (args, _, shell) => {
      for (const name of args) shell.vars.delete(name);
      return 0;
    },
  ],
  [
    "set",
    (args, _, shell) => {
      for (const arg of args) {
        if (/^-[a-z]*e/.test(arg)) shell.errexit = true;
        if (/^\+[a-z]*e/.test(arg)) shell.errexit = false;
      }
      return 0;
    },
  ],
  // Signals reach the process through the runtime's termination behaviour; a trap changes nothing.
  ["trap", () => 0],
  [
    "uptime",
    (_, io, shell) => {
      const now = new Date(shell.host.clock.now());
      const time = [now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()]
        .map((n) => String(n).padStart(2, "0"))
        .join(":");
      io.out(` ${time} up 0 min,  0 users,  load average: 0.00, 0.00, 0.00\n`);
      return 0;
    },
  ],
  ...fileCommands,
]);
