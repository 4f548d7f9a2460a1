import { type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ApiServer } from "../api-server.js";
import type { AuditEvent } from "./audit/event.js";
import type { KubeletConnection, PodExecSession } from "./pod-connect.js";
import { type ListeningApiServer, listen } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

/** A kubelet whose exec echoes its input upper-cased, then exits with the code its command names. */
function fakeKubelet(calls: string[]): KubeletConnection {
  return {
    containerLogs: () => undefined,
    exec(nodeName, namespace, podName, container, command, options) {
      calls.push(
        `${nodeName} ${namespace}/${podName}/${container} ${command.join(" ")} stdin=${options.stdin} tty=${options.tty}`,
      );
      if (container === "gone") return { ok: false, code: 400, message: `container not found ("gone")` };
      let input = "";
      let finish: (code: number) => void = () => {};
      const listeners: ((stream: "stdout" | "stderr", data: Uint8Array) => void)[] = [];
      const session: PodExecSession = {
        write: (data) => {
          input += Buffer.from(data).toString();
        },
        closeStdin: () => {
          for (const listener of listeners) listener("stdout", Buffer.from(input.toUpperCase()));
          for (const listener of listeners) listener("stderr", Buffer.from("done\n"));
          finish(Number(command[1] ?? 0));
        },
        resize: (width, height) => calls.push(`resize ${width}x${height}`),
        onOutput: (listener) => listeners.push(listener),
        exited: new Promise<number>((resolve) => (finish = resolve)),
        kill: () => calls.push("killed"),
      };
      return { ok: true, session };
    },
  };
}

async function start(calls: string[], events?: AuditEvent[]) {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const server = await listen(api, {
    kubeletConnection: fakeKubelet(calls),
    ...(events === undefined
      ? {}
      : {
          audit: {
            policy: { rules: [{ level: "Metadata" }] },
            backend: { process: (e) => void events.push(e) },
          },
        }),
  });
  running.push({ api, http: server });
  await api
    .client()
    .resource(pods, "default")
    .create({
      metadata: { name: "web", namespace: "default" },
      spec: {
        nodeName: "node-1",
        containers: [
          { name: "web", image: "nginx" },
          { name: "gone", image: "x" },
        ],
      },
    } satisfies Pod);
  return server.url.replace("http", "ws");
}

const path = "/api/v1/namespaces/default/pods/web/exec";

/** Opens an exec, sends `frames`, and collects what comes back by channel until the server closes. */
function exec(
  url: string,
  protocol: string,
  frames: Buffer[],
): Promise<{ protocol: string; channels: Record<number, string> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [protocol]);
    const channels: Record<number, string> = {};
    ws.on("open", () => {
      for (const frame of frames) ws.send(frame);
    });
    ws.on("message", (data: Buffer) => {
      channels[data[0] as number] = (channels[data[0] as number] ?? "") + data.subarray(1).toString();
    });
    ws.on("close", () => resolve({ protocol: ws.protocol, channels }));
    ws.on("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk));
      response.on("end", () => reject(new Error(`${response.statusCode} ${body.trim()}`)));
    });
    ws.on("error", reject);
  });
}

