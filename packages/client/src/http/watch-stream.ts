import { setImmediate as nextMacrotask } from "node:timers/promises";
import { type KubeObject, type Status, StatusError, type WatchEvent } from "@reconcile/api";

export interface WatchStreamOptions {
  /** A longer line fails the watch instead of growing memory without bound. Default 256 MiB. */
  maxLineBytes?: number | undefined;
  /** Events decoded between yields to the event loop. Default 256. */
  eventsPerTurn?: number | undefined;
}

const watchEventTypes = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/**
 * Decodes a newline-delimited JSON watch stream into events. Lines may be
 * split anywhere across chunks (inside a multi-byte character too); each
 * chunk is scanned once, so a long line costs linear time. Between batches of
 * events it yields to the event loop, so a fast stream never starves timers
 * and I/O. A line that is not a watch event ends the iteration with a
 * `StatusError`; an `ERROR` event is handed on with its `Status`.
 */
export async function* parseWatchStream<T extends KubeObject = KubeObject>(
  chunks: AsyncIterable<Uint8Array | string>,
  options: WatchStreamOptions = {},
): AsyncGenerator<WatchEvent<T>> {
  const maxLineBytes = options.maxLineBytes ?? 256 * 1024 * 1024;
  const eventsPerTurn = options.eventsPerTurn ?? 256;
  const splitter = new LineSplitter(maxLineBytes);
  let sinceYield = 0;
  for await (const chunk of chunks) {
    for (const line of splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) {
      const event = decodeWatchLine<T>(line);
      if (event === undefined) continue;
      yield event;
      if (++sinceYield >= eventsPerTurn) {
        sinceYield = 0;
        await nextMacrotask();
      }
    }
  }
  const rest = splitter.end();
  if (rest !== undefined) {
    const event = decodeWatchLine<T>(rest);
    if (event !== undefined) yield event;
  }
}

/** Decodes one line; blank lines give undefined. */
export function decodeWatchLine<T extends KubeObject>(line: Uint8Array): WatchEvent<T> | undefined {
  const text = Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString("utf8").trim();
  if (text === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw decodeError(`the watch stream sent a line that is not JSON (${(error as Error).message})`, error);
  }
  if (parsed === null || typeof parsed !== "object")
    throw decodeError("the watch stream sent a line that is not an object");
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (typeof type !== "string" || !watchEventTypes.has(type)) {
    throw decodeError(`the watch stream sent an event of unknown type ${JSON.stringify(type)}`);
  }
  if (object === null || typeof object !== "object") {
    throw decodeError(`the watch stream sent a ${type} event without an object`);
  }
  if (type === "ERROR") return { type, object: new StatusError(object as Status).status };
  return { type: type as "ADDED", object: object as T };
}

function decodeError(message: string, cause?: unknown): StatusError {
  return new StatusError(
    {
      code: 500,
      reason: "InternalError",
      message: `unable to decode an event from the watch stream: ${message}`,
    },
    { cause },
  );
}

/** Splits a byte stream at `\n`, holding the unfinished line as a list of pieces. */
class LineSplitter {
  private pieces: Uint8Array[] = [];
  private pendingBytes = 0;
  private readonly maxLineBytes: number;

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const lines: Uint8Array[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (this.pieces.length === 0) lines.push(piece);
      else {
        this.pieces.push(piece);
        lines.push(Buffer.concat(this.pieces, this.pendingBytes + piece.length));
        this.pieces = [];
        this.pendingBytes = 0;
      }
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxLineBytes) {
        throw decodeError(`a line is longer than ${this.maxLineBytes} bytes`);
      }
      this.pieces.push(rest);
    }
    return lines;
  }

  end(): Uint8Array | undefined {
    if (this.pieces.length === 0) return undefined;
    const line = Buffer.concat(this.pieces, this.pendingBytes);
    this.pieces = [];
    this.pendingBytes = 0;
    return line;
  }
}
