import { evaluateArithmetic } from "./arithmetic.js";
import { builtins } from "./builtins.js";
import {
  type CommandIO,
  ExitRequest,
  type ResolvedPath,
  type ShellHost,
  type ShellState,
} from "./context.js";
import {
  type AndOr,
  type Command,
  type List,
  type Pipeline,
  parseScript,
  type Redirect,
  ShellSyntaxError,
  type Word,
} from "./parse.js";

// Runs parsed scripts. Nothing reaches the host: files are the container's
// (resolved through its mounts), time is the injected clock, output goes to
// the two writers, and a script yields to the event loop every so many
// commands so that `while true; do :; done` slows the node but never stops it.

/** Commands between two yields to the event loop. */
const yieldEvery = 512;

export class Shell implements ShellState {
  readonly vars: Map<string, string>;
  cwd = "/";
  status = 0;
  errexit = false;
  /** A script run by `runScript` ended with `exit` (an interactive shell stops then). */
  exited = false;
  #steps = 0;
  /** Depth of conditions (`if`, `while`, `&&` left sides), where `set -e` does not apply. */
  #conditional = 0;

  constructor(
    readonly host: ShellHost,
    vars: ReadonlyMap<string, string>,
  ) {
    this.vars = new Map(vars);
  }

  /** A child shell (`sh -c`, `( … )`, `$( … )`): a copy of the variables and directory. */
  child(): Shell {
    const shell = new Shell(this.host, this.vars);
    shell.cwd = this.cwd;
    shell.errexit = this.errexit;
    return shell;
  }

  /** Runs a script to its end; the exit status. A syntax error is status 2 with sh's message. */
  async runScript(script: string, io: CommandIO): Promise<number> {
    let list: List;
    try {
      list = parseScript(script);
    } catch (error) {
      if (!(error instanceof ShellSyntaxError)) throw error;
      io.err(`sh: ${error.message}\n`);
      return 2;
    }
    try {
      return await this.runList(list, io);
    } catch (error) {
      if (!(error instanceof ExitRequest)) throw error;
      this.exited = true;
      this.status = error.code;
      return error.code;
    }
  }

  async runList(list: List, io: CommandIO): Promise<number> {
    for (const item of list) this.status = await this.#andOr(item, io);
    return this.status;
  }

  /** A path as the container sees it, from the working directory. */
  absolute(path: string): string {
    return path.startsWith("/") ? path : `${this.cwd === "/" ? "" : this.cwd}/${path}`;
  }

  resolve(path: string): ResolvedPath {
    return this.host.resolve(this.absolute(path));
  }

