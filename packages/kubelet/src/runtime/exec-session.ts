import { environmentOf, LineSplitter, type ProcessSpec, runProcess } from "./container-process.js";
import type { ExecOptions, ExecSession } from "./runtime.js";
import type { ShellHost } from "./shell/index.js";
import { Shell } from "./shell/index.js";
import { parseScript, ShellSyntaxError } from "./shell/parse.js";

// `kubectl exec` in a simulated container. A shell with no script and an
// open standard input (`kubectl exec -i … -- sh`) reads and runs one command
// at a time as the lines arrive, as sh does; under a tty it also echoes what
// is typed, edits the line (backspace, ^C, ^D) and prints busybox's prompt.
// Any other command with input waits for the input to end, then runs.

const encoder = new TextEncoder();
/** The line ^C leaves: not a command. */
const interrupted = "\x03";
const decoder = new TextDecoder();

/** Lines of input as they arrive; under a tty the line discipline of a terminal. */
class LineInput {
  readonly #lines: string[] = [];
  #partial = "";
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(
    readonly tty: boolean,
    readonly echo: (text: string) => void,
  ) {}

  feed(text: string): void {
    for (const char of text) {
      if (!this.tty) {
        if (char === "\n") this.#push();
        else this.#partial += char;
        continue;
      }
      if (char === "\r" || char === "\n") {
        this.echo("\r\n");
        this.#push();
      } else if (char === "\x7f" || char === "\b") {
        if (this.#partial.length > 0) {
          this.#partial = this.#partial.slice(0, -1);
          this.echo("\b \b");
        }
      } else if (char === "\x03") {
        // ^C drops the line (and whatever was pending): the shell prompts again.
        this.#partial = interrupted;
        this.echo("^C\r\n");
        this.#push();
      } else if (char === "\x04") {
        if (this.#partial === "") this.close();
      } else if (char >= " " || char === "\t") {
        this.#partial += char;
        this.echo(char);
      }
    }
  }

  close(): void {
    if (!this.tty && this.#partial !== "") this.#push();
    this.#closed = true;
    this.#wake?.();
  }

  /** The next whole line, or undefined once the input has ended. */
  async next(): Promise<string | undefined> {
    while (this.#lines.length === 0 && !this.#closed)
      await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#lines.shift();
  }

  #push(): void {
    this.#lines.push(this.#partial);
    this.#partial = "";
    this.#wake?.();
  }
}

/** Starts `argv` in a container (see the file comment); `host.signal` is the container's life. */
export function startExecSession(
  argv: readonly string[],
  spec: ProcessSpec,
  host: ShellHost,
  options: ExecOptions,
): ExecSession {
  const listeners: ((stream: "stdout" | "stderr", data: Uint8Array) => void)[] = [];
  const stop = new AbortController();
  const signal = host.signal === undefined ? stop.signal : AbortSignal.any([host.signal, stop.signal]);
  const emit = (stream: "stdout" | "stderr", data: Uint8Array) => {
    if (data.length === 0) return;
    const target = options.tty ? "stdout" : stream;
    // What is written before anyone listens (the client's channels are not open yet) waits for them.
    if (listeners.length === 0) early.push([target, data]);
    for (const listener of listeners) listener(target, data);
  };
  const output = (stream: "stdout" | "stderr", text: string) => {
    // A terminal turns newlines into carriage return plus newline.
    emit(stream, encoder.encode(options.tty ? text.replace(/\r?\n/g, "\r\n") : text));
  };
  const streamDecoder = new TextDecoder();
  const early: ["stdout" | "stderr", Uint8Array][] = [];
  const sessionHost: ShellHost = { ...host, signal };
  const [program = "", ...args] = argv;
  const name = program.slice(program.lastIndexOf("/") + 1);
  const interactive =
    options.stdin && (name === "sh" || name === "bash") && args.every((a) => a === "-i" || a === "-l");
  let input: LineInput | undefined;
  // A program reading all of its input gets it whole, as text and as the bytes sent (`tar`).
  const chunks: Uint8Array[] = [];
  let inputEnded: () => void = () => {};
  const ended = new Promise<void>((resolve) => (inputEnded = resolve));
  let run: Promise<number>;
  if (interactive) {
    input = new LineInput(options.tty, (text) => output("stdout", text));
    run = repl(new Shell(sessionHost, environmentOf(spec)), input, options.tty, output);
  } else if (options.stdin) {
    run = ended.then(() => {
      const bytes = Buffer.concat(chunks);
      return runProcess(argv, spec, sessionHost, output, decoder.decode(bytes), {
        stdin: bytes,
        write: (data) => emit("stdout", data),
      });
    });
  } else {
    run = runProcess(argv, spec, sessionHost, output, "", {
      stdin: new Uint8Array(),
      write: (data) => emit("stdout", data),
    });
  }
  const exited = run.catch(() => 137);
  return {
    write(data) {
      if (input !== undefined) input.feed(streamDecoder.decode(data, { stream: true }));
      else chunks.push(data);
    },
    closeStdin() {
      input?.close();
      inputEnded();
    },
    resize() {
      // The simulated programs draw nothing that depends on the terminal's size.
    },
    onOutput(listener) {
      listeners.push(listener);
      for (const [stream, data] of early.splice(0)) listener(stream, data);
    },
    exited,
    kill() {
      input?.close();
      inputEnded();
      stop.abort(new Error("the exec session was closed"));
    },
  };
}

/** Reads commands line by line (more lines while one is incomplete) and runs each. */
async function repl(
  shell: Shell,
  input: LineInput,
  tty: boolean,
  output: (stream: "stdout" | "stderr", text: string) => void,
): Promise<number> {
  const io = {
    stdin: { text: "", at: 0 },
    out: (text: string) => output("stdout", text),
    err: (text: string) => output("stderr", text),
  };
  let pending = "";
  for (;;) {
    if (tty) output("stdout", pending === "" ? `${shell.cwd} # ` : "> ");
    const line = await input.next();
    if (line === undefined) {
      if (tty) output("stdout", "\n");
      return shell.status;
    }
    if (line === interrupted) {
      pending = "";
      continue;
    }
    pending += `${line}\n`;
    if (incomplete(pending)) continue;
    const script = pending;
    pending = "";
    await shell.runScript(script, io);
    if (shell.exited) return shell.status;
  }
}

/** Whether a script is cut short (an open quote, `if` without `fi`, …): more lines are needed. */
function incomplete(script: string): boolean {
  try {
    parseScript(script);
    return false;
  } catch (error) {
    return error instanceof ShellSyntaxError && /unterminated|end of file/.test(error.message);
  }
}

/**
 * A client's view of a container's own process (`kubectl attach`): the
 * process's session when it keeps a standard input open, else its log lines
 * as they are written (and no input). `kill` only detaches. With `stdinOnce`
 * the process's input closes when this client closes its input or detaches
 * (so `kubectl run -i --rm -- sh` ends its shell), and stays closed.
 */
export function attachTo(
  session: ExecSession | undefined,
  followLog: (listener: (stream: "stdout" | "stderr", data: Uint8Array) => void) => () => void,
  containerEnd: AbortSignal,
  exitCode: () => number,
  stdinOnce = false,
): ExecSession {
  let detached = false;
  const listeners: ((stream: "stdout" | "stderr", data: Uint8Array) => void)[] = [];
  const relay = (stream: "stdout" | "stderr", data: Uint8Array) => {
    if (!detached) for (const listener of listeners) listener(stream, data);
  };
  let stopFollowing = () => {};
  let exited: Promise<number>;
  if (session !== undefined) {
    session.onOutput(relay);
    exited = session.exited;
  } else {
    stopFollowing = followLog(relay);
    exited = new Promise<number>((resolve) => {
      if (containerEnd.aborted) resolve(exitCode());
      else containerEnd.addEventListener("abort", () => resolve(exitCode()), { once: true });
    });
  }
  return {
    write(data) {
      if (!detached) session?.write(data);
    },
    closeStdin() {
      // Without stdinOnce the process's input stays open for the next client.
      if (stdinOnce) session?.closeStdin();
    },
    resize() {},
    onOutput(listener) {
      listeners.push(listener);
    },
    exited,
    kill() {
      detached = true;
      stopFollowing();
      if (stdinOnce) session?.closeStdin();
    },
  };
}

/**
 * Starts a container's own process, its output split into log lines
 * (`write`). With `stdin.open` (the container's `stdin: true`) it runs as a
 * session that keeps its input open for clients to attach to.
 */
export function startContainerProcess(
  argv: readonly string[],
  spec: ProcessSpec,
  host: ShellHost,
  stdin: { open: boolean; tty: boolean },
  write: (stream: "stdout" | "stderr", text: string) => void,
): { session: ExecSession | undefined; exited: Promise<number> } {
  const streams = {
    stdout: new LineSplitter((text) => write("stdout", text)),
    stderr: new LineSplitter((text) => write("stderr", text)),
  };
  const flushed = (code: number) => {
    streams.stdout.flush();
    streams.stderr.flush();
    return code;
  };
  if (stdin.open) {
    const session = startExecSession(argv, spec, host, { stdin: true, tty: stdin.tty });
    const decoder = new TextDecoder();
    session.onOutput((stream, data) => streams[stream].write(decoder.decode(data)));
    return { session, exited: session.exited.then(flushed) };
  }
  const exited = runProcess(argv, spec, host, (stream, text) => streams[stream].write(text)).then(flushed);
  return { session: undefined, exited };
}
