import { type CommandIO, type Program, type ShellState, sleepOn } from "./context.js";
import { tar } from "./tar.js";

// The shell's commands over the container's files and text: cat, ls, touch,
// mkdir, rm, cd, pwd, wc, head, tail, grep (fixed strings), basename,
// dirname, and tar (in tar.ts). Paths resolve through the container's mounts; read-only mounts
// refuse writes.

const decoder = new TextDecoder();

/** Operands (not options) of a command line. */
const operands = (args: readonly string[]) => args.filter((a) => !a.startsWith("-") || a === "-");

/** The text of the named files, or standard input when none is named. */
function inputs(
  program: string,
  files: readonly string[],
  io: CommandIO,
  shell: ShellState,
): string[] | number {
  if (files.length === 0 || (files.length === 1 && files[0] === "-")) {
    const text = io.stdin.text.slice(io.stdin.at);
    io.stdin.at = io.stdin.text.length;
    return [text];
  }
  const texts: string[] = [];
  for (const file of files) {
    const target = shell.resolve(file);
    const data = target.filesystem.readFile(target.path);
    if (data === undefined) {
      io.err(
        target.filesystem.isDirectory(target.path)
          ? `${program}: read error: Is a directory\n`
          : `${program}: can't open '${file}': No such file or directory\n`,
      );
      return 1;
    }
    texts.push(decoder.decode(data));
  }
  return texts;
}

const lines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/** `-n N`, `-N` or `-nN`: the count a head/tail was asked for. */
function count(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-n") return Number(args[i + 1]) || 0;
    const match = /^-n?(\d+)$/.exec(arg);
    if (match) return Number(match[1]);
  }
  return 10;
}

/** Arguments of head/tail without `-n N`. */
function files(args: readonly string[]): string[] {
  const result: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-n") i++;
    else if (!(args[i] as string).startsWith("-")) result.push(args[i] as string);
  }
  return result;
}

function writeFiles(
  program: "touch" | "mkdir" | "rm",
  args: string[],
  io: CommandIO,
  shell: ShellState,
): number {
  let status = 0;
  for (const path of operands(args)) {
    const target = shell.resolve(path);
    if (target.readOnly) {
      io.err(`${program}: ${path}: Read-only file system\n`);
      status = 1;
    } else if (program === "touch") {
      if (target.filesystem.readFile(target.path) === undefined) target.filesystem.writeFile(target.path, "");
    } else if (program === "mkdir") {
      if (target.filesystem.exists(target.path) && !args.includes("-p")) {
        io.err(`mkdir: can't create directory '${path}': File exists\n`);
        status = 1;
      } else target.filesystem.mkdir(target.path);
    } else if (!target.filesystem.exists(target.path)) {
      if (!args.some((a) => /^-[a-z]*f/.test(a))) {
        io.err(`rm: can't remove '${path}': No such file or directory\n`);
        status = 1;
      }
    } else if (target.filesystem.isDirectory(target.path) && !args.some((a) => /^-[a-z]*r/i.test(a))) {
      io.err(`rm: '${path}' is a directory\n`);
      status = 1;
    } else target.filesystem.remove(target.path);
  }
  return status;
}

