import type * as http from "node:http";
import { errorMessage, subjectAccessReviews, tokenReviews } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";

/** The verdict on one request to a protected path. */
export type ServingVerdict = { allowed: true } | { allowed: false; status: 401 | 403; message: string };

/** Decides whether a request may read a path of the metrics and health server. */
export type ServingAuthorizer = (request: http.IncomingMessage, path: string) => Promise<ServingVerdict>;

export interface DelegatedAuthOptions {
  /** A client of the API server that reviews tokens and access (an `HttpClient`). */
  client: Client;
  /** Paths anyone may read. Default: `/healthz`, `/readyz`, `/livez` (upstream's `--authorization-always-allow-paths`). */
  alwaysAllowPaths?: readonly string[] | undefined;
  /** How long a review's answer is kept. Default: 10 s, as upstream's caches. */
  cacheTtlMs?: number | undefined;
  clock?: Clock | undefined;
}

interface User {
  username: string;
  uid?: string | undefined;
  groups?: string[] | undefined;
  extra?: Record<string, string[]> | undefined;
}

/**
 * kube-controller-manager's (and controller-runtime's
 * `filters.WithAuthenticationAndAuthorization`) delegated authentication and
 * authorization of its metrics server: the bearer token is reviewed by the
 * API server (TokenReview), and the user must be allowed `get` on the path
 * (SubjectAccessReview of a non-resource URL). A request without a token is
 * `system:anonymous`. Answers are cached for 10 s. The health paths are open.
 */
export function delegatedAuthorizer(options: DelegatedAuthOptions): ServingAuthorizer {
  const open = new Set(options.alwaysAllowPaths ?? ["/healthz", "/readyz", "/livez"]);
  const ttl = options.cacheTtlMs ?? 10_000;
  const clock = options.clock ?? realClock;
  const users = new Map<string, { at: number; user: User | undefined }>();
  const decisions = new Map<string, { at: number; allowed: boolean }>();
  const fresh = (at: number) => clock.now() - at < ttl;
  const authenticate = async (token: string): Promise<User | undefined> => {
    const cached = users.get(token);
    if (cached !== undefined && fresh(cached.at)) return cached.user;
    const review = await options.client.resource(tokenReviews).create({ spec: { token } });
    const user = review.status?.authenticated === true ? (review.status.user as User) : undefined;
    if (users.size >= 1_000) users.clear();
    users.set(token, { at: clock.now(), user });
    return user;
  };
  const authorize = async (user: User, path: string): Promise<boolean> => {
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, path]);
    const cached = decisions.get(key);
    if (cached !== undefined && fresh(cached.at)) return cached.allowed;
    const review = await options.client.resource(subjectAccessReviews).create({
      spec: {
        user: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(user.groups ? { groups: user.groups } : {}),
        ...(user.extra ? { extra: user.extra } : {}),
        nonResourceAttributes: { path, verb: "get" },
      },
    });
    const allowed = review.status?.allowed === true;
    if (decisions.size >= 1_000) decisions.clear();
    decisions.set(key, { at: clock.now(), allowed });
    return allowed;
  };
  return async (request, path) => {
    if (
      open.has(path) ||
      [...open].some((prefix) => prefix.endsWith("*") && path.startsWith(prefix.slice(0, -1)))
    ) {
      return { allowed: true };
    }
    const header = request.headers.authorization ?? "";
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    let user: User = { username: "system:anonymous", groups: ["system:unauthenticated"] };
    try {
      if (token !== undefined) {
        const reviewed = await authenticate(token);
        if (reviewed === undefined) return { allowed: false, status: 401, message: "Unauthorized" };
        user = reviewed;
      }
      if (await authorize(user, path)) return { allowed: true };
    } catch (error) {
      return {
        allowed: false,
        status: 403,
        message: `the API server could not review the request: ${errorMessage(error)}`,
      };
    }
    return {
      allowed: false,
      status: 403,
      message: `forbidden: User "${user.username}" cannot get path "${path}"`,
    };
  };
}
