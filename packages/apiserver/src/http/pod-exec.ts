// `pods/{name}/exec` and `attach` over WebSocket, as kubectl 1.30+ and the official
// clients speak it (the channel protocols `v5.channel.k8s.io` and
// `v4.channel.k8s.io`): every binary message starts with its channel — 0
// stdin, 1 stdout, 2 stderr, 3 the final Status, 4 terminal resizes, and in
// v5 255 to close a stream. The command runs in the pod's kubelet through
// the `KubeletConnection`. A request that cannot be served is answered
// before the upgrade with a Status, which kubectl prints ("unable to upgrade
// connection: …"); SPDY, which kubectl falls back to, is refused the same way.
// Port-forward takes the same door with its own subprotocol (see pod-portforward.ts).
import type http from "node:http";
import type { Duplex } from "node:stream";
import {
  type APIService,
  newBadRequest,
  newInternalError,
  newNotFound,
  type Pod,
  pods,
  type Status,
  StatusError,
} from "@reconcile/api";
import { type WebSocket, WebSocketServer } from "ws";
import { checkHost, splitTarget } from "./access.js";
import { auditIdFor, auditIdHeader, type UpgradeAudit } from "./audit/event.js";
import { type AuthorizationAudit, authorizeRequest } from "./auth/request-auth.js";
import type { HandlerContext } from "./context.js";
import { isTrue } from "./parameters.js";
import { chooseContainer, type PodExecSession } from "./pod-connect.js";
import {
  type PortDialer,
  portForwardChannelProtocol,
  portForwardProtocol,
  servePortForward,
  servePortForwardChannels,
} from "./pod-portforward.js";
import { statusBody } from "./respond.js";
import { parseRoute } from "./route.js";

/** The channel protocols served, preferred first. */
export const execProtocols = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const;

/** How long output waits after the upgrade before its first frame goes out. */
const outputSettleMs = 30;

const channel = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** Answers an HTTP upgrade: an exec over WebSocket, or a Status saying why not. */
export function handleUpgrade(
  context: HandlerContext,
  sockets: WebSocketServer,
  request: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  // Until the APIServices are listed, an aggregated group could be missed.
  if (context.aggregator !== undefined && !context.aggregator.synced) {
    context.aggregator.start().then(
      () => handleUpgrade(context, sockets, request, socket, head),
      () => socket.destroy(),
    );
    return;
  }
  const { pathname } = splitTarget(request.url ?? "");
  const auditID = auditIdFor(request);
  upgradeAuditIds.set(request, auditID);
  const audit = context.auditor?.beginUpgrade(request, socket, auditID);
  const refuseAudited = (error: unknown) => refuse(socket, error, auditID, audit);
  const aggregated = context.aggregator?.remoteFor(pathname);
  if (aggregated !== undefined) {
    proxyAggregatedUpgrade(context, aggregated, request, socket, head, audit).catch(refuseAudited);
    return;
  }
  let route: ReturnType<typeof parseRoute> | undefined;
  try {
    route = parseRoute(pathname, context.registry.resources, context.subresourceNamesOf);
  } catch {
    // A path that is not properly escaped: prepareExec answers it with a 400 below.
  }
  if (route?.kind === "podConnect" && route.action === "portforward") {
    preparePortForward(context, request, route.namespace, route.name, audit)
      .then(({ dial, ports }) => {
        if (ports !== undefined) {
          sockets.handleUpgrade(request, socket, head, (ws) => {
            audit?.upgraded();
            servePortForwardChannels(ws, dial, ports);
          });
          return;
        }
        // `SPDY/3.1+portforward.k8s.io` is not an RFC 6455 token, which `ws` checks: it negotiates a
        // stand-in, and the answer names the real subprotocol again (see execSocketServer).
        request.headers["sec-websocket-protocol"] = portForwardStandIn;
        sockets.handleUpgrade(request, socket, head, (ws) => {
          audit?.upgraded();
          servePortForward(ws, dial);
        });
      })
      .catch(refuseAudited);
    return;
  }
  prepareExec(context, request, audit)
    .then((prepared) => {
      sockets.handleUpgrade(request, socket, head, (ws) => {
        audit?.upgraded();
        bridge(ws, prepared);
      });
    })
    .catch(refuseAudited);
}

