// SPDY/3.1 framing, as kubectl's port-forward speaks it inside a WebSocket
// (the `SPDY/3.1+portforward.k8s.io` subprotocol of Kubernetes 1.31+): frames
// read from a byte stream, the frames a server sends, and the name/value
// header blocks, compressed with zlib over SPDY/3's shared dictionary (one
// compression context per direction for the whole connection).
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from "node:zlib";

/** SPDY/3's zlib dictionary for header blocks: length-prefixed header names, then common values. */
export const spdyDictionary: Buffer = (() => {
  const words = [
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
  ];
  const tail =
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505" +
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized" +
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable" +
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT" +
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain," +
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";
  const parts: Buffer[] = [];
  for (const word of words) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(word.length);
    parts.push(length, Buffer.from(word, "latin1"));
  }
  parts.push(Buffer.from(tail, "latin1"));
  return Buffer.concat(parts);
})();

export const frameType = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;

export const flagFin = 0x01;

export type SpdyFrame =
  | { kind: "data"; streamId: number; flags: number; data: Buffer }
  | { kind: "control"; version: number; type: number; flags: number; payload: Buffer };

/** Splits a byte stream into frames; a frame split across chunks waits for its rest. */
export class SpdyFrameReader {
  #buffered: Buffer = Buffer.alloc(0);

  /** The whole frames `chunk` completes, in order. */
  push(chunk: Buffer): SpdyFrame[] {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    const frames: SpdyFrame[] = [];
    while (this.#buffered.length >= 8) {
      const length = this.#buffered.readUInt32BE(4) & 0xffffff;
      if (this.#buffered.length < 8 + length) break;
      const first = this.#buffered.readUInt32BE(0);
      const flags = this.#buffered[4]!;
      const body = this.#buffered.subarray(8, 8 + length);
      if (first & 0x80000000)
        frames.push({
          kind: "control",
          version: (first >>> 16) & 0x7fff,
          type: first & 0xffff,
          flags,
          payload: body,
        });
      else frames.push({ kind: "data", streamId: first & 0x7fffffff, flags, data: body });
      this.#buffered = this.#buffered.subarray(8 + length);
    }
    return frames;
  }
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE((0x8000 | 3) * 0x10000 + type);
  head.writeUInt32BE((((flags & 0xff) << 24) >>> 0) | (payload.length & 0xffffff), 4);
  return Buffer.concat([head, payload]);
}

export function dataFrame(streamId: number, data: Uint8Array, fin: boolean): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff);
  head.writeUInt32BE((((fin ? flagFin : 0) << 24) >>> 0) | (data.length & 0xffffff), 4);
  return Buffer.concat([head, data]);
}

export function synReplyFrame(streamId: number, headerBlock: Buffer, fin: boolean): Buffer {
  const id = Buffer.alloc(4);
  id.writeUInt32BE(streamId & 0x7fffffff);
  return controlFrame(frameType.synReply, fin ? flagFin : 0, Buffer.concat([id, headerBlock]));
}

export function pingFrame(payload: Buffer): Buffer {
  return controlFrame(frameType.ping, 0, payload);
}

export function rstStreamFrame(streamId: number, status: number): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt32BE(streamId & 0x7fffffff);
  body.writeUInt32BE(status, 4);
  return controlFrame(frameType.rstStream, 0, body);
}

export function windowUpdateFrame(streamId: number, delta: number): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt32BE(streamId & 0x7fffffff);
  body.writeUInt32BE(delta & 0x7fffffff, 4);
  return controlFrame(frameType.windowUpdate, 0, body);
}

export function goAwayFrame(lastStreamId: number, status: number): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt32BE(lastStreamId & 0x7fffffff);
  body.writeUInt32BE(status, 4);
  return controlFrame(frameType.goAway, 0, body);
}

/** Header blocks of one connection: one inflate context for what the peer sends, one deflate for ours. */
export class HeaderCodec {
  readonly #inflate: Inflate = createInflate({ dictionary: spdyDictionary });
  readonly #deflate: Deflate = createDeflate({ dictionary: spdyDictionary });

  /** The names (lowercase) and values of a compressed block; several values of one name are NUL-separated. */
  async decode(block: Buffer): Promise<Map<string, string>> {
    const raw = await pump(this.#inflate, block);
    const headers = new Map<string, string>();
    if (raw.length < 4) return headers;
    let offset = 4;
    const pairs = raw.readUInt32BE(0);
    for (let i = 0; i < pairs && offset + 4 <= raw.length; i++) {
      const nameLength = raw.readUInt32BE(offset);
      const name = raw.toString("utf8", offset + 4, offset + 4 + nameLength);
      offset += 4 + nameLength;
      const valueLength = raw.readUInt32BE(offset);
      const value = raw.toString("utf8", offset + 4, offset + 4 + valueLength);
      offset += 4 + valueLength;
      headers.set(name.toLowerCase(), value);
    }
    return headers;
  }

  /** A compressed block of `headers`. */
  encode(headers: Readonly<Record<string, string>>): Promise<Buffer> {
    const entries = Object.entries(headers);
    const parts: Buffer[] = [u32(entries.length)];
    for (const [name, value] of entries) {
      const n = Buffer.from(name.toLowerCase());
      const v = Buffer.from(value);
      parts.push(u32(n.length), n, u32(v.length), v);
    }
    return pump(this.#deflate, Buffer.concat(parts));
  }

  close(): void {
    this.#inflate.close();
    this.#deflate.close();
  }
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/** Writes `input` through a zlib stream with a sync flush and resolves with what came out. */
function pump(stream: Inflate | Deflate, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onError = (error: Error) => {
      stream.off("data", onData);
      reject(error);
    };
    stream.on("data", onData);
    stream.once("error", onError);
    stream.write(input);
    stream.flush(constants.Z_SYNC_FLUSH, () => {
      // The flushed output may still be on its way to the 'data' listener.
      setImmediate(() => {
        stream.off("data", onData);
        stream.off("error", onError);
        resolve(Buffer.concat(chunks));
      });
    });
  });
}
