import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { type ListeningApiServer, listen } from "../server.js";
import { auditLogBackend } from "./backend.js";
import type { AuditEvent } from "./event.js";
import type { AuditPolicy } from "./policy.js";

const started = Date.parse("2026-01-01T00:00:00Z");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const everything: AuditPolicy = { rules: [{ level: "RequestResponse" }] };

async function start(policy: AuditPolicy | string = everything, admissionPlugins?: string[]) {
  const api = new ApiServer({ clock: new FakeClock(started), admissionPlugins });
  const events: AuditEvent[] = [];
  const server = await listen(api, {
    token: "admin-token",
    users: [{ token: "jane-token", user: { username: "jane", uid: "u-1", groups: ["devs"] } }],
    audit: { policy, backend: { process: (event) => void events.push(event) } },
  });
  cleanups.push(async () => {
    await server.close();
    await api.close();
  });
  return { api, server, events };
}

async function call(
  server: ListeningApiServer,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? "admin-token"}`,
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  return { code: response.status, auditId: response.headers.get("audit-id"), text };
}

/** The events of the request with `auditId`, once its ResponseComplete (or last stage) is written. */
async function eventsOf(events: AuditEvent[], auditId: string | null, stages = 1): Promise<AuditEvent[]> {
  await expect.poll(() => events.filter((e) => e.auditID === auditId).length).toBe(stages);
  return events.filter((e) => e.auditID === auditId);
}

const admin = { username: "reconcile-admin", groups: ["system:masters", "system:authenticated"] };

describe("audit events (kube-apiserver's --audit-policy-file and log backend)", () => {
  it("records a create at RequestResponse: stages, user, objectRef, request and response objects, annotations", async () => {
    const { server, events } = await start();
    const answer = await call(server, "POST", "/api/v1/namespaces/default/configmaps?fieldManager=me", {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" }, data: { a: "b" } },
      headers: { "user-agent": "audit-test/1.0", "x-forwarded-for": "10.0.0.7, 10.0.0.8" },
    });
    expect(answer.code).toBe(201);
    expect(answer.auditId).toMatch(/^[0-9a-f-]{36}$/);
    const [received, complete] = await eventsOf(events, answer.auditId, 2);
    const created = JSON.parse(answer.text);
    expect(received).toEqual({
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "RequestResponse",
      auditID: answer.auditId,
      stage: "RequestReceived",
      requestURI: "/api/v1/namespaces/default/configmaps?fieldManager=me",
      verb: "create",
      user: admin,
      sourceIPs: ["10.0.0.7", "10.0.0.8", "127.0.0.1"],
      userAgent: "audit-test/1.0",
      objectRef: { resource: "configmaps", namespace: "default", apiVersion: "v1" },
      requestReceivedTimestamp: "2026-01-01T00:00:00.000000Z",
      stageTimestamp: "2026-01-01T00:00:00.000000Z",
    });
    expect(complete).toEqual({
      ...received,
      stage: "ResponseComplete",
      objectRef: { resource: "configmaps", namespace: "default", name: "cm", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" }, data: { a: "b" } },
      responseObject: created,
      annotations: { "authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": "" },
    });
    // The keys in the order kube-apiserver writes them.
    expect(Object.keys(complete!)).toEqual([
      "kind",
      "apiVersion",
      "level",
      "auditID",
      "stage",
      "requestURI",
      "verb",
      "user",
      "sourceIPs",
      "userAgent",
      "objectRef",
      "responseStatus",
      "requestObject",
      "responseObject",
      "requestReceivedTimestamp",
      "stageTimestamp",
      "annotations",
    ]);
  });

  it("answers every request with Audit-Id, the client's own when it sends one, audited or not", async () => {
    const { server, events } = await start({ rules: [{ level: "None" }] });
    const mine = await call(server, "GET", "/version", { headers: { "Audit-ID": "my-request-1" } });
    expect(mine.auditId).toBe("my-request-1");
    const other = await call(server, "GET", "/api/v1/namespaces");
    expect(other.auditId).toMatch(/^[0-9a-f-]{36}$/);
    expect(events).toEqual([]);
  });

  it("a failed request records its Status; a denied one the authorizer's decision and the impersonated user", async () => {
    const { server, events } = await start({
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata" }],
    });
    const missing = await call(server, "GET", "/api/v1/namespaces/default/pods/nope");
    const [notFound] = await eventsOf(events, missing.auditId);
    expect(notFound!.responseStatus).toEqual({
      metadata: {},
      status: "Failure",
      message: 'pods "nope" not found',
      reason: "NotFound",
      details: { name: "nope", kind: "pods" },
      code: 404,
    });
    expect(notFound!.requestObject).toBeUndefined();
    expect(notFound!.responseObject).toBeUndefined();

    const denied = await call(server, "GET", "/api/v1/namespaces/default/secrets", { token: "jane-token" });
    expect(denied.code).toBe(403);
    const [forbid] = await eventsOf(events, denied.auditId);
    expect(forbid).toMatchObject({
      verb: "list",
      user: { username: "jane", uid: "u-1", groups: ["devs", "system:authenticated"] },
      objectRef: { resource: "secrets", namespace: "default", apiVersion: "v1" },
      responseStatus: { code: 403, reason: "Forbidden" },
      annotations: { "authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": "" },
    });

    const impersonating = await call(server, "GET", "/api/v1/namespaces/default/configmaps", {
      headers: { "Impersonate-User": "jane" },
    });
    const [acting] = await eventsOf(events, impersonating.auditId);
    expect(acting!.user).toEqual(admin);
    expect(acting!.impersonatedUser).toEqual({ username: "jane", groups: ["system:authenticated"] });
    expect(acting!.annotations?.["authorization.k8s.io/decision"]).toBe("forbid");
  });

  it("a watch writes ResponseStarted when its stream opens and ResponseComplete when it ends", async () => {
    const { server, events } = await start({ rules: [{ level: "Metadata", verbs: ["watch"] }] });
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`, {
      headers: { authorization: "Bearer admin-token" },
      signal: controller.signal,
    });
    const auditId = response.headers.get("audit-id");
    await expect.poll(() => events.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseStarted"]);
    expect(events[1]).toMatchObject({
      auditID: auditId,
      verb: "watch",
      responseStatus: { metadata: {}, code: 200 },
    });
    controller.abort();
    await eventsOf(events, auditId, 3);
    expect(events[2]!.stage).toBe("ResponseComplete");
  });

  it("omitManagedFields leaves metadata.managedFields out of the objects, list items included", async () => {
    const { server, events } = await start({
      omitManagedFields: true,
      omitStages: ["RequestReceived"],
      rules: [{ level: "RequestResponse", resources: [{ resources: ["configmaps"] }] }],
    });
    const created = await call(server, "POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "cm" }, data: { a: "b" } },
    });
    const list = await call(server, "GET", "/api/v1/namespaces/default/configmaps");
    expect(JSON.parse(list.text).items[0].metadata.managedFields).toHaveLength(1);
    const [write] = await eventsOf(events, created.auditId);
    const [listed] = await eventsOf(events, list.auditId);
    expect((write!.responseObject as { metadata: object }).metadata).not.toHaveProperty("managedFields");
    const items = (listed!.responseObject as { items: { metadata: object }[] }).items;
    expect(items).toHaveLength(1);
    expect(items[0]!.metadata).toMatchObject({ name: "cm", namespace: "default" });
    expect(items[0]!.metadata).not.toHaveProperty("managedFields");
  });

  it("records PodSecurity's enforce-policy and audit-violations annotations", async () => {
    const { server, events } = await start({
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata", resources: [{ resources: ["pods"] }] }],
    });
    await call(server, "PATCH", "/api/v1/namespaces/default", {
      body: { metadata: { labels: { "pod-security.kubernetes.io/audit": "baseline" } } },
      headers: { "content-type": "application/merge-patch+json" },
    });
    const created = await call(server, "POST", "/api/v1/namespaces/default/pods", {
      body: {
        metadata: { name: "p" },
        spec: { hostNetwork: true, containers: [{ name: "c", image: "nginx" }] },
      },
    });
    expect(created.code).toBe(201);
    const [event] = await eventsOf(events, created.auditId);
    expect(event!.annotations).toEqual({
      "authorization.k8s.io/decision": "allow",
      "authorization.k8s.io/reason": "",
      "pod-security.kubernetes.io/audit-violations":
        'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
      "pod-security.kubernetes.io/enforce-policy": "privileged:latest",
    });
  });

  it("records a ValidatingAdmissionPolicy's Audit failures and its auditAnnotations", async () => {
    const { server, events } = await start({
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata", verbs: ["create"], resources: [{ resources: ["configmaps"] }] }],
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
      body: {
        metadata: { name: "labels" },
        spec: {
          matchConstraints: {
            resourceRules: [
              { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
            ],
          },
          validations: [
            { expression: "true" },
            { expression: "has(object.metadata.labels)", message: "needs labels" },
          ],
          auditAnnotations: [
            { key: "name", valueExpression: "object.metadata.name" },
            { key: "skipped", valueExpression: "null" },
          ],
        },
      },
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", {
      body: {
        metadata: { name: "labels-audit" },
        spec: { policyName: "labels", validationActions: ["Audit"] },
      },
    });
    // The policy takes effect once the admission chain's cache sees it.
    let n = 0;
    let event: AuditEvent | undefined;
    await expect
      .poll(async () => {
        const name = `cm-${n++}`;
        const answer = await call(server, "POST", "/api/v1/namespaces/default/configmaps", {
          body: { metadata: { name } },
        });
        [event] = await eventsOf(events, answer.auditId);
        return answer.code === 201 && event!.annotations?.["labels/name"] === name;
      })
      .toBe(true);
    expect(event!.annotations).toEqual({
      "authorization.k8s.io/decision": "allow",
      "authorization.k8s.io/reason": "",
      "labels/name": `cm-${n - 1}`,
      "validation.policy.admission.k8s.io/validation_failure":
        '[{"message":"needs labels","policy":"labels","binding":"labels-audit","expressionIndex":1,"validationActions":["Audit"]}]',
    });
  });

  it("a delete carries admission's warnings and audit annotations too", async () => {
    const { server, events } = await start({
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata", verbs: ["delete"] }],
    });
    await call(server, "POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "keep" } },
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
      body: {
        metadata: { name: "no-deletes" },
        spec: {
          matchConstraints: {
            resourceRules: [
              { operations: ["DELETE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
            ],
          },
          validations: [{ expression: "false", message: "deleting configmaps is watched" }],
        },
      },
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", {
      body: {
        metadata: { name: "warn-audit" },
        spec: { policyName: "no-deletes", validationActions: ["Warn", "Audit"] },
      },
    });
    let n = 0;
    let event: AuditEvent | undefined;
    let warning: string | null = null;
    await expect
      .poll(async () => {
        const name = `cm-${n++}`;
        await call(server, "POST", "/api/v1/namespaces/default/configmaps", { body: { metadata: { name } } });
        const response = await fetch(`${server.url}/api/v1/namespaces/default/configmaps/${name}`, {
          method: "DELETE",
          headers: { authorization: "Bearer admin-token" },
        });
        await response.text();
        warning = response.headers.get("warning");
        [event] = await eventsOf(events, response.headers.get("audit-id"));
        return warning !== null;
      })
      .toBe(true);
    expect(warning).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'no-deletes' with binding 'warn-audit': deleting configmaps is watched"`,
    );
    expect(event!.annotations?.["validation.policy.admission.k8s.io/validation_failure"]).toBe(
      '[{"message":"deleting configmaps is watched","policy":"no-deletes","binding":"warn-audit","expressionIndex":0,"validationActions":["Warn","Audit"]}]',
    );
  });

  it("records an admission webhook's auditAnnotations and each mutating call", async () => {
    const { api, server, events } = await start(
      {
        omitStages: ["RequestReceived"],
        rules: [{ level: "Metadata", verbs: ["create"], resources: [{ resources: ["configmaps"] }] }],
      },
      ["NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"],
    );
    const answer = (uid: string, extra: Record<string, unknown>) => ({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid, allowed: true, ...extra },
    });
    api.admissionWebhooks.serve("https://hooks.local/mutate", (review) =>
      answer((review.request as { uid: string }).uid, {}),
    );
    api.admissionWebhooks.serve("https://hooks.local/validate", (review) =>
      answer((review.request as { uid: string }).uid, { auditAnnotations: { checked: "yes" } }),
    );
    const rule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] };
    const hook = (name: string, url: string) => ({
      name,
      clientConfig: { url },
      rules: [rule],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
      body: {
        metadata: { name: "mutators" },
        webhooks: [hook("noop.example.com", "https://hooks.local/mutate")],
      },
    });
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
      body: {
        metadata: { name: "validators" },
        webhooks: [hook("check.example.com", "https://hooks.local/validate")],
      },
    });
    let n = 0;
    let event: AuditEvent | undefined;
    await expect
      .poll(async () => {
        const created = await call(server, "POST", "/api/v1/namespaces/default/configmaps", {
          body: { metadata: { name: `cm-${n++}` } },
        });
        [event] = await eventsOf(events, created.auditId);
        return Object.keys(event!.annotations ?? {}).length;
      })
      .toBe(4);
    expect(event!.annotations).toEqual({
      "authorization.k8s.io/decision": "allow",
      "authorization.k8s.io/reason": "",
      "check.example.com/checked": "yes",
      "mutation.webhook.admission.k8s.io/round_0_index_0":
        '{"configuration":"mutators","webhook":"noop.example.com","mutated":false}',
    });
  });

  it("records a mutating webhook's patch only at Request level and above", async () => {
    const { api, server, events } = await start(
      {
        omitStages: ["RequestReceived"],
        rules: [
          {
            level: "Request",
            verbs: ["create"],
            namespaces: ["default"],
            resources: [{ resources: ["configmaps"] }],
          },
          { level: "Metadata", verbs: ["create"], resources: [{ resources: ["configmaps"] }] },
        ],
      },
      ["NamespaceLifecycle", "MutatingAdmissionWebhook"],
    );
    const patch = [{ op: "add", path: "/metadata/labels", value: { stamped: "yes" } }];
    api.admissionWebhooks.serve("https://hooks.local/stamp", (review) => ({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: {
        uid: (review.request as { uid: string }).uid,
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
      },
    }));
    await call(server, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
      body: {
        metadata: { name: "stampers" },
        webhooks: [
          {
            name: "stamp.example.com",
            clientConfig: { url: "https://hooks.local/stamp" },
            rules: [
              { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
            ],
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
          },
        ],
      },
    });
    const createIn = async (namespace: string, name: string) => {
      const answer = await call(server, "POST", `/api/v1/namespaces/${namespace}/configmaps`, {
        body: { metadata: { name } },
      });
      return (await eventsOf(events, answer.auditId))[0]!.annotations ?? {};
    };
    let n = 0;
    await expect
      .poll(async () => Object.keys(await createIn("default", `cm-${n++}`)))
      .toContain("patch.webhook.admission.k8s.io/round_0_index_0");
    const atRequest = await createIn("default", "request-level");
    expect(JSON.parse(atRequest["patch.webhook.admission.k8s.io/round_0_index_0"]!)).toEqual({
      configuration: "stampers",
      webhook: "stamp.example.com",
      patch,
      patchType: "JSONPatch",
    });
    expect(atRequest["mutation.webhook.admission.k8s.io/round_0_index_0"]).toBe(
      '{"configuration":"stampers","webhook":"stamp.example.com","mutated":true}',
    );
    const atMetadata = await createIn("kube-public", "metadata-level");
    expect(Object.keys(atMetadata).sort()).toEqual([
      "authorization.k8s.io/decision",
      "authorization.k8s.io/reason",
      "mutation.webhook.admission.k8s.io/round_0_index_0",
    ]);
  });

  it("auditLogBackend appends one JSON event per line, closed with the server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "audit.log");
    const api = new ApiServer({ clock: new FakeClock(started) });
    const server = await listen(api, {
      audit: {
        policy: "rules:\n- level: Metadata\n  omitStages: [RequestReceived]\n",
        backend: auditLogBackend(path),
      },
    });
    const first = await fetch(`${server.url}/api/v1/namespaces`);
    const second = await fetch(`${server.url}/healthz`);
    await server.close();
    await api.close();
    const lines = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((e) => [e.auditID, e.verb, e.requestURI, e.responseStatus.code, e.user])).toEqual([
      [
        first.headers.get("audit-id"),
        "list",
        "/api/v1/namespaces",
        200,
        { username: "system:anonymous", groups: ["system:unauthenticated"] },
      ],
      [
        second.headers.get("audit-id"),
        "get",
        "/healthz",
        200,
        { username: "system:anonymous", groups: ["system:unauthenticated"] },
      ],
    ]);
  });

  it("audits a request target it cannot read as a 400, and takes no unprintable Audit-ID", async () => {
    const { server, events } = await start({
      omitStages: ["RequestReceived"],
      rules: [{ level: "Metadata" }],
    });
    const answers: string[] = [];
    for (const target of ["http://[bad/x", "*", "/api/v1/%zz"]) {
      answers.push(
        await new Promise<string>((resolve, reject) => {
          const socket = connect(server.port, server.host, () =>
            socket.write(
              `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAudit-ID: a\tb\r\nConnection: close\r\n\r\n`,
            ),
          );
          let text = "";
          socket.on("data", (chunk) => (text += chunk));
          socket.on("close", () => resolve(text.split("\r\n")[0]!));
          socket.on("error", reject);
        }),
      );
    }
    expect(answers).toEqual([
      "HTTP/1.1 400 Bad Request",
      "HTTP/1.1 400 Bad Request",
      "HTTP/1.1 400 Bad Request",
    ]);
    await expect.poll(() => events.length).toBe(3);
    expect(events.map((e) => [e.requestURI, e.responseStatus?.code, e.user])).toEqual([
      ["http://[bad/x", 400, {}],
      ["*", 400, {}],
      ["/api/v1/%zz", 400, {}],
    ]);
    expect(events.every((e) => /^[0-9a-f-]{36}$/.test(e.auditID))).toBe(true);
  });

  it("refuses to listen with a policy that does not load", async () => {
    const api = new ApiServer();
    cleanups.push(() => api.close());
    await expect(
      listen(api, { audit: { policy: "rules: [{level: Loud}]", backend: { process() {} } } }),
    ).rejects.toThrow('invalid audit policy: rules[0].level: Unsupported value: "Loud"');
  });
});
