import type * as http from "node:http";
import * as https from "node:https";
import type { Duplex } from "node:stream";
import type { APIService } from "@reconcile/api";
import type { UserInfo } from "../auth/user.js";
import { notPassedBack, notPassedOn } from "../hop-headers.js";
import type { CertificateAndKey } from "../tls.js";
import { endpointURL, type ResolvedEndpoint } from "./resolve.js";

// How the API server talks to an aggregated server: HTTPS to the resolved
// endpoint, its certificate checked against the APIService's caBundle for the
// name `<service>.<namespace>.svc` (or not checked with insecureSkipTLSVerify),
// the user passed on as kube-aggregator's front-proxy headers.

/** The headers that carry the user to an aggregated server (`--requestheader-*-headers`). */
export const remoteUserHeader = "X-Remote-User";
export const remoteGroupHeader = "X-Remote-Group";
export const remoteExtraHeaderPrefix = "X-Remote-Extra-";

/** upstream's `SetAuthProxyHeaders`: the user's name, groups and extra, each extra key path-escaped. */
export function authProxyHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { [remoteUserHeader]: user.username };
  if (user.groups.length > 0) headers[remoteGroupHeader] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {}))
    headers[`${remoteExtraHeaderPrefix}${encodeURIComponent(key)}`] = [...values];
  return headers;
}

/** Whether a request header is one the client may not pass on: a hop's own, its credentials, or the user's. */
function withheld(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    notPassedOn.has(lower) ||
    lower === "x-remote-user" ||
    lower === "x-remote-group" ||
    lower.startsWith("x-remote-extra-")
  );
}

/** The TLS an APIService asks for: its CA and the Service's DNS name, or no check at all. */
function tlsOptions(apiService: APIService): https.RequestOptions {
  const spec = apiService.spec ?? { groupPriorityMinimum: 0, versionPriority: 0 };
  const ref = spec.service ?? {};
  if (spec.insecureSkipTLSVerify) return { rejectUnauthorized: false };
  return {
    servername: `${ref.name ?? ""}.${ref.namespace ?? ""}.svc`,
    ...(spec.caBundle ? { ca: Buffer.from(spec.caBundle, "base64").toString("utf8") } : {}),
  };
}

/** Keep-alive agents, one per APIService as it is now (a changed spec gets a new one). */
export class BackendAgents {
  readonly #agents = new Map<string, { spec: string; agent: https.Agent }>();

  /** The agent of `apiService`'s connections, made with the client certificate they present (if any). */
  agentFor(apiService: APIService, client: CertificateAndKey | undefined): https.Agent {
    const name = apiService.metadata?.name ?? "";
    const spec = JSON.stringify(apiService.spec);
    const existing = this.#agents.get(name);
    if (existing?.spec === spec) return existing.agent;
    existing?.agent.destroy();
    const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...client });
    this.#agents.set(name, { spec, agent });
    return agent;
  }

  forget(name: string): void {
    this.#agents.get(name)?.agent.destroy();
    this.#agents.delete(name);
  }

  close(): void {
    for (const { agent } of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

/** The request's headers without the client's credentials, the user as front-proxy headers, `X-Forwarded-For` extended. */
function passedOnHeaders(request: http.IncomingMessage, user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !withheld(name)) headers[name] = value;
  const peer = request.socket.remoteAddress ?? "";
  const forwarded = request.headers["x-forwarded-for"];
  headers["x-forwarded-for"] = forwarded ? `${forwarded}, ${peer}` : peer;
  return Object.assign(headers, authProxyHeaders(user));
}

/**
 * Passes `request` on to the aggregated server at `endpoint` (method, path
 * and query, body, headers without the client's credentials, the user as
 * front-proxy headers, `X-Forwarded-For` extended) and streams its answer
 * back. A server that cannot be reached is a 503 with the error as text, as
 * kube-aggregator's proxy answers.
 */
export function proxyToBackend(
  apiService: APIService,
  agent: https.Agent,
  endpoint: ResolvedEndpoint,
  user: UserInfo,
  pathAndQuery: string,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const headers = passedOnHeaders(request, user);
  return new Promise<void>((resolve) => {
    const outgoing = https.request(
      `${endpointURL(endpoint)}${pathAndQuery}`,
      { method: request.method, headers, agent, ...tlsOptions(apiService) },
      (answer) => {
        const back: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && !notPassedBack.has(name)) back[name] = value;
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
        answer.on("end", resolve);
        answer.on("error", () => {
          response.destroy();
          resolve();
        });
      },
    );
    outgoing.on("error", (error) => {
      if (response.headersSent) response.destroy();
      else {
        response.writeHead(503, {
          "Content-Type": "text/plain; charset=utf-8",
          "X-Content-Type-Options": "nosniff",
        });
        response.end(`${error.message}\n`);
      }
      resolve();
    });
    // The client going away ends the call to the aggregated server too.
    response.on("close", () => {
      if (!response.writableFinished) outgoing.destroy();
    });
    request.pipe(outgoing);
  });
}

