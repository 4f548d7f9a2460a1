import type { NodeFilesystem } from "../../node-filesystem.js";
import type { CommandIO, ShellState } from "./context.js";

// busybox's `tar` over the container's files, as `kubectl cp` drives it:
// `tar cf - <path>` streams a ustar archive out, `tar xmf - -C <dir>` reads
// one in (PAX and GNU long names included, as Go's archive/tar writes them).
// Regular files and directories only; no compression.

const block = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Options {
  mode: "c" | "x" | "t" | undefined;
  file: string | undefined;
  directory: string | undefined;
  verbose: boolean;
  operands: string[];
}

/** `tar` (busybox's options: `c`, `x`, `t`, `f FILE`, `C DIR`, `v`, `m`, `o`, and the GNU long forms kubectl sends). */
export function tar(args: string[], io: CommandIO, shell: ShellState): number {
  const options = parseOptions(args);
  if (typeof options === "string") {
    io.err(`tar: ${options}\n`);
    return 1;
  }
  if (options.file !== undefined && options.file !== "-") {
    io.err("tar: only '-' (standard input or output) is supported as the archive\n");
    return 1;
  }
  const base = options.directory === undefined ? shell.cwd : shell.absolute(options.directory);
  if (!shell.resolve(base).filesystem.isDirectory(shell.resolve(base).path)) {
    io.err(`tar: can't change directory to '${options.directory}': No such file or directory\n`);
    return 1;
  }
  if (options.mode === "c") return create(options, base, io, shell);
  return extract(options, base, io, shell);
}

function parseOptions(args: readonly string[]): Options | string {
  const options: Options = {
    mode: undefined,
    file: undefined,
    directory: undefined,
    verbose: false,
    operands: [],
  };
  const queue = [...args];
  // The first word may be bundled letters without a dash (`tar cf - x`).
  if (queue[0] !== undefined && !queue[0].startsWith("-")) queue[0] = `-${queue[0]}`;
  while (queue.length > 0) {
    const arg = queue.shift()!;
    if (arg === "--no-same-permissions" || arg === "--no-same-owner" || arg === "--touch") continue;
    if (arg.startsWith("--directory=")) {
      options.directory = arg.slice("--directory=".length);
      continue;
    }
    if (arg.startsWith("--file=")) {
      options.file = arg.slice("--file=".length);
      continue;
    }
    if (arg.startsWith("--")) return `unrecognized option '${arg}'`;
    if (!arg.startsWith("-") || arg === "-") {
      options.operands.push(arg);
      continue;
    }
    for (let i = 1; i < arg.length; i++) {
      const letter = arg[i]!;
      if (letter === "c" || letter === "x" || letter === "t") {
        if (options.mode !== undefined && options.mode !== letter)
          return "You may not specify more than one of -ctx";
        options.mode = letter;
      } else if (letter === "f" || letter === "C") {
        const value = arg.length > i + 1 ? arg.slice(i + 1) : queue.shift();
        if (value === undefined) return `option requires an argument -- '${letter}'`;
        if (letter === "f") options.file = value;
        else options.directory = value;
        break;
      } else if (letter === "v") options.verbose = true;
      else if (letter === "m" || letter === "o" || letter === "p") continue;
      else if (letter === "z" || letter === "j" || letter === "J")
        return "compressed archives are not supported here";
      else return `invalid option -- '${letter}'`;
    }
  }
  if (options.mode === undefined) return "need to specify one of -ctx";
  return options;
}

function create(options: Options, base: string, io: CommandIO, shell: ShellState): number {
  if (options.operands.length === 0) {
    io.err("tar: empty archive\n");
    return 1;
  }
  const parts: Uint8Array[] = [];
  let status = 0;
  let warned = false;
  const add = (name: string, path: string) => {
    const target = shell.resolve(path);
    const data = target.filesystem.readFile(target.path);
    if (data !== undefined) {
      parts.push(header(name, data.length, "0"), data, new Uint8Array(padding(data.length)));
      if (options.verbose) io.err(`${name}\n`);
      return;
    }
    const children = target.filesystem.list(target.path);
    if (children === undefined) {
      io.err(`tar: ${name}: No such file or directory\n`);
      status = 1;
      return;
    }
    const dirName = name.endsWith("/") ? name : `${name}/`;
    parts.push(header(dirName, 0, "5"));
    if (options.verbose) io.err(`${dirName}\n`);
    for (const child of children) add(`${dirName}${child}`, `${path.replace(/\/$/, "")}/${child}`);
  };
  for (const operand of options.operands) {
    let name = operand.replace(/\/+$/, "") || "/";
    if (name.startsWith("/")) {
      if (!warned) io.err("tar: removing leading '/' from member names\n");
      warned = true;
      name = name.replace(/^\/+/, "") || ".";
    }
    add(name, operand.startsWith("/") ? operand : `${base}/${operand}`);
  }
  parts.push(new Uint8Array(2 * block));
  const archive = Buffer.concat(parts);
  if (io.outBytes !== undefined) io.outBytes(archive);
  else io.out(decoder.decode(archive));
  return status;
}

