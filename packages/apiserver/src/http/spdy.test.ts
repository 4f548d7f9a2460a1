import { inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  dataFrame,
  frameType,
  HeaderCodec,
  pingFrame,
  SpdyFrameReader,
  spdyDictionary,
  synReplyFrame,
  windowUpdateFrame,
} from "./spdy.js";

describe("SPDY/3.1 framing", () => {
  it("has SPDY/3's dictionary: 1423 bytes, length-prefixed names first", () => {
    expect(spdyDictionary.length).toBe(1423);
    expect(spdyDictionary.subarray(0, 11)).toEqual(Buffer.from("\0\0\0\x07options", "latin1"));
    expect(spdyDictionary.subarray(-6).toString()).toBe("enq=0.");
  });

  it("reads frames split across chunks and several in one chunk, control and data", () => {
    const bytes = Buffer.concat([
      pingFrame(Buffer.from([0, 0, 0, 7])),
      dataFrame(3, Buffer.from("hello"), true),
      windowUpdateFrame(3, 100),
    ]);
    const reader = new SpdyFrameReader();
    const frames = [
      ...reader.push(bytes.subarray(0, 5)),
      ...reader.push(bytes.subarray(5, 20)),
      ...reader.push(bytes.subarray(20)),
    ];
    expect(frames).toEqual([
      { kind: "control", version: 3, type: frameType.ping, flags: 0, payload: Buffer.from([0, 0, 0, 7]) },
      { kind: "data", streamId: 3, flags: 1, data: Buffer.from("hello") },
      {
        kind: "control",
        version: 3,
        type: frameType.windowUpdate,
        flags: 0,
        payload: Buffer.from([0, 0, 0, 3, 0, 0, 0, 100]),
      },
    ]);
  });

  it("compresses header blocks over the dictionary, one context per direction across blocks", async () => {
    const client = new HeaderCodec();
    const server = new HeaderCodec();
    try {
      for (const requestId of ["0", "1"]) {
        const block = await client.encode({ streamType: "data", port: "8080", requestID: requestId });
        expect(await server.decode(block)).toEqual(
          new Map([
            ["streamtype", "data"],
            ["port", "8080"],
            ["requestid", requestId],
          ]),
        );
      }
      // A SYN_REPLY with an empty block is what the server answers every stream with.
      const reply = synReplyFrame(5, await server.encode({}), false);
      const [frame] = new SpdyFrameReader().push(reply);
      expect(frame).toMatchObject({ kind: "control", type: frameType.synReply, flags: 0 });
      const block = (frame as { payload: Buffer }).payload.subarray(4);
      expect(await client.decode(block)).toEqual(new Map());
      expect(() => inflateSync(block)).toThrow();
    } finally {
      client.close();
      server.close();
    }
  });
});