describe("pods/exec over WebSocket", () => {
  it("is audited: RequestReceived, ResponseStarted at the switch (101), ResponseComplete when it closes; a refusal too", async () => {
    const events: AuditEvent[] = [];
    const url = await start([], events);
    await exec(`${url}${path}?container=web&command=run&stdin=true&stdout=true`, "v5.channel.k8s.io", [
      Buffer.from([255, 0]),
    ]);
    await expect.poll(() => events.length).toBe(3);
    expect(events.map((e) => [e.stage, e.verb, e.responseStatus?.code])).toEqual([
      ["RequestReceived", "get", undefined],
      ["ResponseStarted", "get", 101],
      ["ResponseComplete", "get", 101],
    ]);
    expect(events[2]!.objectRef).toEqual({
      resource: "pods",
      namespace: "default",
      name: "web",
      apiVersion: "v1",
      subresource: "exec",
    });
    expect(new Set(events.map((e) => e.auditID)).size).toBe(1);

    events.length = 0;
    const refused = await new Promise<{ code: number; auditId: unknown }>((resolve, reject) => {
      const ws = new WebSocket(`${url}/api/v1/namespaces/default/pods/nope/exec?command=ls&stdout=true`, [
        "v5.channel.k8s.io",
      ]);
      ws.on("unexpected-response", (_request, response) => {
        response.resume();
        resolve({ code: response.statusCode ?? 0, auditId: response.headers["audit-id"] });
      });
      ws.on("error", reject);
    });
    expect(refused.code).toBe(404);
    await expect.poll(() => events.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
    expect(events[1]).toMatchObject({
      auditID: refused.auditId,
      responseStatus: { metadata: {}, status: "Failure", reason: "NotFound", code: 404 },
    });
  });

  it("speaks v5.channel.k8s.io: stdin, a resize, the close signal, output channels, then the exit Status", async () => {
    const calls: string[] = [];
    const url = await start(calls);
    const result = await exec(
      `${url}${path}?container=web&command=run&command=3&stdin=true&stdout=true&stderr=true`,
      "v5.channel.k8s.io",
      [
        Buffer.concat([Buffer.from([0]), Buffer.from("hello ")]),
        Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":80,"Height":24}')]),
        Buffer.concat([Buffer.from([0]), Buffer.from("world")]),
        Buffer.from([255, 0]),
      ],
    );
    expect(result.protocol).toBe("v5.channel.k8s.io");
    expect(result.channels[1]).toBe("HELLO WORLD");
    expect(result.channels[2]).toBe("done\n");
    expect(JSON.parse(result.channels[3] ?? "")).toEqual({
      metadata: {},
      status: "Failure",
      message: "command terminated with non-zero exit code: error executing command [run 3], exit code 3",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "3" }] },
    });
    expect(calls.slice(0, 2)).toEqual(["node-1 default/web/web run 3 stdin=true tty=false", "resize 80x24"]);
  });

  it("answers success with a Success Status on v4.channel.k8s.io, whose stdin ends with the connection", async () => {
    const calls: string[] = [];
    const url = await start(calls);
    const ws = new WebSocket(`${url}${path}?container=web&command=run&command=0&stdout=true`, [
      "v4.channel.k8s.io",
    ]);
    const status = await new Promise<string>((resolve) => {
      ws.on("message", (data: Buffer) => {
        if (data[0] === 3) resolve(data.subarray(1).toString());
      });
    });
    expect(JSON.parse(status)).toEqual({ metadata: {}, status: "Success" });
    expect(ws.protocol).toBe("v4.channel.k8s.io");
  });

  it.each([
    [
      `${path}?command=ls&container=web`,
      "v5.channel.k8s.io",
      "400 you must specify at least 1 of stdin, stdout, stderr",
    ],
    [`${path}?stdout=true`, "v5.channel.k8s.io", "400 you must specify at least 1 command"],
    [
      `${path}?command=ls&stdout=true&container=nope`,
      "v5.channel.k8s.io",
      "400 container nope is not valid for pod web",
    ],
    [
      `${path}?command=ls&stdout=true&container=gone`,
      "v5.channel.k8s.io",
      `400 container not found ("gone")`,
    ],
    [
      `${path}?command=ls&stdout=true&container=web`,
      "channel.k8s.io",
      "400 none of the WebSocket subprotocols",
    ],
    [
      "/api/v1/namespaces/default/pods/nosuch/exec?command=ls&stdout=true",
      "v5.channel.k8s.io",
      '404 pods "nosuch" not found',
    ],
    [
      "/api/v1/namespaces/default/pods/%E0%A4%A/exec?command=ls&stdout=true",
      "v5.channel.k8s.io",
      "400 is not properly escaped",
    ],
    [
      "/api/v1/namespaces/default/pods/web/portforward?ports=80",
      "v5.channel.k8s.io",
      "400 port-forward speaks WebSocket (SPDY/3.1+portforward.k8s.io or v4.channel.k8s.io)",
    ],
  ])("refuses %s before the upgrade with a Status", async (target, protocol, expected) => {
    const url = await start([]);
    const failure = await exec(`${url}${target}`, protocol, []).catch((error: Error) => error.message);
    const [code, ...words] = expected.split(" ");
    expect(String(failure)).toMatch(new RegExp(`^${code} `));
    expect(JSON.parse(String(failure).slice(4)).message).toContain(words.join(" "));
  });
});
