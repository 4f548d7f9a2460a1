import * as http from "node:http";
import { Duplex } from "node:stream";
import * as tls from "node:tls";
import {
  endpoints,
  newBadRequest,
  newServiceUnavailable,
  nodes,
  type Pod,
  pods,
  type Service,
  StatusError,
  services,
} from "@reconcile/api";
import type { Endpoints, Node } from "kubernetes-types/core/v1.js";
import type { HandlerContext } from "./context.js";
import { notPassedBack, notPassedOn } from "./hop-headers.js";
import type { PodPortStream } from "./pod-connect.js";

/**
 * `pods/{[scheme:]name[:port]}/proxy[/path]` and `services/…/proxy[/path]`
 * (upstream's ProxyREST): the request, with its method, query, headers
 * (without the client's credentials) and body, is sent to the pod's port (a
 * Service's port is resolved to a ready endpoint and its target port, as
 * kube-apiserver resolves it), through the pod's kubelet, and the answer is
 * streamed back. A path that is empty is redirected to `…/proxy/`.
 */
export async function serveProxy(
  context: HandlerContext,
  route: { resource: "pods" | "services" | "nodes"; namespace: string; name: string; path: string },
  /** The request's path, and its query with the `?` (or ""). */
  pathname: string,
  search: string,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const { resource, namespace, name, path } = route;
  const id = splitSchemeNamePort(name);
  if (id === undefined) {
    request.resume();
    throw newBadRequest(`invalid ${resource.slice(0, -1)} request ${JSON.stringify(name)}`);
  }
  if (path === "" && (request.method === "GET" || request.method === "HEAD")) {
    request.resume();
    response.writeHead(301, { Location: `${pathname}/${search}` });
    response.end();
    return;
  }
  if (resource === "nodes") return serveNodeProxy(context, id.name, id.port, path, search, request, response);
  const target =
    resource === "pods"
      ? await podTarget(context, namespace, id.name, id.port)
      : await serviceTarget(context, namespace, id.name, id.port);
  const connection = context.kubeletConnection;
  const dialed = connection?.portForward?.(target.nodeName, namespace, target.pod, target.port);
  if (dialed === undefined || !dialed.ok) {
    request.resume();
    const why =
      dialed === undefined
        ? `no kubelet answers for node ${JSON.stringify(target.nodeName)}`
        : dialed.message;
    throw newServiceUnavailable(`error trying to reach ${resource === "pods" ? "pod" : "service"}: ${why}`);
  }
  const headers: http.OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(request.headers))
    if (value !== undefined && !notPassedOn.has(key) && !key.startsWith("impersonate-")) headers[key] = value;
  headers.host = `${target.address}:${target.port}`;
  const socket = streamSocket(dialed.stream);
  await new Promise<void>((resolve, reject) => {
    const outgoing = http.request(
      {
        method: request.method,
        path: `${path || "/"}${search}`,
        headers,
        createConnection: () =>
          (id.scheme === "https"
            ? tls.connect({ socket, rejectUnauthorized: false, servername: undefined })
            : socket) as never,
      },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [key, value] of Object.entries(answer.headers))
          if (value !== undefined && !notPassedBack.has(key)) back[key] = value;
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
        // Ends with the pod's answer, or when the client leaves and the call is torn down.
        answer.on("close", () => resolve());
        answer.on("error", reject);
      },
    );
    outgoing.on("error", (error) => {
      socket.destroy();
      reject(
        newServiceUnavailable(
          `error trying to reach ${resource === "pods" ? "pod" : "service"}: ${error.message}`,
        ),
      );
    });
    response.on("close", () => outgoing.destroy());
    request.pipe(outgoing);
  });
}

/** The kubelet's port, as a Node's `status.daemonEndpoints.kubeletEndpoint` gives it. */
const kubeletPort = 10250;

/**
 * `nodes/{[scheme:]name[:port]}/proxy[/path]`: the request answered by the
 * node's kubelet server (`/healthz`, `/pods`, `/configz`, `/stats/summary`,
 * `/metrics/resource`), as kube-apiserver passes it to port 10250. Another
 * port of the node answers nothing here.
 */
