import { randomUUID } from "node:crypto";
import type * as http from "node:http";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import type { Status } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import { parse as parseYaml } from "yaml";
import { protobufMediaType } from "../../protobuf/decode.js";
import { type AuthorizationAudit, requestAttributes } from "../auth/request-auth.js";
import type { UserInfo } from "../auth/user.js";
import { decodeObjectBody } from "../request-body.js";
import {
  type AuditLevel,
  type AuditPolicy,
  type AuditRequestAttributes,
  type AuditStage,
  auditLevels,
  evaluateAuditPolicy,
  loadAuditPolicy,
  type RequestAuditConfig,
} from "./policy.js";

/** An `audit.k8s.io/v1` Event, its fields in the order kube-apiserver writes them. */
export interface AuditEvent {
  kind: "Event";
  apiVersion: "audit.k8s.io/v1";
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: Partial<UserInfo>;
  impersonatedUser?: UserInfo | undefined;
  sourceIPs?: string[] | undefined;
  userAgent?: string | undefined;
  objectRef?: AuditObjectReference | undefined;
  responseStatus?: Record<string, unknown> | undefined;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string> | undefined;
}

/** Where audit events go (upstream's `audit.Backend`): a log file, a webhook, a test's array. */
export interface AuditBackend {
  /** Takes one event; must not throw (a failing backend must not fail the request). */
  process(event: AuditEvent): void;
  /** Flushes and releases what the backend holds; called when the server closes. */
  close?(): Promise<void>;
}

/** What a resource request names (upstream's `audit.ObjectReference`). */
export interface AuditObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** How the API server audits: the policy deciding each request's level, and where events go. */
export interface AuditOptions {
  /** An `audit.k8s.io/v1` Policy, or its YAML or JSON text (what `--audit-policy-file` holds). */
  policy: AuditPolicy | string;
  /** Where events go: {@link auditLogBackend} for kube-apiserver's `--audit-log-path`, or your own. */
  backend: AuditBackend;
}

/** The response header every answer carries its request's audit ID in (upstream's `Audit-ID`). */
export const auditIdHeader = "Audit-Id";

/** Subresources whose requests run long, as upstream's `LongRunningFunc` names them. */
const longRunningSubresources = new Set(["attach", "exec", "log", "portforward", "proxy"]);

/** The audit of each request a handler answers, by its response. */
const audits = new WeakMap<http.ServerResponse, RequestAudit>();

/** The audit of the request `response` answers, when the server audits it. */
export function auditOf(response: http.ServerResponse): RequestAudit | undefined {
  return audits.get(response);
}

/**
 * The API server's audit (kube-apiserver's `WithAudit` filters): a policy
 * and a backend, and the audit of each request begun with {@link begin}.
 */
export class Auditor {
  readonly policy: AuditPolicy;
  readonly backend: AuditBackend;
  readonly clock: Clock;

  constructor(options: AuditOptions, clock: Clock) {
    this.policy = loadAuditPolicy(options.policy);
    this.backend = options.backend;
    this.clock = clock;
  }

  /** Starts the audit of one request answered through `response`: its ID, the time it arrived, what it asks. */
  begin(request: http.IncomingMessage, response: http.ServerResponse, auditID: string): RequestAudit {
    const audit = new RequestAudit(this, request, auditID, () => response.statusCode);
    audits.set(response, audit);
    if (audit.longRunning) {
      // ResponseStarted when the answer's headers go out (a write without writeHead calls it too).
      const writeHead = response.writeHead;
      response.writeHead = ((...args: Parameters<typeof writeHead>) => {
        response.writeHead = writeHead;
        const result = writeHead.apply(response, args);
        audit.started();
        return result;
      }) as typeof writeHead;
    }
    response.once("close", () => {
      audits.delete(response);
      audit.completed();
    });
    return audit;
  }

  /**
   * Starts the audit of an upgrade (exec, attach, port-forward over
   * WebSocket): `upgraded()` once the protocol switched (ResponseStarted,
   * code 101), `refused(status)` if it was answered with a Status instead,
   * and the ResponseComplete event when `socket` closes.
   */
  beginUpgrade(request: http.IncomingMessage, socket: Duplex, auditID: string): UpgradeAudit {
    let code = 101;
    const audit = new RequestAudit(this, request, auditID, () => code) as UpgradeAudit;
    audit.upgraded = () => audit.started();
    audit.refused = (status) => {
      code = status.code ?? 500;
      audit.responded(() => ({ kind: "Status", ...status }));
    };
    socket.once("close", () => audit.completed());
    return audit;
  }
}