function extract(options: Options, base: string, io: CommandIO, shell: ShellState): number {
  const input = io.stdin.bytes ?? encoder.encode(io.stdin.text.slice(io.stdin.at));
  io.stdin.at = io.stdin.text.length;
  let offset = 0;
  let longName: string | undefined;
  let status = 0;
  while (offset + block <= input.length) {
    const head = input.subarray(offset, offset + block);
    if (head.every((byte) => byte === 0)) break;
    if (!checksumMatches(head)) {
      io.err("tar: invalid tar header checksum\n");
      return 1;
    }
    const size = octal(head.subarray(124, 136));
    const type = String.fromCharCode(head[156] ?? 0);
    const body = input.subarray(offset + block, offset + block + size);
    offset += block + size + padding(size);
    if (type === "x" || type === "L") {
      longName = type === "L" ? cString(body) : paxPath(body);
      continue;
    }
    if (type === "g") continue;
    const prefix = cString(head.subarray(345, 500));
    const name =
      longName ??
      (prefix === "" ? cString(head.subarray(0, 100)) : `${prefix}/${cString(head.subarray(0, 100))}`);
    longName = undefined;
    if (options.mode === "t") {
      io.out(`${name}\n`);
      continue;
    }
    if (name.split("/").includes("..")) {
      io.err(`tar: skipping '${name}': a path with '..' leaves the target directory\n`);
      continue;
    }
    const path = `${base}/${name.replace(/^\/+/, "")}`;
    const target = shell.resolve(path);
    if (target.readOnly) {
      io.err(`tar: can't open '${name}': Read-only file system\n`);
      status = 1;
      continue;
    }
    if (type === "5") target.filesystem.mkdir(target.path);
    else if (type === "0" || type === "\0" || type === "7") writeFile(target.filesystem, target.path, body);
    else io.err(`tar: ${name}: unsupported entry type '${type}'\n`);
    if (options.verbose) io.out(`${name}\n`);
  }
  return status;
}

function writeFile(filesystem: NodeFilesystem, path: string, data: Uint8Array): void {
  if (filesystem.isDirectory(path)) filesystem.remove(path);
  filesystem.writeFile(path, new Uint8Array(data));
}

/**
 * The header of an entry: ustar (mode 644 or 755, owner root, mtime 0),
 * its name split into prefix and name where it is longer than 100 bytes,
 * or preceded by a GNU long-name entry (as busybox writes) where that does not fit.
 */
function header(name: string, size: number, type: "0" | "5" | "L"): Uint8Array {
  const bytes = encoder.encode(name);
  if (bytes.length <= 100) return ustarHeader(name, "", size, type);
  const cut = name.lastIndexOf("/", name.length - 2);
  const [prefix, base] = cut > 0 ? [name.slice(0, cut), name.slice(cut + 1)] : ["", name];
  if (cut > 0 && encoder.encode(prefix).length <= 155 && encoder.encode(base).length <= 100)
    return ustarHeader(base, prefix, size, type);
  const long = new Uint8Array([...bytes, 0]);
  return Buffer.concat([
    ustarHeader("././@LongLink", "", long.length, "L"),
    long,
    new Uint8Array(padding(long.length)),
    ustarHeader(name.slice(0, 100), "", size, type),
  ]);
}

function ustarHeader(base: string, prefix: string, size: number, type: "0" | "5" | "L"): Uint8Array {
  const head = new Uint8Array(block);
  const put = (offset: number, length: number, text: string) =>
    head.set(encoder.encode(text).subarray(0, length), offset);
  put(0, 100, base);
  put(100, 8, type === "5" ? "0000755\0" : "0000644\0");
  put(108, 8, "0000000\0");
  put(116, 8, "0000000\0");
  put(124, 12, `${size.toString(8).padStart(11, "0")}\0`);
  put(136, 12, "00000000000\0");
  put(156, 1, type);
  put(257, 6, "ustar\0");
  put(263, 2, "00");
  put(265, 32, "root");
  put(297, 32, "root");
  put(345, 155, prefix);
  head.fill(0x20, 148, 156);
  const sum = head.reduce((total, byte) => total + byte, 0);
  put(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return head;
}

function checksumMatches(head: Uint8Array): boolean {
  const stored = octal(head.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 0x20 : head[i]!;
  return sum === stored;
}

const padding = (size: number) => (block - (size % block)) % block;

function octal(field: Uint8Array): number {
  const text = cString(field).trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

function cString(field: Uint8Array): string {
  const end = field.indexOf(0);
  return decoder.decode(end === -1 ? field : field.subarray(0, end));
}

/** The `path` of a PAX extended header (`<length> path=<value>\n` records). */
function paxPath(body: Uint8Array): string | undefined {
  for (const record of decoder.decode(body).split("\n")) {
    const match = /^\d+ path=(.*)$/.exec(record);
    if (match) return match[1];
  }
  return undefined;
}
