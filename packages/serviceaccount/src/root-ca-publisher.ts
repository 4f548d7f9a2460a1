import {
  type ConfigMap,
  configMaps,
  type DeepReadonly,
  hasStatusCause,
  isNotFound,
  type Namespace,
  namespaces,
  type RunOptions,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
  type SyncResult,
} from "@reconcile/controller";

/** The ConfigMap every namespace gets. */
export const rootCACertConfigMapName = "kube-root-ca.crt";
/** The annotation describing it, with upstream's text. */
export const rootCADescriptionAnnotation = "kubernetes.io/description";
export const rootCADescription =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

export interface RootCACertPublisherOptions extends ControllerContext {
  /** Where the ConfigMaps are written. Required. */
  client: Client;
  /** The CA bundle (PEM) that verifies the API server. Required. */
  rootCA: string;
  namespaceInformer: ControllerInformer<Namespace>;
  configMapInformer: ControllerInformer<ConfigMap>;
}

/**
 * kube-controller-manager's root CA publisher
 * (`root-ca-certificate-publisher-controller`): every namespace has a
 * `kube-root-ca.crt` ConfigMap whose `ca.crt` is the CA that verifies the API
 * server, which the ServiceAccount token volume mounts. One deleted is made
 * again, one changed is put back (other annotations and labels are kept).
 */
export class RootCACertPublisher {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #rootCA: string;
  readonly #namespaces: ControllerInformer<Namespace>;
  readonly #configMaps: ControllerInformer<ConfigMap>;

  constructor(options: RootCACertPublisherOptions) {
    const { client, rootCA, namespaceInformer, configMapInformer } = options;
    this.#harness = defineController({
      name: "root-ca-cert-publisher",
      context: options,
      required: { client, rootCA, namespaceInformer, configMapInformer },
      informers: { namespaces: namespaceInformer, configMaps: configMapInformer },
      queues: [{ name: "root_ca_cert_publisher", sync: (key) => this.syncNamespace(key) }],
    });
    [this.#client, this.#rootCA, this.#namespaces, this.#configMaps] = [
      client,
      rootCA,
      namespaceInformer,
      configMapInformer,
    ];
    const enqueueNamespace = (namespace: DeepReadonly<Namespace>, reason: string) =>
      this.#harness.enqueue(namespace.metadata?.name ?? "", reason);
    namespaceInformer.addEventHandler({
      onAdd: (namespace) => enqueueNamespace(namespace, "namespace added"),
      onUpdate: (_, namespace) => enqueueNamespace(namespace, "namespace updated"),
    });
    const enqueueOwn = (configMap: DeepReadonly<ConfigMap> | undefined, reason: string) => {
      if (configMap?.metadata?.name !== rootCACertConfigMapName) return;
      this.#harness.enqueue(configMap.metadata.namespace ?? "", reason);
    };
    configMapInformer.addEventHandler({
      onUpdate: (_, configMap) => enqueueOwn(configMap, "kube-root-ca.crt updated"),
      onDelete: (obj) => enqueueOwn(objectFromTombstone(obj), "kube-root-ca.crt deleted"),
    });
  }

  /** Builds the publisher on a `SharedInformerFactory`: its namespace and ConfigMap informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof namespaces): ControllerInformer<Namespace>;
      forResource(resource: typeof configMaps): ControllerInformer<ConfigMap>;
    },
    options: Omit<RootCACertPublisherOptions, "namespaceInformer" | "configMapInformer">,
  ): RootCACertPublisher {
    return new RootCACertPublisher({
      ...options,
      namespaceInformer: factory.forResource(namespaces),
      configMapInformer: factory.forResource(configMaps),
    });
  }

  /** Runs `workers` workers (default 1) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Creates or puts back the `kube-root-ca.crt` ConfigMap of the namespace `name` (upstream `syncNamespace`). */
  async syncNamespace(name: string): Promise<SyncResult> {
    const namespace = this.#namespaces.getIndexer().getByKey(name);
    if (namespace === undefined || namespace.metadata?.deletionTimestamp !== undefined) return;
    const api = this.#client.resource(configMaps, name);
    const data = { "ca.crt": this.#rootCA };
    const existing = this.#configMaps.getIndexer().getByKey(`${name}/${rootCACertConfigMapName}`);
    if (existing === undefined) {
      try {
        await api.create({
          metadata: {
            name: rootCACertConfigMapName,
            namespace: name,
            annotations: { [rootCADescriptionAnnotation]: rootCADescription },
          },
          data,
        });
      } catch (error) {
        // A namespace gone or going away needs no ConfigMap; one already made arrives through the informer.
        if (isNotFound(error) || hasStatusCause(error, "NamespaceTerminating")) return;
        throw error;
      }
      return;
    }
    const annotations = existing.metadata?.annotations ?? {};
    const sameData =
      Object.keys(existing.data ?? {}).length === 1 && existing.data?.["ca.crt"] === this.#rootCA;
    if (sameData && (annotations[rootCADescriptionAnnotation] ?? "") !== "") return;
    const updated = structuredClone(existing) as ConfigMap;
    updated.data = data;
    updated.metadata = {
      ...updated.metadata,
      // Kept when set (upstream); an empty one is filled, or the check above would see it forever.
      annotations: {
        ...annotations,
        [rootCADescriptionAnnotation]: annotations[rootCADescriptionAnnotation] || rootCADescription,
      },
    };
    await api.update(updated);
  }
}