async function serveNodeProxy(
  context: HandlerContext,
  name: string,
  port: string,
  path: string,
  search: string,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  request.resume();
  const node = (await context.registry.get(nodes, undefined, name)) as Node;
  const address = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? name;
  const answer =
    port === "" || Number(port) === kubeletPort
      ? context.kubeletConnection?.nodeProxy?.(name, request.method ?? "GET", `${path || "/"}${search}`)
      : undefined;
  if (answer === undefined) {
    const where = `${address}:${port || kubeletPort}`;
    throw newServiceUnavailable(
      `error trying to reach service: dial tcp ${where}: connect: connection refused`,
    );
  }
  response.writeHead(answer.status, answer.headers);
  response.end(request.method === "HEAD" ? undefined : answer.body);
}

/** upstream's `SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`, scheme http, https or none. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(":");
  let scheme = "";
  let name: string;
  let port = "";
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (name === "" || !["", "http", "https"].includes(scheme)) return undefined;
  return { scheme, name, port };
}

interface Target {
  nodeName: string;
  pod: string;
  address: string;
  port: number;
}

/** A pod's address and port: the one named (a number), else its first container port, else 80. */
async function podTarget(
  context: HandlerContext,
  namespace: string,
  name: string,
  port: string,
): Promise<Target> {
  const pod = (await context.registry.get(pods, namespace, name)) as Pod;
  let number = port === "" ? undefined : Number(port);
  if (number === undefined)
    number =
      pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.containerPort)?.containerPort ?? 80;
  if (!Number.isInteger(number) || number < 1 || number > 65_535)
    throw newBadRequest(`invalid pod request ${JSON.stringify(`${name}:${port}`)}`);
  const nodeName = pod.spec?.nodeName;
  const address = pod.status?.podIP;
  if (!nodeName || !address) throw newServiceUnavailable(`pod ${JSON.stringify(name)} has no address yet`);
  return { nodeName, pod: name, address, port: number };
}

/**
 * A Service's endpoint for the port named (by its name or number; none: the
 * unnamed port), as upstream's `ResourceLocation`: the Endpoints' port of
 * that name, at one of its ready addresses (the first whose pod runs on a
 * node), or a 503 when there is none.
 */
async function serviceTarget(
  context: HandlerContext,
  namespace: string,
  name: string,
  port: string,
): Promise<Target> {
  const service = (await context.registry.get(services, namespace, name)) as Service;
  let portName = port;
  if (/^\d+$/.test(port)) {
    const declared = (service.spec?.ports ?? []).find((p) => p.port === Number(port));
    if (declared === undefined)
      throw newServiceUnavailable(
        `no service port ${Number(port)} found for service ${JSON.stringify(name)}`,
      );
    portName = declared.name ?? "";
  }
  let found: Endpoints | undefined;
  try {
    found = (await context.registry.get(endpoints, namespace, name)) as Endpoints;
  } catch (error) {
    if (!(StatusError.isInstance(error) && error.status.code === 404)) throw error;
  }
  for (const subset of found?.subsets ?? []) {
    const endpointPort = (subset.ports ?? []).find((p: { name?: string }) => (p.name ?? "") === portName);
    if (endpointPort === undefined) continue;
    for (const address of subset.addresses ?? []) {
      const podName = address.targetRef?.kind === "Pod" ? address.targetRef.name : undefined;
      if (podName === undefined) continue;
      const nodeName =
        address.nodeName ??
        ((await context.registry.get(pods, namespace, podName).catch(() => undefined)) as Pod | undefined)
          ?.spec?.nodeName;
      if (nodeName) return { nodeName, pod: podName, address: address.ip, port: endpointPort.port };
    }
  }
  throw newServiceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
}

/** A pod port's stream as the socket node:http speaks over. */
function streamSocket(stream: PodPortStream): Duplex {
  const socket = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      stream.write(chunk);
      callback();
    },
    final(callback) {
      stream.end();
      callback();
    },
    read() {},
  });
  stream.onData((data) => socket.push(Buffer.from(data)));
  stream.onEnd((error) => {
    if (error !== undefined) socket.destroy(new Error(error));
    else socket.push(null);
  });
  return socket;
}
