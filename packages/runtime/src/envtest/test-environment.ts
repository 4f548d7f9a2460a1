import { readFile } from "node:fs/promises";
import { defineResource, type ResourceDescriptor } from "@reconcile/api";
import { ApiServer, defineKind, type ListeningApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
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
}

/** A running API server for tests (controller-runtime's `envtest.Environment`), started in process. */
export interface TestEnvironment {
  /** The embedded server itself (its `definitions`, `flush()`, `storage`). */
  readonly apiServer: ApiServer;
  /** An in-process client: no sockets, no serialization. */
  readonly client: Client;
  /** The installed CRDs, each with the `Established` and `NamesAccepted` conditions True. */
  readonly crds: readonly CustomResourceDefinition[];
  /** `http://127.0.0.1:<port>`; undefined with `http: false`. */
  readonly url: string | undefined;
  /** A kubeconfig (YAML) for `HttpClient`, `kubectl` or `@kubernetes/client-node`; throws with `http: false`. */
  kubeconfig(): string;
  /** Closes the HTTP listener and every watch, and stops the server's background work. */
  stop(): Promise<void>;
}

/**
 * Starts an embedded API server with `crds` installed and established:
 * nothing to download, nothing to install, a few milliseconds per start.
 * Stop it in `afterEach`/`afterAll`.
 */
export async function startTestEnvironment(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
  const crds: CustomResourceDefinition[] = [];
  for (const source of options.crds ?? []) crds.push(...(await loadCRDs(source)));
  const apiServer = new ApiServer({ clock: options.clock });
  let listening: ListeningApiServer | undefined;
  try {
    const installed = crds.map((crd) => installCRD(apiServer, crd));
    if (options.http ?? true) listening = await apiServer.listen();
    return {
      apiServer,
      client: apiServer.client(),
      crds: installed,
      url: listening?.url,
      kubeconfig() {
        if (listening === undefined) throw new Error("the test environment was started with http: false");
        return listening.kubeconfig();
      },
      stop: () => apiServer.close(),
    };
  } catch (error) {
    await apiServer.close();
    throw error;
  }
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

// The CRD's kinds are served through the server's live definitions: the
// first served version is registered (the storage version of one resource),
// with metadata validation only; schemas, defaults and CEL rules of the CRD
// are not applied here.
function installCRD(apiServer: ApiServer, crd: CustomResourceDefinition): CustomResourceDefinition {
  const [descriptor] = crdDescriptors(crd);
  if (descriptor === undefined) {
    throw new TypeError(`CustomResourceDefinition ${crd.metadata?.name}: no version is served`);
  }
  if (apiServer.definitions.get(descriptor) !== undefined) {
    throw new Error(`${descriptor.plural}.${descriptor.group} is already served`);
  }
  apiServer.definitions.add(defineKind({ descriptor }));
  const now = new Date(apiServer.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    reason,
    message,
    lastTransitionTime: now,
  });
  return {
    ...structuredClone(crd),
    metadata: { ...crd.metadata, name: `${descriptor.plural}.${descriptor.group}` },
    status: {
      acceptedNames: crd.spec.names,
      storedVersions: [descriptor.version],
      conditions: [
        condition("NamesAccepted", "NoConflicts", "no conflicts found"),
        condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
      ],
    },
  };
}

async function loadCRDs(source: CustomResourceDefinition | string): Promise<CustomResourceDefinition[]> {
  if (typeof source !== "string") return [source];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(source, "utf8"));
  } catch (error) {
    throw new Error(`reading CRDs from ${source}: ${error instanceof Error ? error.message : String(error)}`);
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
