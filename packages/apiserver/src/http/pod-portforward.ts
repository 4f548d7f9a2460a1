// `pods/{name}/portforward` as kubectl 1.31+ speaks it: a WebSocket with the
// `SPDY/3.1+portforward.k8s.io` subprotocol carrying a SPDY/3.1 connection
// (KEP-4006's tunnel). For every local connection the client opens two
// streams, an error stream and a data stream, with the headers `streamType`,
// `port` and `requestID`; once both are there the data stream is joined to
// a connection the pod's kubelet opens to that port, and a failure is written
// on the error stream, as the kubelet's port-forward handler does.
import type { WebSocket } from "ws";
import type { PodPortStream } from "./pod-connect.js";
import {
  dataFrame,
  flagFin,
  frameType,
  goAwayFrame,
  HeaderCodec,
  pingFrame,
  rstStreamFrame,
  SpdyFrameReader,
  synReplyFrame,
  windowUpdateFrame,
} from "./spdy.js";

/** The WebSocket subprotocol of port-forward over a SPDY tunnel. */
export const portForwardProtocol = "SPDY/3.1+portforward.k8s.io";

/** Opens a connection to a port of the pod, or says why it cannot. */
export type PortDialer = (
  port: number,
) => { ok: true; stream: PodPortStream } | { ok: false; message: string };

interface Pair {
  error?: number;
  data?: number;
  port: number;
  started: boolean;
  target?: PodPortStream;
}

/**
 * Serves one port-forward connection on `ws` until either side closes it.
 * A refusal's message (the kubelet's, naming the pod's sandbox) goes on the error stream as it is.
 */
export function servePortForward(ws: WebSocket, dial: PortDialer): void {
  const reader = new SpdyFrameReader();
  const codec = new HeaderCodec();
  const pairs = new Map<string, Pair>();
  const byStream = new Map<number, Pair>();
  let lastStream = 0;
  let closed = false;
  // Frames are handled one at a time: header blocks share one compression context each way.
  let work: Promise<void> = Promise.resolve();
  const send = (frame: Buffer) => {
    if (!closed && ws.readyState === ws.OPEN) ws.send(frame);
  };
  const shutdown = () => {
    if (closed) return;
    closed = true;
    for (const pair of pairs.values()) pair.target?.end();
    codec.close();
  };
  ws.on("close", shutdown);
  ws.on("error", shutdown);
  ws.on("message", (message: Buffer | Buffer[] | ArrayBuffer) => {
    const chunk = Array.isArray(message)
      ? Buffer.concat(message)
      : Buffer.isBuffer(message)
        ? message
        : Buffer.from(message);
    for (const frame of reader.push(chunk)) {
      work = work
        .then(() => handle(frame))
        .catch(() => {
          send(goAwayFrame(lastStream, 1));
          ws.close();
        });
    }
  });

  async function handle(frame: ReturnType<SpdyFrameReader["push"]>[number]): Promise<void> {
    if (closed) return;
    if (frame.kind === "data") {
      const pair = byStream.get(frame.streamId);
      if (frame.data.length > 0) send(windowUpdateFrame(frame.streamId, frame.data.length));
      if (pair === undefined || frame.streamId !== pair.data) return;
      if (frame.data.length > 0) pair.target?.write(frame.data);
      if (frame.flags & flagFin) pair.target?.end();
      return;
    }
    switch (frame.type) {
      case frameType.synStream:
        return openStream(frame.payload);
      case frameType.ping:
        return send(pingFrame(frame.payload));
      case frameType.rstStream: {
        const pair = byStream.get(frame.payload.readUInt32BE(0) & 0x7fffffff);
        pair?.target?.end();
        return;
      }
      case frameType.goAway:
        ws.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and HEADERS change nothing here.
        return;
    }
  }

  async function openStream(payload: Buffer): Promise<void> {
    const streamId = payload.readUInt32BE(0) & 0x7fffffff;
    lastStream = Math.max(lastStream, streamId);
    const headers = await codec.decode(payload.subarray(10));
    const type = headers.get("streamtype");
    const port = Number(headers.get("port"));
    const requestId = headers.get("requestid") ?? String(streamId);
    if ((type !== "error" && type !== "data") || !Number.isInteger(port) || port < 1 || port > 65535) {
      send(rstStreamFrame(streamId, 1));
      return;
    }
    send(synReplyFrame(streamId, await codec.encode({}), false));
    const pair = pairs.get(requestId) ?? { port, started: false };
    pairs.set(requestId, pair);
    pair[type] = streamId;
    byStream.set(streamId, pair);
    if (pair.error !== undefined && pair.data !== undefined && !pair.started) start(requestId, pair);
  }

  function start(requestId: string, pair: Pair): void {
    pair.started = true;
    const { error, data, port } = pair as Required<Pair>;
    const finish = (message?: string) => {
      if (message !== undefined) send(dataFrame(error, Buffer.from(message), false));
      send(dataFrame(error, Buffer.alloc(0), true));
      send(dataFrame(data, Buffer.alloc(0), true));
      pairs.delete(requestId);
    };
    const answer = dial(port);
    if (!answer.ok) {
      finish(answer.message);
      return;
    }
    pair.target = answer.stream;
    answer.stream.onData((bytes) => {
      // A DATA frame carries at most 16 MiB; the pod's answers are far smaller, but split anyway.
      for (let at = 0; at < bytes.length; at += 0xffff)
        send(dataFrame(data, bytes.subarray(at, at + 0xffff), false));
    });
    answer.stream.onEnd(finish);
  }
}

