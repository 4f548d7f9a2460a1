import { timingSafeEqual } from "node:crypto";
import type * as http from "node:http";
import type { TLSSocket } from "node:tls";
import { newUnauthorized, pods, secrets, serviceAccounts } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { Attributes } from "./attributes.js";
import { nodeRules } from "./bootstrap-policy.js";
import { type BootstrapStore, reconcileBootstrapPolicy } from "./bootstrap-reconcile.js";
import { NodeAuthorizer, nodeIdentity } from "./node-authorizer.js";
import { type Decision, RbacAuthorizer } from "./rbac-authorizer.js";
import type { RequestHeaderAuthenticator } from "./request-header.js";
import { defaultIssuer, ServiceAccountTokens, type TokenClaims } from "./tokens.js";
import { adminUser, allAuthenticated, anonymousUser, systemPrivilegedGroup, type UserInfo } from "./user.js";

const privilegedDecision: Decision = { allowed: true, reason: "" };

/** A static token and the user it stands for (kube-apiserver's `--token-auth-file`). */
export interface StaticTokenUser {
  token: string;
  user: { username: string; uid?: string | undefined; groups?: readonly string[] | undefined };
}

/**
 * Who may ask, and what they may do, for every listener of one API server:
 * the ServiceAccount token issuer, the RBAC authorizer over the server's own
 * roles and bindings, and the bootstrap policy reconciled once at first use.
 */
export class ClusterAuth {
  readonly tokens: ServiceAccountTokens;
  readonly rbac: RbacAuthorizer;
  /** The Node authorizer, ahead of RBAC in {@link authorize}. */
  readonly nodes: NodeAuthorizer;
  /** The audiences a token must name one of (kube-apiserver's `--api-audiences`). */
  readonly audiences: readonly string[];
  /** The server's own client (trusted, as kube-apiserver's loopback client). */
  readonly client: Client;
  readonly #client: Client;
  readonly #clock: Clock;
  readonly #denialListeners = new Set<(attributes: Attributes, reason: string) => void>();
  readonly #store: BootstrapStore | undefined;
  readonly #bootstrapped: (() => void) | undefined;
  #started: Promise<void> | undefined;
  #running = false;

  /** `store`: where the bootstrap policy may be written straight once this process has made it (see `reconcileBootstrapPolicy`). */
  constructor(options: {
    client: Client;
    clock: Clock;
    issuer?: string | undefined;
    store?: BootstrapStore | undefined;
    /** Called once the bootstrap policy is made, before the authorizer's caches fill. */
    bootstrapped?: (() => void) | undefined;
  }) {
    this.#bootstrapped = options.bootstrapped;
    this.client = options.client;
    this.#client = options.client;
    this.#clock = options.clock;
    this.#store = options.store;
    this.tokens = new ServiceAccountTokens(options.issuer ?? defaultIssuer);
    this.audiences = [this.tokens.issuer];
    this.rbac = new RbacAuthorizer(options.client, options.clock);
    this.nodes = new NodeAuthorizer(options.client, options.clock, nodeRules());
  }