export const fileCommands: [string, Program][] = [
  ["tar", tar],
  [
    "cat",
    (args, io, shell) => {
      const texts = inputs("cat", operands(args), io, shell);
      if (typeof texts === "number") return texts;
      io.out(texts.join(""));
      return 0;
    },
  ],
  [
    "ls",
    (args, io, shell) => {
      const dirs = operands(args);
      let status = 0;
      for (const dir of dirs.length === 0 ? [shell.cwd] : dirs) {
        const target = shell.resolve(dir);
        if (target.filesystem.readFile(target.path) !== undefined) io.out(`${dir}\n`);
        else {
          const names = target.filesystem.list(target.path);
          if (names === undefined) {
            io.err(`ls: ${dir}: No such file or directory\n`);
            status = 1;
          } else io.out(names.map((n) => `${n}\n`).join(""));
        }
      }
      return status;
    },
  ],
  ["touch", (args, io, shell) => writeFiles("touch", args, io, shell)],
  ["mkdir", (args, io, shell) => writeFiles("mkdir", args, io, shell)],
  ["rm", (args, io, shell) => writeFiles("rm", args, io, shell)],
  [
    "cd",
    (args, io, shell) => {
      const path = shell.absolute(args[0] ?? "/root");
      const target = shell.host.resolve(path);
      if (!target.filesystem.isDirectory(target.path) && path !== "/") {
        io.err(`sh: cd: can't cd to ${args[0]}: No such file or directory\n`);
        return 2;
      }
      shell.cwd = path.replace(/\/+$/, "") || "/";
      return 0;
    },
  ],
  [
    "pwd",
    (_, io, shell) => {
      io.out(`${shell.cwd}\n`);
      return 0;
    },
  ],
  [
    "wc",
    (args, io, shell) => {
      const texts = inputs("wc", operands(args), io, shell);
      if (typeof texts === "number") return texts;
      const text = texts.join("");
      const counts = {
        l: (text.match(/\n/g) ?? []).length,
        w: text.split(/\s+/).filter(Boolean).length,
        c: new TextEncoder().encode(text).length,
      };
      const asked = (["l", "w", "c"] as const).filter((f) =>
        args.some((a) => /^-[lwc]+$/.test(a) && a.includes(f)),
      );
      const shown = asked.length === 0 ? (["l", "w", "c"] as const) : asked;
      io.out(`${shown.map((f) => String(counts[f]).padStart(shown.length === 1 ? 0 : 7)).join(" ")}\n`);
      return 0;
    },
  ],
  [
    "head",
    (args, io, shell) => {
      const texts = inputs("head", files(args), io, shell);
      if (typeof texts === "number") return texts;
      io.out(
        lines(texts.join(""))
          .slice(0, count(args))
          .map((l) => `${l}\n`)
          .join(""),
      );
      return 0;
    },
  ],
  [
    "tail",
    async (args, io, shell) => {
      const texts = inputs("tail", files(args), io, shell);
      if (typeof texts === "number") return texts;
      const all = lines(texts.join(""));
      const n = count(args);
      io.out(
        all
          .slice(Math.max(0, all.length - n))
          .map((l) => `${l}\n`)
          .join(""),
      );
      // `tail -f`: follows the file until the process is killed.
      if (args.includes("-f") || args.includes("-F")) await sleepOn(shell.host, Number.POSITIVE_INFINITY);
      return 0;
    },
  ],
  [
    "grep",
    (args, io, shell) => {
      // Patterns are matched as fixed strings: no user-supplied regular expression runs here.
      const flags = args.filter((a) => /^-[a-zA-Z]+$/.test(a)).join("");
      const [pattern, ...rest] = operands(args);
      if (pattern === undefined) {
        io.err("Usage: grep [-ivcq] PATTERN [FILE]...\n");
        return 2;
      }
      const texts = inputs("grep", rest, io, shell);
      if (typeof texts === "number") return 2;
      const fold = (s: string) => (flags.includes("i") ? s.toLowerCase() : s);
      const needle = fold(pattern);
      const matched = lines(texts.join("")).filter((l) => fold(l).includes(needle) !== flags.includes("v"));
      if (flags.includes("c")) io.out(`${matched.length}\n`);
      else if (!flags.includes("q")) io.out(matched.map((l) => `${l}\n`).join(""));
      return matched.length > 0 ? 0 : 1;
    },
  ],
  [
    "basename",
    (args, io) => {
      const [path = "", suffix] = args;
      let base = path.replace(/\/+$/, "").split("/").pop() || "/";
      if (suffix !== undefined && base.endsWith(suffix) && base !== suffix)
        base = base.slice(0, -suffix.length);
      io.out(`${base}\n`);
      return 0;
    },
  ],
  [
    "dirname",
    (args, io) => {
      const path = (args[0] ?? "").replace(/\/+$/, "");
      const slash = path.lastIndexOf("/");
      io.out(`${slash === -1 ? "." : slash === 0 ? "/" : path.slice(0, slash)}\n`);
      return 0;
    },
  ],
];
