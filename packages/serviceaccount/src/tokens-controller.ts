import {
  type DeepReadonly,
  isNotFound,
  type RunOptions,
  type Secret,
  secrets,
  serviceAccounts,
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
import type { ServiceAccount } from "kubernetes-types/core/v1.js";

/** The Secret type, and the annotations naming its ServiceAccount (`core/v1` constants). */
export const serviceAccountTokenSecretType = "kubernetes.io/service-account-token";
export const serviceAccountNameAnnotation = "kubernetes.io/service-account.name";
export const serviceAccountUIDAnnotation = "kubernetes.io/service-account.uid";

/** Signs the token of a ServiceAccount token Secret (the API server's `auth.tokens` is one). */
export interface LegacyTokenSigner {
  issueLegacy(input: {
    namespace: string;
    serviceAccount: { name: string; uid: string };
    secretName: string;
  }): string;
}

export interface ServiceAccountTokensControllerOptions extends ControllerContext {
  /** Where Secrets are written. Required. */
  client: Client;
  /** Signs the tokens (kube-controller-manager's `--service-account-private-key-file`). Required. */
  signer: LegacyTokenSigner;
  /** The CA bundle (PEM) written as `ca.crt`. Default: none (no `ca.crt`). */
  rootCA?: string | undefined;
  secretInformer: ControllerInformer<Secret>;
  serviceAccountInformer: ControllerInformer<ServiceAccount>;
}

const base64 = (text: string) => Buffer.from(text).toString("base64");

/**
 * kube-controller-manager's token controller (`serviceaccount-token-controller`):
 * a Secret of type `kubernetes.io/service-account-token` annotated with a
 * ServiceAccount's name gets `token` (a JWT that does not expire, valid while
 * the Secret holds it), `ca.crt` and `namespace`, and the ServiceAccount's uid
 * as an annotation. A token Secret whose ServiceAccount is gone (or was made
 * again under the same name) is deleted; deleting a ServiceAccount deletes its
 * token Secrets.
 */
export class ServiceAccountTokensController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #signer: LegacyTokenSigner;
  readonly #rootCA: string | undefined;
  readonly #secrets: ControllerInformer<Secret>;
  readonly #serviceAccounts: ControllerInformer<ServiceAccount>;

  constructor(options: ServiceAccountTokensControllerOptions) {
    const { client, signer, secretInformer, serviceAccountInformer } = options;
    this.#harness = defineController({
      name: "serviceaccount-token",
      context: options,
      required: { client, signer, secretInformer, serviceAccountInformer },
      informers: { secrets: secretInformer, serviceAccounts: serviceAccountInformer },
      queues: [{ name: "serviceaccount_tokens_secret", sync: (key) => this.syncSecret(key) }],
    });
    [this.#client, this.#signer, this.#rootCA] = [client, signer, options.rootCA];
    [this.#secrets, this.#serviceAccounts] = [secretInformer, serviceAccountInformer];
    const enqueue = (secret: DeepReadonly<Secret> | undefined, reason: string) => {
      if (secret?.type !== serviceAccountTokenSecretType) return;
      this.#harness.enqueue(`${secret.metadata?.namespace ?? ""}/${secret.metadata?.name ?? ""}`, reason);
    };
    secretInformer.addEventHandler({
      onAdd: (secret) => enqueue(secret, "token Secret added"),
      onUpdate: (_, secret) => enqueue(secret, "token Secret updated"),
    });
    // A ServiceAccount gone (or replaced): its token Secrets are looked at again, and deleted.
    const enqueueTokensOf = (account: DeepReadonly<ServiceAccount> | undefined, reason: string) => {
      const namespace = account?.metadata?.namespace ?? "";
      for (const secret of this.#secrets.getIndexer().byIndex("namespace", namespace)) {
        if (secret.type !== serviceAccountTokenSecretType) continue;
        if (secret.metadata?.annotations?.[serviceAccountNameAnnotation] === account?.metadata?.name)
          enqueue(secret, reason);
      }
    };
    serviceAccountInformer.addEventHandler({
      onAdd: (account) => enqueueTokensOf(account, "ServiceAccount added"),
      onDelete: (obj) => enqueueTokensOf(objectFromTombstone(obj), "ServiceAccount deleted"),
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its Secret and ServiceAccount informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof secrets): ControllerInformer<Secret>;
      forResource(resource: typeof serviceAccounts): ControllerInformer<ServiceAccount>;
    },
    options: Omit<ServiceAccountTokensControllerOptions, "secretInformer" | "serviceAccountInformer">,
  ): ServiceAccountTokensController {
    return new ServiceAccountTokensController({
      ...options,
      secretInformer: factory.forResource(secrets),
      serviceAccountInformer: factory.forResource(serviceAccounts),
    });
  }

  /** Runs `workers` workers (default 1) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Fills a token Secret, or deletes one whose ServiceAccount is gone (upstream `syncSecret`). */
  async syncSecret(key: string): Promise<SyncResult> {
    const secret = this.#secrets.getIndexer().getByKey(key);
    if (secret === undefined || secret.type !== serviceAccountTokenSecretType) return;
    const namespace = secret.metadata?.namespace ?? "";
    const name = secret.metadata?.name ?? "";
    const annotations = secret.metadata?.annotations ?? {};
    const accountName = annotations[serviceAccountNameAnnotation] ?? "";
    const wantedUID = annotations[serviceAccountUIDAnnotation] ?? "";
    const account = this.#serviceAccounts.getIndexer().getByKey(`${namespace}/${accountName}`);
    const uid = account?.metadata?.uid ?? "";
    if (account === undefined || (wantedUID !== "" && wantedUID !== uid)) {
      await this.#client
        .resource(secrets, namespace)
        .delete(name, { preconditions: { uid: secret.metadata?.uid } })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      return;
    }
    const data = { ...(secret.data ?? {}) };
    const needsCA = this.#rootCA !== undefined && data["ca.crt"] !== base64(this.#rootCA);
    const needsNamespace = (data.namespace ?? "") === "";
    const needsToken = (data.token ?? "") === "";
    if (!needsCA && !needsNamespace && !needsToken) return;
    if (needsCA) data["ca.crt"] = base64(this.#rootCA ?? "");
    if (needsNamespace) data.namespace = base64(namespace);
    if (needsToken)
      data.token = base64(
        this.#signer.issueLegacy({ namespace, serviceAccount: { name: accountName, uid }, secretName: name }),
      );
    const updated = structuredClone(secret) as Secret;
    updated.data = data;
    updated.metadata = {
      ...updated.metadata,
      annotations: {
        ...annotations,
        [serviceAccountNameAnnotation]: accountName,
        [serviceAccountUIDAnnotation]: uid,
      },
    };
    await this.#client.resource(secrets, namespace).update(updated);
  }
}