/** An upgrade under an aggregated group-version: authenticated and authorized here, then passed on. */
async function proxyAggregatedUpgrade(
  context: HandlerContext,
  apiService: APIService,
  request: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  audit: UpgradeAudit | undefined,
): Promise<void> {
  const { pathname, search } = splitTarget(request.url ?? "");
  checkHost(request, context.token);
  const user = await authorizeRequest(context.authn, request, pathname, new URLSearchParams(search), audit);
  audit?.upgraded();
  const target = search === "" ? pathname : `${pathname}?${search}`;
  await context.aggregator!.proxyUpgrade(apiService, user, target, request, socket, head);
}

/** The audit ID of each upgrade request, answered in its `101 Switching Protocols` too. */
const upgradeAuditIds = new WeakMap<http.IncomingMessage, string>();

/** A WebSocket server for {@link handleUpgrade} (no listener of its own; the subprotocol chosen per request). */
export function execSocketServer(): WebSocketServer {
  const server = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => [...execProtocols, portForwardStandIn].find((p) => offered.has(p)) ?? false,
  });
  server.on("headers", (headers, request) => {
    const at = headers.indexOf(`Sec-WebSocket-Protocol: ${portForwardStandIn}`);
    if (at !== -1) headers[at] = `Sec-WebSocket-Protocol: ${portForwardProtocol}`;
    const auditID = upgradeAuditIds.get(request);
    if (auditID !== undefined) headers.push(`${auditIdHeader}: ${auditID}`);
  });
  return server;
}

/** The token `ws` negotiates in place of the port-forward subprotocol. */
const portForwardStandIn = "reconcile-portforward-tunnel";

interface PreparedExec {
  session: PodExecSession;
  protocol: (typeof execProtocols)[number];
  command: readonly string[];
  stdin: boolean;
  /** An attach ends with Success whatever the process's exit code (kubectl reads the pod's state). */
  attach: boolean;
}

