import { timingSafeEqual } from "node:crypto";
import type * as http from "node:http";
import { isIPv4, isIPv6 } from "node:net";
import { newBadRequest, newUnauthorized, StatusError } from "@reconcile/api";

/**
 * Who may ask: with a token, every request but the public ones (health,
 * version) must carry it as a bearer token, else a 401; without one, only
 * requests addressed to a loopback name or address are answered, else a 403,
 * so a web page cannot reach the server through DNS rebinding.
 */
export function checkHost(request: http.IncomingMessage, token: Buffer | undefined): void {
  if (token !== undefined) return;
  const host = request.headers.host;
  if (isLoopbackHost(host)) return;
  request.resume();
  throw new StatusError({
    code: 403,
    reason: "Forbidden",
    message: `the Host ${JSON.stringify(host ?? "")} is not a loopback name or address; a server without a token answers only requests addressed to localhost`,
  });
}

/** A 401 for a request to a non-public path that does not carry the server's token. */
export function checkToken(
  request: http.IncomingMessage,
  token: Buffer | undefined,
  isPublic: boolean,
): void {
  if (token === undefined || isPublic || isAuthorized(request, token)) return;
  request.resume();
  throw newUnauthorized();
}

/**
 * The path and query of a request target, the path exactly as sent. Only the
 * origin form (`/path?query`) and the absolute form (`http://host/path`) name
 * a resource; anything else (`//x`, `*`, `http://[`) is a 400.
 */
export function splitTarget(target: string): { pathname: string; search: string } {
  let rest = target;
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (absolute !== null) {
    if (!URL.canParse(absolute[0]))
      throw newBadRequest(`the request target ${JSON.stringify(target)} is malformed`);
    rest = target.slice(absolute[0].length) || "/";
  }
  if (!rest.startsWith("/") || rest.startsWith("//"))
    throw newBadRequest(`the request target ${JSON.stringify(target)} is not a path`);
  const question = rest.indexOf("?");
  return question === -1
    ? { pathname: rest, search: "" }
    : { pathname: rest.slice(0, question), search: rest.slice(question + 1) };
}

/**
 * kube-apiserver's bearer token authenticator: the scheme in any case, one
 * space, a non-empty token (anything after a further space is ignored).
 */
function isAuthorized(request: http.IncomingMessage, token: Buffer): boolean {
  const header = request.headers.authorization;
  if (header === undefined) return false;
  const [scheme, given] = header.trim().split(" ", 2);
  if (scheme?.toLowerCase() !== "bearer" || !given) return false;
  const bytes = Buffer.from(given);
  return bytes.length === token.length && timingSafeEqual(bytes, token);
}

/**
 * Whether a Host header names this machine: `localhost` (and `*.localhost`,
 * which browsers resolve to loopback themselves), 127.0.0.0/8 or ::1. A page
 * that rebinds its own name to 127.0.0.1 still sends its own name.
 */
function isLoopbackHost(header: string | undefined): boolean {
  if (header === undefined) return false;
  let host = header.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end === -1) return false;
    host = host.slice(1, end);
    return (
      isIPv6(host) && (host === "::1" || /^::ffff:127\.[0-9.]+$/.test(host) || host === "0:0:0:0:0:0:0:1")
    );
  }
  const colon = host.lastIndexOf(":");
  if (colon !== -1) host = host.slice(0, colon);
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIPv4(host) && host.startsWith("127.");
}