/**
 * Passes an upgrade request (an exec-like stream: WebSocket or SPDY) on to
 * the aggregated server at `endpoint`, as kube-aggregator's upgrade-aware
 * proxy does: the same headers as {@link proxyToBackend} plus the upgrade's
 * own, the aggregator's client certificate presented; once the server
 * switches protocols the two connections are joined, and any other answer is
 * passed back as it came. A server that cannot be reached is a 503.
 */
export function proxyUpgradeToBackend(
  apiService: APIService,
  client: CertificateAndKey | undefined,
  endpoint: ResolvedEndpoint,
  user: UserInfo,
  pathAndQuery: string,
  request: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const headers = passedOnHeaders(request, user);
  headers.connection = "Upgrade";
  headers.upgrade = request.headers.upgrade ?? "";
  const outgoing = https.request(`${endpointURL(endpoint)}${pathAndQuery}`, {
    method: request.method,
    headers,
    agent: false,
    ...tlsOptions(apiService),
    ...client,
  });
  const answerHead = (answer: http.IncomingMessage) =>
    `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ""}\r\n${rawHeaderLines(answer)}\r\n`;
  outgoing.on("upgrade", (answer, upstream: Duplex, upstreamHead: Buffer) => {
    socket.write(answerHead(answer));
    if (upstreamHead.length > 0) socket.write(upstreamHead);
    if (head.length > 0) upstream.write(head);
    const close = () => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.on("error", close).on("close", close);
    socket.on("error", close).on("close", close);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  outgoing.on("response", (answer) => {
    // The server did not switch: its answer goes back as it is, and the connection ends with it.
    socket.write(answerHead(answer));
    answer.pipe(socket);
  });
  outgoing.on("error", (error) => serviceUnavailable(socket, error.message));
  socket.on("close", () => outgoing.destroy());
  outgoing.end();
}

/** kube-aggregator's plain-text 503 with `text` written on a connection that was to be upgraded. */
export function serviceUnavailable(socket: Duplex, text: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** An answer's headers as sent, one `Name: value` line each. */
function rawHeaderLines(answer: http.IncomingMessage): string {
  let lines = "";
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2)
    lines += `${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}\r\n`;
  return lines;
}

/** The answer of a GET to an aggregated server as the aggregator itself (its discovery check). */
export interface ProbeResult {
  /** Why the check failed (upstream's text after "failing or missing response from <url>: "); undefined when it passed. */
  failure?: string | undefined;
  /** The body of a 2xx answer, as text. */
  body?: string | undefined;
}

/** Largest discovery document read from an aggregated server. */
const maxProbeBytes = 8 * 1024 * 1024;

/**
 * GETs `path` of an aggregated server as `system:kube-aggregator` in
 * `system:masters` (with the aggregator's client certificate, if it has one),
 * without checking the server's certificate and within `timeoutMs`
 * (upstream's availability check): passed for any 2xx answer.
 */
export function probeBackend(
  endpoint: ResolvedEndpoint,
  path: string,
  timeoutMs: number,
  client?: CertificateAndKey | undefined,
): Promise<ProbeResult> {
  const url = `${endpointURL(endpoint)}${path}`;
  return new Promise<ProbeResult>((resolve) => {
    const outgoing = https.get(
      url,
      {
        // A connection of its own each time, as upstream's check builds its transport per check.
        agent: false,
        rejectUnauthorized: false,
        // The aggregator's own client certificate, as its proxied requests carry.
        ...client,
        headers: {
          Accept: "application/json",
          ...authProxyHeaders({ username: "system:kube-aggregator", groups: ["system:masters"] }),
        },
        timeout: timeoutMs,
      },
      (answer) => {
        const code = answer.statusCode ?? 0;
        if (code < 200 || code >= 300) {
          answer.resume();
          resolve({ failure: `bad status from ${url}: ${code}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= maxProbeBytes) chunks.push(chunk);
        });
        answer.on("end", () => resolve({ body: Buffer.concat(chunks).toString("utf8") }));
        answer.on("error", (error) => resolve({ failure: `Get "${url}": ${error.message}` }));
      },
    );
    outgoing.on("timeout", () =>
      outgoing.destroy(
        new Error("context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
      ),
    );
    outgoing.on("error", (error) => resolve({ failure: `Get "${url}": ${error.message}` }));
  });
}
