import { isInternalError, StatusError } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { parseWatchStream } from "./watch-stream.js";

async function* chunksOf(...chunks: (string | Uint8Array)[]) {
  for (const chunk of chunks) yield chunk;
}

async function collect(stream: AsyncIterable<unknown>) {
  const out: unknown[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const added = (name: string) => JSON.stringify({ type: "ADDED", object: { metadata: { name } } });

describe("parseWatchStream", () => {
  it("decodes events whose lines are split anywhere across chunks", async () => {
    const text = `${added("a")}\n${added("b")}\n${added("c")}\n`;
    const cuts = [0, 5, 6, 30, 31, 32, text.length - 1, text.length];
    const chunks = cuts.slice(1).map((end, i) => text.slice(cuts[i], end));
    expect(await collect(parseWatchStream(chunksOf(...chunks)))).toEqual([
      { type: "ADDED", object: { metadata: { name: "a" } } },
      { type: "ADDED", object: { metadata: { name: "b" } } },
      { type: "ADDED", object: { metadata: { name: "c" } } },
    ]);
  });

  it("keeps a multi-byte character intact when a chunk boundary splits it", async () => {
    const bytes = Buffer.from(`${added("café-☃")}\n`);
    const at = bytes.indexOf(Buffer.from("☃")) + 1;
    const events = await collect(parseWatchStream(chunksOf(bytes.subarray(0, at), bytes.subarray(at))));
    expect(events).toEqual([{ type: "ADDED", object: { metadata: { name: "café-☃" } } }]);
  });

  it("decodes a last line without a newline and skips blank lines", async () => {
    const events = await collect(parseWatchStream(chunksOf(`\n${added("a")}\n\n`, added("b"))));
    expect(events).toHaveLength(2);
  });

  it("hands on an ERROR event with a complete Status", async () => {
    const error = {
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 2 (30)" },
    };
    const [event] = (await collect(parseWatchStream(chunksOf(`${JSON.stringify(error)}\n`)))) as {
      type: string;
      object: Record<string, unknown>;
    }[];
    expect(event).toEqual({
      type: "ERROR",
      object: {
        apiVersion: "v1",
        kind: "Status",
        status: "Failure",
        metadata: {},
        code: 410,
        reason: "Expired",
        message: "too old resource version: 2 (30)",
      },
    });
  });

  it.each([
    ["a line that is not JSON", "{nope\n", /is not JSON/],
    ["an unknown event type", '{"type":"CHANGED","object":{}}\n', /unknown type "CHANGED"/],
    ["an event without an object", '{"type":"ADDED"}\n', /ADDED event without an object/],
  ])("ends with an InternalError StatusError on %s", async (_case, line, message) => {
    const failure = collect(parseWatchStream(chunksOf(`${added("a")}\n`, line)));
    await expect(failure).rejects.toThrow(message);
    await expect(failure).rejects.toSatisfy((e: unknown) => StatusError.isInstance(e) && isInternalError(e));
  });

  it("fails a line longer than maxLineBytes instead of buffering it", async () => {
    const long = "x".repeat(100);
    await expect(collect(parseWatchStream(chunksOf(long, long), { maxLineBytes: 150 }))).rejects.toThrow(
      "a line is longer than 150 bytes",
    );
  });

  it("yields to the event loop between batches so timers and I/O still run", async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `${added(`p${i}`)}\n`).join("");
    let macrotaskRanAfter = -1;
    let seen = 0;
    setImmediate(() => {
      macrotaskRanAfter = seen;
    });
    for await (const _event of parseWatchStream(chunksOf(lines), { eventsPerTurn: 100 })) seen++;
    expect(seen).toBe(2000);
    expect(macrotaskRanAfter).toBe(100);
  });
});
