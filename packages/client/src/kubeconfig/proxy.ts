import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";

/**
 * The proxy a request to `server` goes through: the cluster's `proxy-url`,
 * else `HTTPS_PROXY`/`HTTP_PROXY` unless `NO_PROXY` exempts the host, as Go's
 * `http.ProxyFromEnvironment` that client-go uses. A loopback server is never
 * proxied by the environment. undefined: connect directly.
 */
export function proxyFor(server: URL, proxyUrl: string | undefined, env = process.env): URL | undefined {
  if (proxyUrl) return checkedProxy(proxyUrl);
  const host = server.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.startsWith("127.") || host === "::1") return undefined;
  const fromEnv =
    server.protocol === "https:" ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (!fromEnv) return undefined;
  const exempt = (env.NO_PROXY ?? env.no_proxy ?? "")
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (exempt.some((entry) => noProxyMatches(entry, host.toLowerCase(), server.port))) return undefined;
  return checkedProxy(fromEnv.includes("://") ? fromEnv : `http://${fromEnv}`);
}

function noProxyMatches(entry: string, host: string, port: string): boolean {
  if (entry === "*") return true;
  let pattern = entry;
  const portMatch = /^(.*):(\d+)$/.exec(entry);
  if (portMatch !== null && isIP(entry) !== 6) {
    if (portMatch[2] !== port) return false;
    pattern = portMatch[1]!;
  }
  if (isIP(pattern) !== 0) return pattern === host;
  const domain = pattern.replace(/^\*?\./, "");
  return host === domain || host.endsWith(`.${domain}`);
}

function checkedProxy(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`the proxy URL ${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(
      `the proxy URL ${text} has scheme ${url.protocol.slice(0, -1)}: only http and https proxies are supported`,
    );
  }
  return url;
}

/**
 * An agent whose every connection is a tunnel opened by `CONNECT host:port`
 * through `proxy` (with the URL's user and password as basic
 * `Proxy-Authorization`), then TLS to the API server for an https server.
 */
export function tunnelingAgent(proxy: URL, secure: boolean): http.Agent {
  const open = (
    options: { host?: string | null | undefined; port?: number | string | null | undefined },
    done: (error: Error | null, socket?: Duplex) => void,
    wrap: (socket: Duplex) => Duplex,
  ) => {
    const target = `${options.host}:${options.port}`;
    const headers: Record<string, string> = { Host: target };
    if (proxy.username !== "") {
      const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
      headers["Proxy-Authorization"] = `Basic ${Buffer.from(credentials).toString("base64")}`;
    }
    const request = (proxy.protocol === "https:" ? https : http).request({
      host: proxy.hostname,
      port: proxy.port || (proxy.protocol === "https:" ? 443 : 80),
      method: "CONNECT",
      path: target,
      headers,
      agent: false,
    });
    request.once("connect", (response, socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        done(new Error(`the proxy ${proxy.host} refused to connect to ${target}: ${response.statusCode}`));
        return;
      }
      done(null, wrap(socket));
    });
    request.once("error", (error) => done(new Error(`the proxy ${proxy.host}: ${error.message}`)));
    request.end();
  };
  // One agent either way; the tunnel to an https server carries TLS, to an http one the bytes as they are.
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  Object.assign(agent, {
    createConnection: (
      options: tls.ConnectionOptions,
      done: (error: Error | null, socket?: Duplex) => void,
    ) => {
      open(options, done, secure ? (socket) => tls.connect({ ...options, socket }) : (socket) => socket);
    },
  });
  return agent;
}
