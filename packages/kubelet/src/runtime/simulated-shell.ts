import type { Clock } from "@reconcile/clock";
import type { NodeFilesystem } from "../node-filesystem.js";
import type { ExecResult } from "./runtime.js";

// The commands a simulated container runs (exec probes, lifecycle hooks, `kubectl exec`): `sh -c`
// scripts of `;`, `&&` and `||` over a few programs (true, false, sleep, echo, cat, ls, mkdir, rm,
// test…), reading and writing the container's filesystem.

/** A container path resolved to the filesystem that holds it. */
export interface ResolvedPath {
  filesystem: NodeFilesystem;
  path: string;
  readOnly: boolean;
}

export interface ShellContext {
  clock: Clock;
  resolve: (path: string) => ResolvedPath;
}

/** See `SimulatedRuntime.execSync`. */
export async function runShell(command: readonly string[], context: ShellContext): Promise<ExecResult> {
  const [program, flag, script] = command;
  if (
    (program === "sh" || program === "/bin/sh" || program === "bash" || program === "/bin/bash") &&
    flag === "-c"
  )
    return runScript(script ?? "", context);
  return runCommand([...command], context);
}

async function runScript(script: string, context: ShellContext): Promise<ExecResult> {
  let stdout = "";
  let stderr = "";
  let exitCode = 0;
  let skip: "&&" | "||" | undefined;
  for (const { words, next } of parseScript(script)) {
    const runs = skip === undefined || (skip === "&&" ? exitCode === 0 : exitCode !== 0);
    if (runs && words.length > 0) {
      if (words[0] === "exit") {
        return { exitCode: Number(words[1] ?? exitCode) || 0, stdout, stderr };
      }
      const result = await runCommand(words, context);
      stdout += result.stdout;
      stderr += result.stderr;
      exitCode = result.exitCode;
    }
    skip = next === ";" ? undefined : next;
  }
  return { exitCode, stdout, stderr };
}

/** Splits a script into commands (words, quotes honoured) and the operator after each. */
function parseScript(script: string): { words: string[]; next: ";" | "&&" | "||" | undefined }[] {
  const commands: { words: string[]; next: ";" | "&&" | "||" | undefined }[] = [];
  let words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < script.length; i++) {
    const char = script[i] as string;
    const pair = script.slice(i, i + 2);
    if (char === "'" || char === '"') {
      const end = script.indexOf(char, i + 1);
      word = (word ?? "") + script.slice(i + 1, end === -1 ? script.length : end);
      i = end === -1 ? script.length : end;
    } else if (pair === "&&" || pair === "||" || char === ";" || char === "\n") {
      if (word !== undefined) words.push(word);
      word = undefined;
      commands.push({ words, next: pair === "&&" || pair === "||" ? pair : ";" });
      words = [];
      if (pair === "&&" || pair === "||") i++;
    } else if (char === " " || char === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === ">") {
      if (word !== undefined) words.push(word);
      word = undefined;
      if (script[i + 1] === ">") {
        words.push(">>");
        i++;
      } else words.push(">");
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  commands.push({ words, next: undefined });
  return commands;
}

async function runCommand(argv: string[], context: ShellContext): Promise<ExecResult> {
  const ok = (stdout = ""): ExecResult => ({ exitCode: 0, stdout, stderr: "" });
  const fail = (stderr: string, exitCode = 1): ExecResult => ({
    exitCode,
    stdout: "",
    stderr: `${stderr}\n`,
  });
  const [name = "", ...args] = argv;
  const program = name.slice(name.lastIndexOf("/") + 1);
  switch (program) {
    case "true":
    case ":":
      return ok();
    case "false":
      return { exitCode: 1, stdout: "", stderr: "" };
    case "sleep": {
      const seconds = Number(args[0]);
      if (!(seconds >= 0)) return fail(`sleep: invalid time interval '${args[0] ?? ""}'`);
      await context.clock.sleep(seconds * 1000);
      return ok();
    }
    case "echo": {
      const redirect = args.findIndex((a) => a === ">" || a === ">>");
      const text = `${(redirect === -1 ? args : args.slice(0, redirect)).join(" ")}\n`;
      if (redirect === -1) return ok(text);
      const file = args[redirect + 1];
      if (file === undefined) return fail("sh: syntax error: unexpected newline", 2);
      const target = context.resolve(file);
      if (target.readOnly) return fail(`sh: can't create ${file}: Read-only file system`);
      const before =
        args[redirect] === ">>" ? new TextDecoder().decode(target.filesystem.readFile(target.path)) : "";
      target.filesystem.writeFile(target.path, before + text);
      return ok();
    }
    case "cat": {
      let stdout = "";
      for (const file of args) {
        const target = context.resolve(file);
        const data = target.filesystem.readFile(target.path);
        if (data === undefined)
          return {
            exitCode: 1,
            stdout,
            stderr: target.filesystem.isDirectory(target.path)
              ? `cat: read error: Is a directory\n`
              : `cat: can't open '${file}': No such file or directory\n`,
          };
        stdout += new TextDecoder().decode(data);
      }
      return ok(stdout);
    }
    case "ls": {
      const dir = args.find((a) => !a.startsWith("-")) ?? "/";
      const target = context.resolve(dir);
      if (target.filesystem.readFile(target.path) !== undefined) return ok(`${dir}\n`);
      const names = target.filesystem.list(target.path);
      if (names === undefined) return fail(`ls: ${dir}: No such file or directory`);
      return ok(names.map((n) => `${n}\n`).join(""));
    }
    case "test":
    case "[": {
      const operands = program === "[" ? args.slice(0, -1) : args;
      const [test, path] = operands;
      if (path === undefined) return { exitCode: 1, stdout: "", stderr: "" };
      const target = context.resolve(path);
      const holds =
        test === "-d"
          ? target.filesystem.isDirectory(target.path)
          : test === "-f"
            ? target.filesystem.readFile(target.path) !== undefined
            : target.filesystem.exists(target.path);
      return { exitCode: holds ? 0 : 1, stdout: "", stderr: "" };
    }
    case "touch":
    case "mkdir":
    case "rm": {
      for (const path of args.filter((a) => !a.startsWith("-"))) {
        const target = context.resolve(path);
        if (target.readOnly) return fail(`${program}: ${path}: Read-only file system`);
        if (program === "touch") {
          if (target.filesystem.readFile(target.path) === undefined)
            target.filesystem.writeFile(target.path, "");
        } else if (program === "mkdir") target.filesystem.mkdir(target.path);
        else if (target.filesystem.exists(target.path) || !args.includes("-f")) {
          if (!target.filesystem.exists(target.path))
            return fail(`rm: can't remove '${path}': No such file or directory`);
          target.filesystem.remove(target.path);
        }
      }
      return ok();
    }
    default:
      return fail(`sh: ${name}: not found`, 127);
  }
}