/** A request's body as read, and how to decode it if it is protobuf. */
interface RequestBody {
  bytes: Buffer;
  contentType: string | undefined;
  messageOf: (apiVersion: string, kind: string) => string | undefined;
}

/** The audit of an upgrade request (see {@link Auditor.beginUpgrade}). */
export interface UpgradeAudit extends RequestAudit {
  upgraded(): void;
  refused(status: Status): void;
}

/**
 * The ID a request is audited under: the one its client sent in `Audit-ID`,
 * or a new UUID; answered in the `Audit-Id` header of every response, as
 * kube-apiserver's `WithAuditInit` does whether or not it audits.
 */
export function auditIdOf(request: http.IncomingMessage, response: http.ServerResponse): string {
  const id = auditIdFor(request);
  response.setHeader(auditIdHeader, id);
  return id;
}

/**
 * The ID a request is audited under: its client's `Audit-ID` (printable
 * ASCII, at most 256 characters, so that it fits a header and a log line),
 * or a new UUID.
 */
export function auditIdFor(request: http.IncomingMessage): string {
  const sent = request.headers["audit-id"];
  return typeof sent === "string" && /^[\x21-\x7e][\x20-\x7e]{0,255}$/.test(sent)
    ? sent.trimEnd()
    : randomUUID();
}

/**
 * One request's audit: it evaluates the policy once the user is known (the
 * `RequestReceived` stage), gathers the authorization decision, admission's
 * annotations, the request and response bodies as its level asks, and writes
 * `ResponseStarted` (long-running requests) and `ResponseComplete` events.
 */
export class RequestAudit implements AuthorizationAudit {
  readonly #auditor: Auditor;
  readonly #request: http.IncomingMessage;
  readonly #code: () => number;
  readonly #attributes: AuditRequestAttributes;
  readonly #apiVersion: string;
  readonly #received: string;
  /** A watch, or a log, exec, attach, port-forward or proxy connection: its answer starts before it ends. */
  readonly longRunning: boolean;
  #completed = false;
  #config: RequestAuditConfig | undefined;
  #user: UserInfo | undefined;
  #impersonatedUser: UserInfo | undefined;
  #requestBody: RequestBody | undefined;
  #responseBody: (() => unknown) | undefined;
  /** What admission and authorization add (`authorization.k8s.io/decision`, `pod-security.kubernetes.io/…`). */
  readonly annotations: Record<string, string> = {};
  /** The least level of the annotations recorded only above Metadata. */
  readonly #annotationLevels = new Map<string, AuditLevel>();
  readonly auditID: string;