  /**
   * kube-apiserver's default authorizer chain, `Node,RBAC`, behind the
   * privileged group: `system:masters` may do anything; a node's request is
   * the Node authorizer's to allow; otherwise RBAC decides. A denial carries
   * the Node authorizer's reason, when it gave one. Synchronous once the
   * caches are filled (the Node authorizer's when a node first asks).
   */
  authorize(attributes: Attributes): Decision | Promise<Decision> {
    if (attributes.user.groups.includes(systemPrivilegedGroup)) return privilegedDecision;
    if (!this.#running) return this.start().then(() => this.authorize(attributes));
    if (!this.nodes.synced && nodeIdentity(attributes.user) !== undefined)
      return this.nodes.ready().then(() => this.#decide(attributes));
    return this.#decide(attributes);
  }

  #decide(attributes: Attributes): Decision {
    const node = this.nodes.decide(attributes);
    if (node.allowed) return node;
    const rbac = this.rbac.decide(attributes);
    if (rbac.allowed) return rbac;
    // Each authorizer's reason, in chain order (upstream's union authorizer).
    return { allowed: false, reason: [node.reason, rbac.reason].filter((r) => r !== "").join("\n") };
  }

  /**
   * Tells `listener` of every request refused for want of permission (what
   * was asked, and the reason), as an audit log's Forbidden entries would —
   * not of the questions reviews and escalation checks ask. Returns how to
   * stop. A cluster's tests use it to show its own components lack nothing.
   */
  onDenied(listener: (attributes: Attributes, reason: string) => void): () => void {
    this.#denialListeners.add(listener);
    return () => this.#denialListeners.delete(listener);
  }

  /** A request was refused: tells the {@link onDenied} listeners. */
  denied(attributes: Attributes, reason: string): void {
    for (const listener of this.#denialListeners) listener(attributes, reason);
  }

  /** Reconciles the bootstrap policy and fills the authorizer's caches, once. */
  start(): Promise<void> {
    this.#started ??= reconcileBootstrapPolicy(this.#client, this.#store)
      .then(() => {
        this.#bootstrapped?.();
        return this.rbac.ready();
      })
      .then(() => {
        this.#running = true;
      });
    return this.#started;
  }

  /** Whether {@link start} has finished. */
  get running(): boolean {
    return this.#running;
  }

  async close(): Promise<void> {
    await Promise.all([this.rbac.close(), this.nodes.close()]);
  }

  now(): number {
    return this.#clock.now();
  }

  /**
   * The user of a ServiceAccount token, once its ServiceAccount (and the pod
   * or secret it is bound to) still exists with the uid it names (upstream's
   * `legacyValidator`/`validator`); undefined for a token this issuer did not
   * sign. A 401 for one it signed that is no longer valid.
   */
  async serviceAccountUser(token: string): Promise<UserInfo | undefined> {
    const claims = this.tokens.verify(token, this.#clock.now(), this.audiences);
    if (claims === undefined) return undefined;
    if (claims instanceof Error) throw newUnauthorized();
    await this.#checkBindings(claims, token);
    return ServiceAccountTokens.userOf(claims);
  }

  async #checkBindings(claims: TokenClaims, token: string): Promise<void> {
    const exists = async (
      get: () => Promise<{ metadata?: { uid?: string; deletionTimestamp?: string } }>,
      uid: string,
    ) => {
      const object = await get().catch(() => undefined);
      if (object?.metadata?.uid !== uid) throw newUnauthorized();
      return object;
    };
    const { namespace } = claims;
    if (claims.legacySecret !== undefined) {
      // The Secret must still hold this very token (upstream's legacyValidator).
      const secret = await this.#client
        .resource(secrets, namespace)
        .get(claims.legacySecret)
        .catch(() => undefined);
      const held = secret?.data?.token;
      if (secret?.metadata?.deletionTimestamp !== undefined || held === undefined) throw newUnauthorized();
      if (Buffer.from(held, "base64").toString() !== token) throw newUnauthorized();
    }
    await exists(
      () => this.#client.resource(serviceAccounts, namespace).get(claims.serviceAccount.name),
      claims.serviceAccount.uid,
    );
    if (claims.pod !== undefined) {
      const pod = await exists(
        () => this.#client.resource(pods, namespace).get(claims.pod!.name),
        claims.pod.uid,
      );
      if (pod.metadata?.deletionTimestamp !== undefined) throw newUnauthorized();
    }
    if (claims.secret !== undefined)
      await exists(
        () => this.#client.resource(secrets, namespace).get(claims.secret!.name),
        claims.secret.uid,
      );
  }
}

/** What the request handler knows of authentication. */
export interface Authentication {
  /** The admin's bearer token; undefined when the server runs without authentication. */
  adminToken: Buffer | undefined;
  staticTokens: ReadonlyMap<string, UserInfo>;
  auth: ClusterAuth;
  /** A front proxy's requests, trusted by its client certificate (`--requestheader-*`); undefined: none. */
  requestHeader?: RequestHeaderAuthenticator | undefined;
}

/** The static users by token, with `system:authenticated` added as upstream's token file authenticator does. */
export function staticTokenMap(users: readonly StaticTokenUser[] = []): Map<string, UserInfo> {
  const map = new Map<string, UserInfo>();
  for (const { token, user } of users) {
    const groups = [...(user.groups ?? [])];
    if (!groups.includes(allAuthenticated)) groups.push(allAuthenticated);
    map.set(token, { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups });
  }
  return map;
}

/**
 * The request's user (kube-apiserver's authenticator union, in its order):
 * a front proxy's user from its headers (its client certificate signed by
 * the request-header CA), a client certificate signed by the cluster CA (CN
 * the user, O the groups), then a bearer token — the admin token, a static
 * token, a ServiceAccount token — and anonymous without credentials. A bearer
 * token that no authenticator accepts is a 401, on every path.
 */
export function authenticate(
  request: http.IncomingMessage,
  authn: Authentication,
): UserInfo | Promise<UserInfo> {
  const proxied = authn.requestHeader?.authenticate(request);
  if (proxied !== undefined && proxied !== "no-user") return proxied;
  // A front proxy's certificate names no user of its own.
  const certificateUser = proxied === undefined ? clientCertificateUser(request) : undefined;
  if (certificateUser !== undefined) return certificateUser;
  const token = bearerToken(request);
  if (token === undefined) return anonymousUser;
  const bytes = Buffer.from(token);
  if (
    authn.adminToken !== undefined &&
    bytes.length === authn.adminToken.length &&
    timingSafeEqual(bytes, authn.adminToken)
  )
    return adminUser;
  const staticUser = authn.staticTokens.get(token);
  if (staticUser !== undefined) return staticUser;
  // Only a ServiceAccount token needs a look at the store (its ServiceAccount, pod or secret).
  return authn.auth.serviceAccountUser(token).then((serviceAccount) => {
    if (serviceAccount === undefined) throw newUnauthorized();
    return serviceAccount;
  });
}

/**
 * kube-apiserver's bearer token authenticator: the scheme in any case, one
 * space, a non-empty token (anything after a further space is ignored).
 */
function bearerToken(request: http.IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const [scheme, given] = header.trim().split(" ", 2);
  if (scheme?.toLowerCase() !== "bearer" || !given) return undefined;
  return given;
}

/** The user of a verified client certificate: CN the name, each O a group. */
function clientCertificateUser(request: http.IncomingMessage): UserInfo | undefined {
  const socket = request.socket as Partial<TLSSocket>;
  if (socket.authorized !== true || typeof socket.getPeerCertificate !== "function") return undefined;
  const certificate = socket.getPeerCertificate();
  const subject = certificate?.subject as unknown as
    | Record<string, string | string[] | undefined>
    | undefined;
  const name = subject?.CN;
  if (typeof name !== "string" || name === "") return undefined;
  const organizations = subject?.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
  return { username: name, groups: [...organizations, allAuthenticated] };
}