  async #andOr(item: AndOr, io: CommandIO): Promise<number> {
    const guarded = item.rest.length > 0;
    if (guarded) this.#conditional++;
    let status: number;
    try {
      status = await this.#pipeline(item.first, io);
      for (const { op, pipeline } of item.rest) {
        if (op === "&&" ? status !== 0 : status === 0) continue;
        status = await this.#pipeline(pipeline, io);
      }
    } finally {
      if (guarded) this.#conditional--;
    }
    return status;
  }

  async #pipeline(pipeline: Pipeline, io: CommandIO): Promise<number> {
    if (pipeline.negated) this.#conditional++;
    let status = 0;
    try {
      // Stages run one after another, each reading what the one before wrote.
      let stdin = io.stdin;
      const last = pipeline.commands.length - 1;
      for (let i = 0; i <= last; i++) {
        let captured = "";
        const stage: CommandIO =
          i === last ? { ...io, stdin } : { stdin, out: (text) => (captured += text), err: io.err };
        status = await this.#command(pipeline.commands[i] as Command, stage);
        stdin = { text: captured, at: 0 };
      }
    } finally {
      if (pipeline.negated) this.#conditional--;
    }
    if (pipeline.negated) return status === 0 ? 1 : 0;
    if (status !== 0 && this.errexit && this.#conditional === 0) throw new ExitRequest(status);
    return status;
  }

  async #command(command: Command, io: CommandIO): Promise<number> {
    await this.#step();
    const redirected = await this.#redirect(command.redirects, io);
    if (typeof redirected === "number") return redirected;
    switch (command.type) {
      case "simple":
        return this.#simple(command, redirected);
      case "group":
        return command.subshell
          ? this.child().runList(command.body, redirected).catch(exitCode)
          : this.runList(command.body, redirected);
      case "if":
        for (const branch of command.branches) {
          if ((await this.#condition(branch.condition, redirected)) === 0)
            return this.runList(branch.body, redirected);
        }
        return command.otherwise === undefined ? 0 : this.runList(command.otherwise, redirected);
      case "loop": {
        let status = 0;
        for (;;) {
          const holds = (await this.#condition(command.condition, redirected)) === 0;
          if (holds === command.until) return status;
          status = await this.runList(command.body, redirected);
          await this.#step();
        }
      }
      case "for": {
        const items =
          command.items === undefined
            ? []
            : (await Promise.all(command.items.map((w) => this.expand(w)))).flat();
        let status = 0;
        for (const item of items) {
          this.vars.set(command.variable, item);
          status = await this.runList(command.body, redirected);
        }
        return status;
      }
    }
  }

  async #condition(list: List, io: CommandIO): Promise<number> {
    this.#conditional++;
    try {
      return await this.runList(list, io);
    } finally {
      this.#conditional--;
    }
  }

  async #simple(command: Extract<Command, { type: "simple" }>, io: CommandIO): Promise<number> {
    const argv: string[] = [];
    for (const word of command.words) argv.push(...(await this.expand(word)));
    const values: [string, string][] = [];
    for (const [name, value] of command.assignments)
      values.push([name, (await this.expand(value, false)).join("")]);
    if (argv.length === 0) {
      for (const [name, value] of values) this.vars.set(name, value);
      return this.status;
    }
    // `X=1 cmd`: the assignments hold for that command only.
    const saved = values.map(([name]) => [name, this.vars.get(name)] as const);
    for (const [name, value] of values) this.vars.set(name, value);
    try {
      return await this.invoke(argv, io);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) this.vars.delete(name);
        else this.vars.set(name, value);
      }
    }
  }

  /** Runs one command line already split into words. */
  async invoke(argv: readonly string[], io: CommandIO): Promise<number> {
    const [name = "", ...args] = argv;
    const program = builtins.get(name.slice(name.lastIndexOf("/") + 1));
    if (program === undefined) {
      io.err(`sh: ${name}: not found\n`);
      return 127;
    }
    return program(args, io, this);
  }

  /** A word's fields: unquoted expansions split on blanks, unquoted empty ones dropped. */
  async expand(word: Word, split = true): Promise<string[]> {
    const fields: string[] = [];
    let current = "";
    let started = false;
    for (const part of word) {
      let value: string;
      if (part.type === "text") value = part.text;
      else if (part.type === "param") value = this.#param(part.name);
      else if (part.type === "arith") {
        const expression = (await this.expand(part.expression, false)).join("");
        value = String(evaluateArithmetic(expression, this.vars));
      } else value = await this.#substitute(part.list);
      if (part.quoted || !split || part.type === "text") {
        current += value;
        started ||= part.quoted || value !== "";
        continue;
      }
      const pieces = value.split(/[ \t\n]+/);
      for (let i = 0; i < pieces.length; i++) {
        if (i > 0 && started) {
          fields.push(current);
          current = "";
          started = false;
        }
        current += pieces[i];
        started ||= pieces[i] !== "";
      }
    }
    if (started) fields.push(current);
    return fields;
  }

  #param(name: string): string {
    if (name === "?") return String(this.status);
    if (name === "$") return "1";
    if (name === "#") return "0";
    const colon = name.indexOf(":-");
    if (colon !== -1) {
      const value = this.vars.get(name.slice(0, colon));
      return value === undefined || value === "" ? name.slice(colon + 2) : value;
    }
    return this.vars.get(name) ?? "";
  }

  async #substitute(list: List): Promise<string> {
    let captured = "";
    const child = this.child();
    this.status = await child
      .runList(list, { stdin: { text: "", at: 0 }, out: (text) => (captured += text), err: () => {} })
      .catch(exitCode);
    return captured.replace(/\n+$/, "");
  }

  /** The command's streams with its redirections applied; a number is a failure's status. */
  async #redirect(redirects: readonly Redirect[], io: CommandIO): Promise<CommandIO | number> {
    if (redirects.length === 0) return io;
    const streams: CommandIO = { ...io };
    for (const redirect of redirects) {
      const target = (await this.expand(redirect.target, false)).join("");
      if (redirect.op === ">&") {
        const to = target === "2" ? io.err : target === "1" ? io.out : undefined;
        if (to === undefined) {
          io.err(`sh: ${target}: bad file descriptor\n`);
          return 1;
        }
        if (redirect.fd === 2) streams.err = to === io.out ? streams.out : to;
        else streams.out = to === io.err ? streams.err : to;
        continue;
      }
      if (target === "/dev/null") {
        if (redirect.op === "<") streams.stdin = { text: "", at: 0 };
        else if (redirect.fd === 2) streams.err = () => {};
        else streams.out = () => {};
        continue;
      }
      const file = this.resolve(target);
      if (redirect.op === "<") {
        const data = file.filesystem.readFile(file.path);
        if (data === undefined) {
          io.err(`sh: can't open '${target}': No such file or directory\n`);
          return 1;
        }
        streams.stdin = { text: new TextDecoder().decode(data), at: 0 };
        continue;
      }
      if (file.readOnly) {
        io.err(`sh: can't create ${target}: Read-only file system\n`);
        return 1;
      }
      if (file.filesystem.isDirectory(file.path)) {
        io.err(`sh: can't create ${target}: Is a directory\n`);
        return 1;
      }
      if (redirect.op === ">" || file.filesystem.readFile(file.path) === undefined)
        file.filesystem.writeFile(file.path, "");
      const append = (text: string) => {
        const before = file.filesystem.readFile(file.path) ?? new Uint8Array();
        file.filesystem.writeFile(file.path, new TextDecoder().decode(before) + text);
      };
      if (redirect.fd === 2) streams.err = append;
      else streams.out = append;
    }
    return streams;
  }

  /** Stops a killed script; yields to the event loop now and then. */
  async #step(): Promise<void> {
    this.host.signal?.throwIfAborted();
    if (++this.#steps % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

function exitCode(error: unknown): number {
  if (error instanceof ExitRequest) return error.code;
  throw error;
}
