import * as https from "node:https";
import type { AddressInfo } from "node:net";
import {
  configMaps,
  mutatingWebhookConfigurations,
  pods,
  services,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import type {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from "kubernetes-types/admissionregistration/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { generateServingCertificates } from "../../http/tls.js";
import type { Review } from "./transport.js";

// Webhooks as upstream's test/integration/apiserver/admissionwebhook exercises them: over HTTPS with a
// caBundle, through a Service, and in process.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function newServer(): ApiServer {
  const server = new ApiServer({
    admissionPlugins: ["NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"],
  });
  cleanups.push(() => server.close());
  return server;
}

/** An HTTPS webhook server on loopback answering with `answer`; what it received is kept. */
async function webhookServer(answer: (request: Record<string, unknown>) => Record<string, unknown>) {
  const certificates = await generateServingCertificates({ dnsNames: ["localhost", "hook.default.svc"] });
  const received: Review[] = [];
  const paths: string[] = [];
  const server = https.createServer(
    { cert: certificates.serving.cert, key: certificates.serving.key },
    (req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      req.on("end", () => {
        const review = JSON.parse(body) as Review;
        received.push(review);
        paths.push(req.url ?? "");
        const request = review.request as Record<string, unknown>;
        res.setHeader("Content-Type", "application/json");
        res.end(
          JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: { uid: request.uid, ...answer(request) },
          }),
        );
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return { port, received, paths, caBundle: Buffer.from(certificates.ca.cert).toString("base64") };
}

const podRule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] };
const container = { name: "c", image: "nginx" };
const patchOf = (ops: unknown[]) => Buffer.from(JSON.stringify(ops)).toString("base64");

describe("ValidatingAdmissionWebhook over HTTPS", () => {
  it("sends upstream's AdmissionReview and refuses with the webhook's status, as upstream words it", async () => {
    const hook = await webhookServer((request) =>
      (request.object as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.deny === "true"
        ? {
            allowed: false,
            status: { code: 403, reason: "Forbidden", message: "pods labelled deny are not welcome" },
          }
        : { allowed: true, warnings: ["looked at it"] },
    );
    const server = newServer();
    const client = server.client();
    await client.resource(validatingWebhookConfigurations).create({
      metadata: { name: "deny" },
      webhooks: [
        {
          name: "deny.example.com",
          clientConfig: { url: `https://localhost:${hook.port}/validate`, caBundle: hook.caBundle },
          rules: [podRule],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    } as ValidatingWebhookConfiguration);
    const stored = (await client
      .resource(validatingWebhookConfigurations)
      .get("deny")) as ValidatingWebhookConfiguration;
    expect(stored.webhooks?.[0]).toMatchObject({
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      rules: [{ ...podRule, scope: "*" }],
    });

    const warnings: string[] = [];
    await client
      .resource(pods, "default")
      .create({ metadata: { name: "ok" }, spec: { containers: [container] } }, { warnings } as never);
    expect(warnings).toEqual(["looked at it"]);
    await expect(
      client
        .resource(pods, "default")
        .create({ metadata: { name: "bad", labels: { deny: "true" } }, spec: { containers: [container] } }),
    ).rejects.toMatchObject({
      code: 403,
      reason: "Forbidden",
      message: 'admission webhook "deny.example.com" denied the request: pods labelled deny are not welcome',
    });
    expect(hook.paths[0]).toBe("/validate?timeout=10s");
    const request = hook.received[0]!.request as Record<string, unknown>;
    expect(request).toMatchObject({
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      requestKind: { group: "", version: "v1", kind: "Pod" },
      requestResource: { group: "", version: "v1", resource: "pods" },
      name: "ok",
      namespace: "default",
      operation: "CREATE",
      oldObject: null,
      dryRun: false,
      options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
    });
    expect(typeof request.uid).toBe("string");
    // The webhook saw the object as it is about to be stored: defaulted and prepared.
    expect((request.object as { status?: { phase?: string } }).status?.phase).toBe("Pending");
    // Other kinds are not sent.
    await client.resource(configMaps, "default").create({ metadata: { name: "cm" } });
    expect(hook.received).toHaveLength(2);
  });

  it("fails closed with upstream's 500 when the webhook cannot be reached, and open with failurePolicy Ignore", async () => {
    const server = newServer();
    const client = server.client();
    const webhook = (failurePolicy: string) => ({
      name: "down.example.com",
      clientConfig: { url: "https://127.0.0.1:1/" },
      rules: [podRule],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      failurePolicy,
    });
    await client
      .resource(validatingWebhookConfigurations)
      .create({ metadata: { name: "down" }, webhooks: [webhook("Fail")] } as ValidatingWebhookConfiguration);
    const refused = client
      .resource(pods, "default")
      .create({ metadata: { name: "p" }, spec: { containers: [container] } });
    await expect(refused).rejects.toMatchObject({
      code: 500,
      reason: "InternalError",
      message: expect.stringMatching(
        /^Internal error occurred: failed calling webhook "down\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/\?timeout=10s": connect ECONNREFUSED 127\.0\.0\.1:1$/,
      ),
    });
    const config = await client.resource(validatingWebhookConfigurations).get("down");
    await client
      .resource(validatingWebhookConfigurations)
      .update({ ...config, webhooks: [webhook("Ignore")] } as never);
    const created = await client
      .resource(pods, "default")
      .create({ metadata: { name: "p" }, spec: { containers: [container] } });
    expect(created.metadata?.name).toBe("p");
  });

  it("reaches a webhook through an ExternalName Service, checking the certificate against <name>.<namespace>.svc", async () => {
    const hook = await webhookServer(() => ({ allowed: false, status: { message: "no" } }));
    const server = newServer();
    const client = server.client();
    await client
      .resource(services, "default")
      .create({ metadata: { name: "hook" }, spec: { type: "ExternalName", externalName: "127.0.0.1" } });
    await client.resource(validatingWebhookConfigurations).create({
      metadata: { name: "svc" },
      webhooks: [
        {
          name: "svc.example.com",
          clientConfig: {
            service: { namespace: "default", name: "hook", path: "/check", port: hook.port },
            caBundle: hook.caBundle,
          },
          rules: [podRule],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    } as ValidatingWebhookConfiguration);
    await expect(
      client.resource(pods, "default").create({ metadata: { name: "p" }, spec: { containers: [container] } }),
    ).rejects.toMatchObject({
      // No code in the status: upstream answers 400.
      code: 400,
      message: 'admission webhook "svc.example.com" denied the request: no',
    });
    expect(hook.paths).toEqual(["/check?timeout=10s"]);
  });
});

describe("MutatingAdmissionWebhook in process", () => {
  it("applies the JSONPatch, defaults the result, and matches by selectors and CEL match conditions", async () => {
    const server = newServer();
    const client = server.client();
    const seen: string[] = [];
    server.admissionWebhooks.serve("https://mutate.local/pods", (review) => {
      const request = review.request as { uid: string; name?: string };
      seen.push(request.name ?? "");
      const patch = [
        { op: "add", path: "/metadata/labels/mutated", value: "yes" },
        { op: "add", path: "/spec/containers/-", value: { name: "sidecar", image: "envoy" } },
      ];
      return {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: request.uid, allowed: true, patchType: "JSONPatch", patch: patchOf(patch) },
      };
    });
    await client.resource(mutatingWebhookConfigurations).create({
      metadata: { name: "mutate" },
      webhooks: [
        {
          name: "mutate.example.com",
          clientConfig: { url: "https://mutate.local/pods" },
          rules: [podRule],
          objectSelector: { matchLabels: { inject: "true" } },
          matchConditions: [{ name: "not-skipped", expression: "object.metadata.name != 'skip'" }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    } as MutatingWebhookConfiguration);
    const pod = await client
      .resource(pods, "default")
      .create({ metadata: { name: "p", labels: { inject: "true" } }, spec: { containers: [container] } });
    expect(pod.metadata?.labels).toEqual({ inject: "true", mutated: "yes" });
    // The added container was defaulted as a body's would be.
    expect(pod.spec?.containers[1]).toMatchObject({
      name: "sidecar",
      image: "envoy",
      imagePullPolicy: "Always", // no tag: latest
      terminationMessagePath: "/dev/termination-log",
    });
    await client
      .resource(pods, "default")
      .create({ metadata: { name: "skip", labels: { inject: "true" } }, spec: { containers: [container] } });
    await client
      .resource(pods, "default")
      .create({ metadata: { name: "plain" }, spec: { containers: [container] } });
    expect(seen).toEqual(["p"]);
  });
});

describe("webhooks on subresources", () => {
  it("a validating webhook on pods/binding is asked with the Binding, and can refuse it", async () => {
    const server = newServer();
    const client = server.client();
    const seen: unknown[] = [];
    server.admissionWebhooks.serve("https://bind.local/", (review) => {
      const request = review.request as { uid: string; subResource?: string; object: unknown; name: string };
      seen.push({
        subResource: request.subResource,
        name: request.name,
        kind: (request.object as { kind?: string }).kind,
      });
      return {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: request.uid, allowed: false, status: { message: "not now" } },
      };
    });
    await client.resource(validatingWebhookConfigurations).create({
      metadata: { name: "bind" },
      webhooks: [
        {
          name: "bind.example.com",
          clientConfig: { url: "https://bind.local/" },
          rules: [
            { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/binding"] },
          ],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    } as never);
    await client
      .resource(pods, "default")
      .create({ metadata: { name: "p" }, spec: { containers: [container] } });
    const binding = {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "p" },
      target: { kind: "Node", name: "n1" },
    };
    await expect(server.registry.bindPod("default", "p", binding, {})).rejects.toMatchObject({
      code: 400,
      message: 'admission webhook "bind.example.com" denied the request: not now',
    });
    expect(seen).toEqual([{ subResource: "binding", name: "p", kind: "Binding" }]);
  });
});

describe("reinvocationPolicy", () => {
  it("calls an IfNeeded webhook once more when a later one changed the object, a Never one not", async () => {
    const server = newServer();
    const client = server.client();
    const calls: string[] = [];
    const answer = (name: string, patch: unknown[]) => (review: Review) => {
      const request = review.request as {
        uid: string;
        object: { metadata?: { labels?: Record<string, string> } };
      };
      calls.push(
        `${name}:${Object.keys(request.object.metadata?.labels ?? {})
          .sort()
          .join(",")}`,
      );
      const response: Record<string, unknown> = { uid: request.uid, allowed: true };
      if (patch.length > 0) Object.assign(response, { patchType: "JSONPatch", patch: patchOf(patch) });
      return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
    };
    server.admissionWebhooks.serve("https://a.local/", answer("a", []));
    server.admissionWebhooks.serve("https://n.local/", answer("n", []));
    server.admissionWebhooks.serve(
      "https://z.local/",
      answer("z", [{ op: "add", path: "/metadata/labels", value: { z: "1" } }]),
    );
    const webhook = (name: string, url: string, reinvocationPolicy: string) => ({
      name,
      clientConfig: { url },
      rules: [podRule],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      reinvocationPolicy,
    });
    // Configurations run in name order: "a" and "n" before "z", whose patch they have not seen.
    await client.resource(mutatingWebhookConfigurations).create({
      metadata: { name: "a" },
      webhooks: [
        webhook("a.example.com", "https://a.local/", "IfNeeded"),
        webhook("n.example.com", "https://n.local/", "Never"),
      ],
    } as never);
    await client.resource(mutatingWebhookConfigurations).create({
      metadata: { name: "z" },
      webhooks: [webhook("z.example.com", "https://z.local/", "Never")],
    } as never);
    const pod = await client
      .resource(pods, "default")
      .create({ metadata: { name: "p" }, spec: { containers: [container] } });
    expect(pod.metadata?.labels).toEqual({ z: "1" });
    expect(calls).toEqual(["a:", "n:", "z:", "a:z"]);
  });
});