async function prepareExec(
  context: HandlerContext,
  request: http.IncomingMessage,
  audit: AuthorizationAudit | undefined,
): Promise<PreparedExec> {
  const { pathname, search } = splitTarget(request.url ?? "");
  const query = new URLSearchParams(search);
  checkHost(request, context.token);
  await authorizeRequest(context.authn, request, pathname, query, audit);
  let route: ReturnType<typeof parseRoute>;
  try {
    route = parseRoute(pathname, context.registry.resources, context.subresourceNamesOf);
  } catch {
    throw newBadRequest(`the request path ${JSON.stringify(pathname)} is not properly escaped`);
  }
  if (route.kind !== "podConnect" || route.action === "log")
    throw newBadRequest(`the server does not allow upgrading the connection of ${pathname}`);
  const { namespace, name, action } = route;
  const command = action === "attach" ? [] : query.getAll("command");
  const flag = (key: string) => isTrue(query.get(key));
  const [stdin, stdout, stderr, tty] = [flag("stdin"), flag("stdout"), flag("stderr"), flag("tty")];
  if (action === "exec" && command.length === 0) throw newBadRequest("you must specify at least 1 command");
  if (!stdin && !stdout && !stderr)
    throw newBadRequest("you must specify at least 1 of stdin, stdout, stderr");
  const pod = await podOf(context, namespace, name);
  const container = chooseContainer(pod, query.get("container") ?? "");
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw newBadRequest(`pod ${name} does not have a host assigned`);
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed")
    throw newBadRequest(
      `${action === "attach" ? "cannot attach a container" : "cannot exec into a container"} in a completed pod; current phase is ${phase}`,
    );
  const upgrade = String(request.headers.upgrade ?? "").toLowerCase();
  if (upgrade !== "websocket")
    throw newBadRequest(
      `upgrading to ${request.headers.upgrade ?? "nothing"} is not supported: exec speaks WebSocket (${execProtocols.join(", ")})`,
    );
  const offered = String(request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((p) => p.trim());
  const protocol = execProtocols.find((p) => offered.includes(p));
  if (protocol === undefined)
    throw newBadRequest(
      `none of the WebSocket subprotocols ${JSON.stringify(offered.join(", "))} is supported: use one of ${execProtocols.join(", ")}`,
    );
  const connection = context.kubeletConnection;
  const answer =
    action === "attach"
      ? connection?.attach?.(nodeName, namespace, name, container)
      : connection?.exec?.(nodeName, namespace, name, container, command, { stdin, tty });
  if (answer === undefined)
    throw newInternalError(new Error(`no kubelet answers ${action} for node ${JSON.stringify(nodeName)}`));
  if (!answer.ok) {
    if (answer.code === 404) throw newNotFound({ group: "", resource: "pods" }, name);
    if (answer.code >= 500) throw newInternalError(new Error(answer.message));
    throw newBadRequest(answer.message);
  }
  // An attach that sends nothing leaves the process's input alone.
  return {
    session: answer.session,
    protocol,
    command,
    stdin: stdin || action === "attach",
    attach: action === "attach",
  };
}

/**
 * Checks a port-forward request before the upgrade; resolves to the dialer of
 * the pod's kubelet, and the ports to forward when the client speaks channels
 * rather than the SPDY tunnel.
 */
async function preparePortForward(
  context: HandlerContext,
  request: http.IncomingMessage,
  namespace: string,
  name: string,
  audit: AuthorizationAudit | undefined,
): Promise<{ dial: PortDialer; ports?: number[] }> {
  checkHost(request, context.token);
  const { pathname, search } = splitTarget(request.url ?? "");
  await authorizeRequest(context.authn, request, pathname, new URLSearchParams(search), audit);
  const pod = await podOf(context, namespace, name);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw newBadRequest(`pod ${name} does not have a host assigned`);
  const upgrade = String(request.headers.upgrade ?? "").toLowerCase();
  const offered = String(request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((p) => p.trim());
  const channels = !offered.includes(portForwardProtocol) && offered.includes(portForwardChannelProtocol);
  if (upgrade !== "websocket" || (!channels && !offered.includes(portForwardProtocol)))
    throw newBadRequest(
      `upgrading to ${request.headers.upgrade ?? "nothing"} is not supported: port-forward speaks WebSocket (${portForwardProtocol} or ${portForwardChannelProtocol})`,
    );
  const ports = channels ? forwardedPorts(new URLSearchParams(search)) : undefined;
  const connection = context.kubeletConnection;
  if (connection?.portForward === undefined)
    throw newInternalError(new Error(`no kubelet answers portforward for node ${JSON.stringify(nodeName)}`));
  const dial: PortDialer = (port) =>
    connection.portForward?.(nodeName, namespace, name, port) ?? {
      ok: false,
      message: `no kubelet answers portforward for node ${JSON.stringify(nodeName)}`,
    };
  return ports === undefined ? { dial } : { dial, ports };
}

/** The `ports` of a channel port-forward (repeated or comma-separated), each 1–65535. */
function forwardedPorts(query: URLSearchParams): number[] {
  const given = query.getAll("ports").flatMap((value) => value.split(","));
  if (given.length === 0) throw newBadRequest('query parameter "port" is required');
  return given.map((text) => {
    const port = Number(text.trim());
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw newBadRequest(`unable to parse "${text}" as a port: must be an integer between 1 and 65535`);
    return port;
  });
}

async function podOf(context: HandlerContext, namespace: string, name: string): Promise<Pod> {
  try {
    return (await context.registry.get(pods, namespace, name)) as Pod;
  } catch (error) {
    if (StatusError.isInstance(error) && error.status.code === 404)
      throw newNotFound({ group: "", resource: "pods" }, name);
    throw error;
  }
}

/** Carries the channels between the client's WebSocket and the session, then sends the Status and closes. */
function bridge(ws: WebSocket, { session, protocol, command, stdin, attach }: PreparedExec): void {
  // Resolves once every frame sent so far has been written to the socket.
  let written: Promise<void> = Promise.resolve();
  // Frames wait out a short settling time after the upgrade: kubectl's WebSocket client starts
  // reading before it has made its streams and drops frames for streams it has not made yet
  // ("Unknown stream id 1, discarding message"). A real container's first output comes later than
  // that anyway; a simulated command answers at once.
  let held: Buffer[] | undefined = [];
  const settled = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      const frames = held ?? [];
      held = undefined;
      for (const frame of frames) write(frame);
      resolve();
    }, outputSettleMs);
    timer.unref?.();
    ws.once("close", () => {
      clearTimeout(timer);
      held = undefined;
      resolve();
    });
  });
  const write = (frame: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    written = new Promise((resolve) => ws.send(frame, () => resolve()));
  };
  const send = (id: number, data: Uint8Array) => {
    const frame = Buffer.allocUnsafe(data.length + 1);
    frame[0] = id;
    frame.set(data, 1);
    if (held !== undefined) held.push(frame);
    else write(frame);
  };
  session.onOutput((stream, data) => send(stream === "stdout" ? channel.stdout : channel.stderr, data));
  if (!stdin) session.closeStdin();
  ws.on("message", (raw: Buffer | ArrayBuffer | Buffer[]) => {
    const data = Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
    if (data.length === 0) return;
    const id = data[0];
    if (id === channel.stdin) session.write(data.subarray(1));
    else if (id === channel.resize) {
      try {
        const size = JSON.parse(data.subarray(1).toString("utf8")) as { Width?: number; Height?: number };
        session.resize(size.Width ?? 0, size.Height ?? 0);
      } catch {
        // A malformed resize changes nothing.
      }
    } else if (id === channel.close && protocol === "v5.channel.k8s.io" && data[1] === channel.stdin)
      session.closeStdin();
  });
  ws.on("close", () => session.kill());
  ws.on("error", () => session.kill());
  // The Status and the close each follow the last write, in TLS records of their own, as
  // kube-apiserver's separate writes arrive: clients that poll the socket for each frame (the
  // Python client) never find the last frames waiting in their TLS buffer with nothing to wake them.
  session.exited.then(async (code) => {
    await settled;
    await written;
    send(channel.error, Buffer.from(JSON.stringify(exitStatus(command, attach ? 0 : code))));
    await written;
    if (ws.readyState === ws.OPEN) ws.close(1000);
  });
}

/** The Status the kubelet writes on the error channel when the command ends (remotecommand). */
export function exitStatus(command: readonly string[], code: number): Status {
  if (code === 0) return { metadata: {}, status: "Success" } as Status;
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${command.join(" ")}], exit code ${code}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] },
  } as Status;
}

/** Answers the upgrade request with the Status of its failure and closes the socket. */
function refuse(socket: Duplex, error: unknown, auditID: string, audit: UpgradeAudit | undefined): void {
  const status = StatusError.isInstance(error)
    ? error.status
    : newInternalError(error instanceof Error ? error : new Error(String(error))).status;
  audit?.refused(status);
  const body = `${JSON.stringify(statusBody(status))}\n`;
  const code = status.code ?? 500;
  const text =
    code === 400
      ? "Bad Request"
      : code === 401
        ? "Unauthorized"
        : code === 403
          ? "Forbidden"
          : code === 404
            ? "Not Found"
            : "Internal Server Error";
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${code} ${text}\r\nConnection: close\r\n${auditIdHeader}: ${auditID}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
