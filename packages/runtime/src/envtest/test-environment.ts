import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import type * as https from "node:https";
import {
  defineResource,
  errorMessage,
  mutatingWebhookConfigurations,
  type ResourceDescriptor,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import {
  ApiServer,
  customResourceDefinitions,
  generateServingCertificates,
  type ListeningApiServer,
  type ServingCertificates,
} from "@reconcile/apiserver";
import { type Client, HttpClient } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type {
  MutatingWebhook,
  MutatingWebhookConfiguration,
  ValidatingWebhook,
  ValidatingWebhookConfiguration,
} from "kubernetes-types/admissionregistration/v1.js";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";

export interface TestEnvironmentOptions {
  /**
   * CustomResourceDefinitions to install: objects, or paths of JSON files
   * holding one CRD or a `List` of them. Default: none.
   */
  crds?: readonly (CustomResourceDefinition | string)[] | undefined;
  /**
   * The server's clock: timestamps, watch timeouts, bookmarks. Give the same
   * `FakeClock` to the manager to run the whole test on fake time. Default: the real clock.
   */
  clock?: Clock | undefined;
  /** Also serve the REST API over HTTP on 127.0.0.1 and a free port, for `kubeconfig`. Default true. */
  http?: boolean | undefined;
  /**
   * Serve HTTPS with authentication and RBAC, as envtest's kube-apiserver
   * does: `kubeconfig()` is a cluster admin's (system:masters), and
   * {@link TestEnvironment.clientAs} gives a client acting as a ServiceAccount
   * or user, so a missing rule in an operator's RBAC manifest fails its tests.
   * `false` serves plain HTTP where every request is allowed. Default true.
   */
  authorization?: boolean | undefined;
  /**
   * Mutating and validating webhook configurations to install (controller-runtime's
   * `WebhookInstallOptions`), as objects with their `kind`. Each webhook's
   * clientConfig (a Service or a URL) is pointed at this environment: its
   * path is kept, and {@link TestEnvironment.serveWebhooks} says who answers.
   */
  webhookConfigurations?: readonly WebhookConfiguration[] | undefined;
}

/**
 * One rule of a webhook, as the wire has it (kubernetes-types' `RuleWithOperations`
 * leaves out the fields of the Rule it embeds).
 */
export interface WebhookRule {
  operations?: string[] | undefined;
  apiGroups?: string[] | undefined;
  apiVersions?: string[] | undefined;
  resources?: string[] | undefined;
  scope?: string | undefined;
}

type WithRules<W> = Omit<W, "rules"> & { rules?: WebhookRule[] | undefined };

/** A MutatingWebhookConfiguration or ValidatingWebhookConfiguration, as a manifest holds it. */
export type WebhookConfiguration =
  | (Omit<MutatingWebhookConfiguration, "webhooks"> & {
      kind: "MutatingWebhookConfiguration";
      webhooks?: WithRules<MutatingWebhook>[] | undefined;
    })
  | (Omit<ValidatingWebhookConfiguration, "webhooks"> & {
      kind: "ValidatingWebhookConfiguration";
      webhooks?: WithRules<ValidatingWebhook>[] | undefined;
    });

/** What answers the installed webhook configurations: a `WebhookServer`'s `handle`, in process or over HTTPS. */
export interface WebhookHandlers {
  readonly paths: readonly string[];
  readonly port?: number | undefined;
  readonly started?: boolean | undefined;
  handle(path: string, review: never): Promise<unknown>;
}

/** Who {@link TestEnvironment.clientAs} acts as. */
export type TestIdentity =
  | { serviceAccount: { namespace: string; name: string } }
  | { user: string; groups?: readonly string[] | undefined };

/** A running API server for tests (controller-runtime's `envtest.Environment`), started in process. */
export interface TestEnvironment {
  /** The embedded server itself (its `definitions`, `flush()`, `storage`). */
  readonly apiServer: ApiServer;
  /** An in-process client: no sockets, no serialization. */
  readonly client: Client;
  /** The installed CRDs as the server holds them, each with the `Established` condition True. */
  readonly crds: readonly CustomResourceDefinition[];
  /** `http://127.0.0.1:<port>`; undefined with `http: false`. */
  readonly url: string | undefined;
  /** A kubeconfig (YAML) for `HttpClient`, `kubectl` or `@kubernetes/client-node`; throws with `http: false`. */
  kubeconfig(): string;
  /**
   * An HTTP client acting as `identity` (by impersonation, through the admin's
   * credentials), whose every request RBAC judges: bind the roles of your
   * operator's manifest to its ServiceAccount and run the controller on this
   * client. Throws with `http: false` or `authorization: false`.
   */
  clientAs(identity: TestIdentity): Client;
  /**
   * Makes `server` (a `WebhookServer`) answer the installed webhook
   * configurations. `in-process` (the default) calls its handlers directly:
   * no TLS, no socket, the same configuration objects and matching rules, a
   * test of a webhook in milliseconds. `https` points the configurations at
   * the running server on 127.0.0.1 with {@link webhookCertificate}'s CA, as
   * controller-runtime's envtest does. Resolves with a function that stops
   * serving in process.
   */
  serveWebhooks(server: WebhookHandlers, options?: { over?: "in-process" | "https" }): Promise<() => void>;
  /** A serving certificate for `localhost` and `127.0.0.1` for a test's `WebhookServer`, and its CA bundle (base64 PEM). */
  webhookCertificate(): Promise<{ cert: string; key: string; caBundle: string }>;
  /** Closes the HTTP listener and every watch, and stops the server's background work. */
  stop(): Promise<void>;
}

/** Where installed webhook configurations point while a test serves them in process. */
const inProcessWebhookBase = "https://envtest-webhooks.local";

/**
 * Starts an embedded API server with `crds` installed and established:
 * nothing to download, nothing to install, a few milliseconds per start.
 * Stop it in `afterEach`/`afterAll`.
 */
export async function startTestEnvironment(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
  const crds: CustomResourceDefinition[] = [];
  for (const source of options.crds ?? []) crds.push(...(await loadCRDs(source)));
  for (const crd of crds) crdDescriptors(crd); // a clear TypeError before anything starts
  const apiServer = new ApiServer({ clock: options.clock, customResourceDefinitions: true });
  let listening: ListeningApiServer | undefined;
  try {
    const installed: CustomResourceDefinition[] = [];
    const webhookPaths = new Set<string>();
    for (const crd of crds)
      installed.push(await installCRD(apiServer, pointConversionHere(crd, webhookPaths)));
    for (const path of await installWebhookConfigurations(apiServer, options.webhookConfigurations ?? []))
      webhookPaths.add(path);
    const authorization = options.authorization ?? true;
    const token = randomBytes(24).toString("base64url");
    if (options.http ?? true)
      listening = await apiServer.listen(authorization ? { tls: await envtestCertificates(), token } : {});
    return {
      apiServer,
      client: apiServer.client(),
      crds: installed,
      url: listening?.url,
      kubeconfig() {
        if (listening === undefined) throw new Error("the test environment was started with http: false");
        return listening.kubeconfig();
      },
      clientAs(identity) {
        if (listening === undefined) throw new Error("the test environment was started with http: false");
        if (!authorization) throw new Error("the test environment was started with authorization: false");
        return impersonatingClient(listening, token, identity);
      },
      serveWebhooks: (server, serveOptions) =>
        serveWebhooks(apiServer, [...webhookPaths], server, serveOptions),
      async webhookCertificate() {
        const { cert, key, ca } = await envtestCertificates();
        return { cert, key, caBundle: Buffer.from(ca).toString("base64") };
      },
      stop: () => apiServer.close(),
    };
  } catch (error) {
    await apiServer.close();
    throw error;
  }
}

/** One CA and serving certificate per process: RSA keys take a while to make, and tests start many servers. */
let certificates: Promise<ServingCertificates> | undefined;

async function envtestCertificates(): Promise<{ cert: string; key: string; ca: string }> {
  certificates ??= generateServingCertificates();
  const { ca, serving } = await certificates;
  return { cert: serving.cert, key: serving.key, ca: ca.cert };
}

/** An HttpClient with the admin's token and `Impersonate-*` headers naming `identity`. */
function impersonatingClient(listening: ListeningApiServer, token: string, identity: TestIdentity): Client {
  const headers: Record<string, string | string[]> = {};
  if ("serviceAccount" in identity) {
    const { namespace, name } = identity.serviceAccount;
    headers["Impersonate-User"] = `system:serviceaccount:${namespace}:${name}`;
  } else {
    headers["Impersonate-User"] = identity.user;
    if ((identity.groups ?? []).length > 0) headers["Impersonate-Group"] = [...(identity.groups ?? [])];
  }
  const ca = listening.certificateAuthority;
  return new HttpClient({
    qps: Number.POSITIVE_INFINITY,
    kubeConfig: {
      getCurrentCluster: () => ({ server: listening.url, name: "envtest" }),
      getCurrentContext: () => "envtest",
      getContextObject: () => ({ namespace: "default" }),
      async applyToHTTPSOptions(request: https.RequestOptions) {
        request.headers = { ...request.headers, Authorization: `Bearer ${token}`, ...headers };
        if (ca !== undefined) request.ca = ca;
      },
    },
  });
}

/**
 * The resource descriptors a CRD defines, one per served version, for typed
 * clients and informers. Throws a `TypeError` naming the missing field when
 * the CRD is incomplete.
 */
export function crdDescriptors(crd: CustomResourceDefinition): ResourceDescriptor[] {
  const name = crd.metadata?.name ?? "(unnamed)";
  const { group, names, scope, versions } = crd.spec ?? ({} as Partial<CustomResourceDefinition["spec"]>);
  if (!group) throw new TypeError(`CustomResourceDefinition ${name}: spec.group is required`);
  if (!names?.kind || !names.plural) {
    throw new TypeError(
      `CustomResourceDefinition ${name}: spec.names.kind and spec.names.plural are required`,
    );
  }
  if (scope !== "Namespaced" && scope !== "Cluster") {
    throw new TypeError(
      `CustomResourceDefinition ${name}: spec.scope must be Namespaced or Cluster, got ${scope}`,
    );
  }
  if (!versions?.length) throw new TypeError(`CustomResourceDefinition ${name}: spec.versions is required`);
  if (crd.metadata?.name !== undefined && crd.metadata.name !== `${names.plural}.${group}`) {
    throw new TypeError(
      `CustomResourceDefinition ${name}: metadata.name must be spec.names.plural + "." + spec.group (${names.plural}.${group})`,
    );
  }
  return versions
    .filter((v) => v.served)
    .map((v) =>
      defineResource({
        group,
        version: v.name,
        kind: names.kind,
        plural: names.plural,
        namespaced: scope === "Namespaced",
        listKind: names.listKind ?? `${names.kind}List`,
        singular: names.singular ?? names.kind.toLowerCase(),
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        subresources: [
          ...(v.subresources?.status ? (["status"] as const) : []),
          ...(v.subresources?.scale ? (["scale"] as const) : []),
        ],
      }),
    );
}

/** How long a CRD may take to become Established before the start fails (real time: the server's controller is watch-driven). */
const establishTimeoutMs = 10_000;

// Creates the CRD as `kubectl apply` would and waits, as envtest's WaitForCRDs does, until the
// server's CRD controller reports it Established and serves its kind.
async function installCRD(
  apiServer: ApiServer,
  crd: CustomResourceDefinition,
): Promise<CustomResourceDefinition> {
  const client = apiServer.client().resource(customResourceDefinitions);
  // The server's CRD type and kubernetes-types' differ only in optionality.
  const created = (await client.create({
    ...structuredClone(crd),
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
  } as never)) as unknown as CustomResourceDefinition;
  const name = created.metadata?.name ?? "";
  const [descriptor] = crdDescriptors(created);
  const deadline = performance.now() + establishTimeoutMs;
  for (;;) {
    const current = (await client.get(name)) as unknown as CustomResourceDefinition;
    const established = current.status?.conditions?.find((c) => c.type === "Established")?.status === "True";
    if (established && descriptor !== undefined && apiServer.definitions.get(descriptor) !== undefined)
      return current;
    if (performance.now() > deadline) {
      const conditions = JSON.stringify(current.status?.conditions ?? []);
      throw new Error(
        `CustomResourceDefinition ${name} was not established within ${establishTimeoutMs} ms: ${conditions}`,
      );
    }
    // A macrotask, not a timer on the server's clock: a FakeClock nobody advances cannot stall the start.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

async function loadCRDs(source: CustomResourceDefinition | string): Promise<CustomResourceDefinition[]> {
  if (typeof source !== "string") return [source];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(source, "utf8"));
  } catch (error) {
    throw new Error(`reading CRDs from ${source}: ${errorMessage(error)}`);
  }
  const items = (parsed as { kind?: string; items?: unknown[] }).kind?.endsWith("List")
    ? ((parsed as { items?: unknown[] }).items ?? [])
    : [parsed];
  for (const item of items) {
    if ((item as { kind?: string }).kind !== "CustomResourceDefinition") {
      throw new TypeError(
        `${source}: expected CustomResourceDefinition objects, found kind ${(item as { kind?: string }).kind}`,
      );
    }
  }
  return items as CustomResourceDefinition[];
}

type Webhook = {
  clientConfig?: { url?: string; service?: { path?: string } | undefined; caBundle?: string };
};

/** The path a webhook's clientConfig asks for: its Service's path, or its URL's. */
function pathOf(webhook: Webhook): string {
  const config = webhook.clientConfig ?? {};
  if (config.service !== undefined) return config.service.path ?? "/";
  return config.url === undefined ? "/" : new URL(config.url).pathname;
}

/** A CRD converted by webhook, its clientConfig pointed at the in-process base (its path noted). */
function pointConversionHere(crd: CustomResourceDefinition, paths: Set<string>): CustomResourceDefinition {
  if (crd.spec?.conversion?.strategy !== "Webhook") return crd;
  const copy = structuredClone(crd);
  const webhook = copy.spec.conversion!.webhook ?? { conversionReviewVersions: ["v1"] };
  const path = pathOf(webhook as Webhook);
  paths.add(path);
  webhook.clientConfig = { url: inProcessWebhookBase + path };
  copy.spec.conversion!.webhook = webhook;
  return copy;
}

/** Installs the configurations pointed at the in-process base; returns the paths they call. */
async function installWebhookConfigurations(
  apiServer: ApiServer,
  configurations: readonly WebhookConfiguration[],
): Promise<string[]> {
  const paths = new Set<string>();
  for (const configuration of configurations) {
    const copy = structuredClone(configuration) as { webhooks?: Webhook[] };
    for (const webhook of copy.webhooks ?? []) {
      const path = pathOf(webhook);
      paths.add(path);
      webhook.clientConfig = { url: inProcessWebhookBase + path };
    }
    const resource: ResourceDescriptor | undefined =
      configuration.kind === "MutatingWebhookConfiguration"
        ? (mutatingWebhookConfigurations as ResourceDescriptor)
        : configuration.kind === "ValidatingWebhookConfiguration"
          ? (validatingWebhookConfigurations as ResourceDescriptor)
          : undefined;
    if (resource === undefined)
      throw new TypeError(
        `webhookConfigurations: kind ${JSON.stringify((configuration as { kind?: string }).kind)} is neither MutatingWebhookConfiguration nor ValidatingWebhookConfiguration`,
      );
    await apiServer
      .client()
      .resource(resource)
      .create(copy as never);
  }
  return [...paths];
}

async function serveWebhooks(
  apiServer: ApiServer,
  paths: readonly string[],
  server: WebhookHandlers,
  options: { over?: "in-process" | "https" } = {},
): Promise<() => void> {
  if ((options.over ?? "in-process") === "in-process") {
    const stops = paths.map((path) =>
      apiServer.admissionWebhooks.serve(
        inProcessWebhookBase + path,
        (review) => server.handle(path, review as never) as never,
      ),
    );
    return () => {
      for (const stop of stops) stop();
    };
  }
  const deadline = performance.now() + establishTimeoutMs;
  while (!server.started || server.port === undefined) {
    if (performance.now() > deadline)
      throw new Error("serveWebhooks: the webhook server did not start listening");
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
  const { ca } = await envtestCertificates();
  const caBundle = Buffer.from(ca).toString("base64");
  const crdClient = apiServer.client().resource(customResourceDefinitions);
  for (const crd of (await crdClient.list()).items as unknown as CustomResourceDefinition[]) {
    const webhook = crd.spec?.conversion?.webhook;
    const url = webhook?.clientConfig?.url;
    if (webhook === undefined || !url?.startsWith(inProcessWebhookBase)) continue;
    webhook.clientConfig = {
      url: `https://127.0.0.1:${server.port}${url.slice(inProcessWebhookBase.length)}`,
      caBundle,
    };
    await crdClient.update(crd as never);
  }
  for (const resource of [
    mutatingWebhookConfigurations,
    validatingWebhookConfigurations,
  ] as ResourceDescriptor[]) {
    const client = apiServer.client().resource(resource);
    for (const configuration of (await client.list()).items as { webhooks?: Webhook[] }[]) {
      for (const webhook of configuration.webhooks ?? []) {
        const url = webhook.clientConfig?.url;
        if (url?.startsWith(inProcessWebhookBase))
          webhook.clientConfig = {
            url: `https://127.0.0.1:${server.port}${url.slice(inProcessWebhookBase.length)}`,
            caBundle,
          };
      }
      await client.update(configuration as never);
    }
  }
  return () => {};
}