  constructor(auditor: Auditor, request: http.IncomingMessage, auditID: string, code: () => number) {
    this.#auditor = auditor;
    this.#request = request;
    this.#code = code;
    this.auditID = auditID;
    this.#received = microTime(auditor.clock.now());
    // Any target node:http accepted: one URL cannot read is audited as `/`.
    const url = URL.canParse(request.url ?? "/", "http://audit")
      ? new URL(request.url ?? "/", "http://audit")
      : new URL("http://audit/");
    const [asked] = requestAttributes(
      { username: "", groups: [] },
      request.method ?? "GET",
      url.pathname,
      url.searchParams,
    );
    this.#attributes = { ...asked!, user: undefined };
    const segments = url.pathname.split("/");
    this.#apiVersion =
      segments[1] === "api" ? (segments[2] ?? "") : segments[1] === "apis" ? (segments[3] ?? "") : "";
    this.longRunning =
      this.#attributes.verb === "watch" ||
      (this.#attributes.resourceRequest && longRunningSubresources.has(this.#attributes.subresource));
  }

  /** The user authentication found: the policy decides the level now, and `RequestReceived` is written. */
  authenticated(user: UserInfo): void {
    if (this.#config !== undefined) return;
    this.#user = user;
    this.#evaluate();
    this.#emit("RequestReceived");
  }

  /** The user the request acts as, after impersonation. */
  impersonated(user: UserInfo): void {
    this.#impersonatedUser = user;
  }

  /** The authorizer's decision, as the `authorization.k8s.io/…` annotations. */
  authorized(allowed: boolean, reason: string): void {
    this.annotations["authorization.k8s.io/decision"] = allowed ? "allow" : "forbid";
    this.annotations["authorization.k8s.io/reason"] = reason;
  }

  /**
   * Adds an annotation; a key set already keeps its first value, as upstream's
   * `AddAuditAnnotation`. One with a `level` goes only into events of that
   * level and above (`AddAnnotationWithLevel`).
   */
  annotate(key: string, value: string, level: AuditLevel = "Metadata"): void {
    if (Object.hasOwn(this.annotations, key)) return;
    this.annotations[key] = value;
    if (level !== "Metadata") this.#annotationLevels.set(key, level);
  }

  /** The request's body (decoded with `messageOf` if protobuf), recorded at `Request` level and above. */
  requestBody(
    bytes: Buffer,
    contentType: string | undefined,
    messageOf: (apiVersion: string, kind: string) => string | undefined,
  ): void {
    this.#requestBody = { bytes, contentType, messageOf };
  }

  /** The response's body (made only if the level records it). */
  responded(body: () => unknown): void {
    this.#responseBody = body;
  }

  #evaluate(): RequestAuditConfig {
    this.#config ??= evaluateAuditPolicy(this.#auditor.policy, { ...this.#attributes, user: this.#user });
    return this.#config;
  }

  /** A long-running answer has begun: ResponseStarted. */
  started(): void {
    if (this.longRunning && !this.#completed) this.#emit("ResponseStarted");
  }

  /** The answer is over (or its connection gone): ResponseComplete, once. */
  completed(): void {
    if (this.#completed) return;
    this.#completed = true;
    this.#evaluate();
    this.#emit("ResponseComplete");
  }

  #emit(stage: AuditStage): void {
    const config = this.#config;
    if (config === undefined || config.level === "None" || config.omitStages.has(stage)) return;
    // Built in the order kube-apiserver writes the fields.
    const event: Partial<AuditEvent> = {
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: config.level,
      auditID: this.auditID,
      stage,
      requestURI: this.#request.url ?? "/",
      verb: this.#attributes.verb,
      user: this.#user === undefined ? {} : userOf(this.#user),
    };
    if (this.#impersonatedUser !== undefined) event.impersonatedUser = userOf(this.#impersonatedUser);
    event.sourceIPs = sourceIPs(this.#request);
    const userAgent = this.#request.headers["user-agent"];
    if (userAgent) event.userAgent = userAgent;
    const writesObject = this.#attributes.verb === "create" || this.#attributes.verb === "update";
    const requestObject =
      stage === "RequestReceived" || !(writesObject || atLeast(config.level, "Request"))
        ? undefined
        : this.#requestObject(config);
    if (this.#attributes.resourceRequest) event.objectRef = this.#objectRef(requestObject);
    if (stage !== "RequestReceived") event.responseStatus = this.#responseStatus();
    if (requestObject !== undefined && atLeast(config.level, "Request")) event.requestObject = requestObject;
    if (
      stage === "ResponseComplete" &&
      this.#responseBody !== undefined &&
      atLeast(config.level, "RequestResponse")
    ) {
      const body = this.#responseBody();
      if (body !== null && typeof body === "object")
        event.responseObject = config.omitManagedFields ? withoutManagedFields(body) : body;
    }
    event.requestReceivedTimestamp = this.#received;
    event.stageTimestamp = microTime(this.#auditor.clock.now());
    const keys = Object.keys(this.annotations).filter((key) =>
      atLeast(config.level, this.#annotationLevels.get(key) ?? "Metadata"),
    );
    if (stage !== "RequestReceived" && keys.length > 0) {
      event.annotations = {};
      for (const key of keys.sort()) event.annotations[key] = this.annotations[key]!;
    }
    try {
      this.#auditor.backend.process(event as AuditEvent);
    } catch {
      // A backend that fails loses its event, never the request.
    }
  }

  /**
   * The request's body as JSON: an object, or a JSON patch's operations;
   * undefined when there is none or the server could not read it.
   */
  #requestObject(config: RequestAuditConfig): object | undefined {
    const body = this.#requestBody;
    const { verb, resourceRequest } = this.#attributes;
    if (resourceRequest && (verb === "delete" || verb === "deletecollection")) {
      // A delete's request object is its DeleteOptions, typed as upstream encodes them (none sent: empty ones).
      const options = body === undefined || body.bytes.length === 0 ? {} : this.#decode(body);
      if (options === undefined || Array.isArray(options)) return undefined;
      return { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", ...options };
    }
    if (body === undefined || body.bytes.length === 0) return undefined;
    const parsed = this.#decode(body);
    if (parsed === undefined) return undefined;
    return config.omitManagedFields && !Array.isArray(parsed) ? withoutManagedFields(parsed) : parsed;
  }

  /** A body as JSON: an object or an array; undefined if it is neither, or cannot be read. */
  #decode(body: RequestBody): object | undefined {
    let parsed: unknown;
    try {
      const type = body.contentType ?? "";
      if (type.startsWith(protobufMediaType)) parsed = decodeObjectBody(type, body.bytes, body.messageOf);
      else {
        const text = body.bytes.toString("utf8");
        parsed = /yaml/i.test(type) ? parseYaml(text) : JSON.parse(text);
      }
    } catch {
      return undefined;
    }
    return parsed === null || typeof parsed !== "object" ? undefined : parsed;
  }

  /** What the request names, completed from a created or replaced object's metadata (upstream's `LogRequestObject`). */
  #objectRef(requestObject: object | undefined): AuditObjectReference {
    const attributes = this.#attributes as Extract<AuditRequestAttributes, { resourceRequest: true }>;
    const metadata =
      attributes.verb === "create" || attributes.verb === "update"
        ? ((requestObject as { metadata?: Record<string, unknown> } | undefined)?.metadata ?? undefined)
        : undefined;
    const text = (value: unknown) => (typeof value === "string" ? value : "");
    const reference: AuditObjectReference = {};
    const fields: [keyof AuditObjectReference, string][] = [
      ["resource", attributes.resource],
      ["namespace", attributes.namespace || text(metadata?.namespace)],
      ["name", attributes.name || (attributes.subresource === "" ? text(metadata?.name) : "")],
      ["uid", attributes.subresource === "" ? text(metadata?.uid) : ""],
      ["apiGroup", attributes.apiGroup],
      ["apiVersion", this.#apiVersion],
      ["resourceVersion", attributes.subresource === "" ? text(metadata?.resourceVersion) : ""],
      ["subresource", attributes.subresource],
    ];
    for (const [key, value] of fields) if (value !== "") reference[key] = value;
    return reference;
  }

  /** The answer's code, and for a Status its status, message, reason and details (upstream's `LogResponseObject`). */
  #responseStatus(): Record<string, unknown> {
    const body = this.#responseBody?.();
    const out: Record<string, unknown> = { metadata: {} };
    if (body !== null && typeof body === "object" && (body as { kind?: unknown }).kind === "Status") {
      const status = body as Record<string, unknown>;
      for (const key of ["status", "message", "reason", "details"])
        if (status[key] !== undefined) out[key] = status[key];
    }
    out.code = this.#code();
    return out;
  }
}

function atLeast(level: AuditLevel, least: AuditLevel): boolean {
  return auditLevels.indexOf(level) >= auditLevels.indexOf(least);
}

function userOf(user: UserInfo): UserInfo {
  const out: UserInfo = { username: user.username } as UserInfo;
  if (user.uid) out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  if (user.extra !== undefined && Object.keys(user.extra).length > 0) out.extra = user.extra;
  return out;
}

/** An object (or a list's items) without `metadata.managedFields`. */
function withoutManagedFields(body: object): object {
  const strip = (object: unknown): unknown => {
    if (object === null || typeof object !== "object") return object;
    const metadata = (object as { metadata?: Record<string, unknown> }).metadata;
    if (metadata === undefined || metadata === null || !("managedFields" in metadata)) return object;
    const { managedFields: _, ...rest } = metadata;
    return { ...object, metadata: rest };
  };
  const items = (body as { items?: unknown }).items;
  const stripped = strip(body) as Record<string, unknown>;
  return Array.isArray(items) ? { ...stripped, items: items.map(strip) } : stripped;
}

/** `2026-11-30T17:11:27.123000Z`: Go's `metav1.MicroTime` in UTC. */
function microTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}000Z`;
}

/**
 * The addresses a request came from (upstream's `utilnet.SourceIPs`): those
 * `X-Forwarded-For` lists, `X-Real-Ip` if not among them, and the peer's
 * address unless it is the last already.
 */
export function sourceIPs(request: http.IncomingMessage): string[] {
  const ips: string[] = [];
  const forwarded = request.headers["x-forwarded-for"];
  for (const part of (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? "")).split(",")) {
    const ip = plainIp(part.trim());
    if (ip !== undefined) ips.push(ip);
  }
  const real = request.headers["x-real-ip"];
  const realIp = typeof real === "string" ? plainIp(real.trim()) : undefined;
  if (realIp !== undefined && !ips.includes(realIp)) ips.push(realIp);
  const remote = plainIp(request.socket?.remoteAddress ?? "");
  if (remote !== undefined && ips.at(-1) !== remote) ips.push(remote);
  return ips;
}

/** An address as Go prints it (an IPv4-mapped IPv6 address in dotted form); undefined if not one. */
function plainIp(text: string): string | undefined {
  if (isIP(text) === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  return mapped ? mapped[1] : text;
}