/** The WebSocket subprotocol of port-forward over channels (the kubelet's own WebSocket handler). */
export const portForwardChannelProtocol = "v4.channel.k8s.io";

/**
 * Serves port-forward over channels, as the kubelet's WebSocket handler does
 * (what the Python client speaks): each requested port has a data channel
 * (2i) and an error channel (2i+1), each first sent the port as two bytes,
 * little-endian; one connection to the pod per port, and the WebSocket closes
 * once every port's connection has ended. Frames go out one write at a time,
 * so each reaches the client in a TLS record of its own.
 */
export function servePortForwardChannels(ws: WebSocket, dial: PortDialer, ports: readonly number[]): void {
  let written: Promise<void> = Promise.resolve();
  const send = (channel: number, data: Uint8Array) => {
    const frame = Buffer.allocUnsafe(data.length + 1);
    frame[0] = channel;
    frame.set(data, 1);
    written = written.then(
      () =>
        new Promise<void>((resolve) => {
          if (ws.readyState !== ws.OPEN) resolve();
          else ws.send(frame, () => resolve());
        }),
    );
  };
  const targets: (PodPortStream | undefined)[] = [];
  let open = ports.length;
  const ended = () => {
    open--;
    if (open === 0) written.then(() => ws.close(1000));
  };
  ports.forEach((port, i) => {
    const portBytes = Buffer.from([port & 0xff, port >> 8]);
    send(2 * i, portBytes);
    send(2 * i + 1, portBytes);
    const answer = dial(port);
    if (!answer.ok) {
      send(2 * i + 1, Buffer.from(answer.message));
      ended();
      return;
    }
    targets[i] = answer.stream;
    answer.stream.onData((bytes) => send(2 * i, bytes));
    answer.stream.onEnd((message) => {
      if (message !== undefined) send(2 * i + 1, Buffer.from(message));
      ended();
    });
  });
  ws.on("message", (raw: Buffer | ArrayBuffer | Buffer[]) => {
    const data = Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
    const channel = data[0];
    // Only data channels take input.
    if (channel === undefined || channel % 2 !== 0) return;
    targets[channel / 2]?.write(data.subarray(1));
  });
  const stop = () => {
    for (const target of targets) target?.end();
  };
  ws.on("close", stop);
  ws.on("error", stop);
}
