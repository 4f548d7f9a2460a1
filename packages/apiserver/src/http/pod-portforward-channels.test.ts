import { type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ApiServer } from "../api-server.js";
import type { KubeletConnection, PodPortStream } from "./pod-connect.js";
import { type ListeningApiServer, listen } from "./server.js";

// Port-forward over `v4.channel.k8s.io`, as the kubelet's WebSocket handler
// serves it and the Python client speaks it: two channels per port, each
// opened with the port's two bytes (little-endian), then the data.

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

/** Port 80 answers each write upper-cased and then hangs up; every other port refuses. */
const kubelet: KubeletConnection = {
  containerLogs: () => undefined,
  exec: () => ({ ok: false, code: 400, message: "no exec here" }),
  portForward(_node, _namespace, _pod, port) {
    if (port !== 80) return { ok: false, message: `connection refused on ${port}` };
    const data: ((bytes: Uint8Array) => void)[] = [];
    const ends: ((error?: string) => void)[] = [];
    const stream: PodPortStream = {
      write(bytes) {
        for (const listener of data) listener(Buffer.from(Buffer.from(bytes).toString().toUpperCase()));
        for (const listener of ends) listener();
      },
      end() {},
      onData: (listener) => data.push(listener),
      onEnd: (listener) => ends.push(listener),
    };
    return { ok: true, stream };
  },
};

async function start(): Promise<string> {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const server = await listen(api, { kubeletConnection: kubelet });
  running.push({ api, http: server });
  await api
    .client()
    .resource(pods, "default")
    .create({
      metadata: { name: "web", namespace: "default" },
      spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx" }] },
    } satisfies Pod);
  return `${server.url.replace("http", "ws")}/api/v1/namespaces/default/pods/web/portforward`;
}

/** Opens the forward, sends `frames` once the port bytes of channel 0 arrived, and records every frame until the close. */
function forward(
  url: string,
  frames: Buffer[],
): Promise<{ protocol: string; frames: string[]; code: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ["v4.channel.k8s.io"]);
    const seen: string[] = [];
    ws.on("message", (raw: Buffer) => {
      seen.push(
        `${raw[0]}:${raw.subarray(1).length === 2 && seen.length < 4 ? raw.readUInt16LE(1) : raw.subarray(1).toString()}`,
      );
      if (seen.length === 1) for (const frame of frames) ws.send(frame);
    });
    ws.on("close", (code) => resolve({ protocol: ws.protocol, frames: seen, code }));
    ws.on("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on("end", () => reject(new Error(`${response.statusCode} ${JSON.parse(body).message}`)));
    });
    ws.on("error", reject);
  });
}

describe("port-forward over channels", () => {
  it("opens each port's channels with the port, relays its data, reports a refusal, and closes when all have ended", async () => {
    const url = await start();
    const result = await forward(`${url}?ports=80,81`, [
      Buffer.concat([Buffer.from([0]), Buffer.from("get /")]),
    ]);
    expect(result.protocol).toBe("v4.channel.k8s.io");
    expect(result.frames).toEqual(["0:80", "1:80", "2:81", "3:81", "3:connection refused on 81", "0:GET /"]);
    expect(result.code).toBe(1000);
  });

  it("needs the ports to forward, each a port number", async () => {
    const url = await start();
    await expect(forward(url, [])).rejects.toThrow('400 query parameter "port" is required');
    await expect(forward(`${url}?ports=http`, [])).rejects.toThrow(
      '400 unable to parse "http" as a port: must be an integer between 1 and 65535',
    );
  });
});
