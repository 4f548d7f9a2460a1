import {
  type DeepReadonly,
  isDeletedFinalStateUnknown,
  isNotFound,
  metaNamespaceKeyFunc,
  type Pod,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  type RunOptions,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  type SyncResult,
} from "@reconcile/controller";
import type { PersistentVolume, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";

/** The finalizer that keeps a claim in use by a pod (StorageObjectInUseProtection adds it on create). */
export const pvcProtectionFinalizer = "kubernetes.io/pvc-protection";
/** The finalizer that keeps a volume bound to a claim. */
export const pvProtectionFinalizer = "kubernetes.io/pv-protection";

/** The claims a pod that has not finished uses, by name (its own, and its ephemeral volumes' `<pod>-<volume>`). */
function claimsOf(pod: DeepReadonly<Pod>): string[] {
  if (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return [];
  return (pod.spec?.volumes ?? []).flatMap((volume) => {
    if (volume.persistentVolumeClaim?.claimName) return [volume.persistentVolumeClaim.claimName];
    if (volume.ephemeral !== undefined) return [`${pod.metadata?.name ?? ""}-${volume.name}`];
    return [];
  });
}

/**
 * The one step both protection controllers take: a live object gets
 * `finalizer` if it lacks it; one being deleted loses it once `free()` says
 * nothing needs it any more. An object gone meanwhile is left alone.
 */
async function protect<T extends PersistentVolumeClaim | PersistentVolume>(
  object: DeepReadonly<T>,
  finalizer: string,
  free: () => boolean | Promise<boolean>,
  update: (object: T) => Promise<unknown>,
): Promise<void> {
  const current = object.metadata?.finalizers ?? [];
  const has = current.includes(finalizer);
  const deleting = object.metadata?.deletionTimestamp != null;
  if (deleting ? !has || !(await free()) : has) return;
  const finalizers = deleting ? current.filter((f) => f !== finalizer) : [...current, finalizer];
  await update({ ...(object as T), metadata: { ...object.metadata, finalizers } } as T).catch(ignoreGone);
}

const ignoreGone = (error: unknown) => {
  if (!isNotFound(error)) throw error;
};

export interface PVCProtectionControllerOptions extends ControllerContext {
  /** Writes the claims' finalizers and lists pods. Required. */
  client: Client;
  claimInformer: ControllerInformer<PersistentVolumeClaim>;
  podInformer: ControllerInformer<Pod>;
}

/**
 * The PVC protection controller (upstream `pkg/controller/volume/pvcprotection`):
 * a claim carries `kubernetes.io/pvc-protection` while it lives; once it is
 * being deleted, the finalizer comes off only when no pod that has not
 * finished uses it (the cache says so, and a live list of the namespace's
 * pods agrees), so a claim in use is not deleted from under its pod.
 */
export class PVCProtectionController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #claims: ControllerInformer<PersistentVolumeClaim>;
  readonly #pods: ControllerInformer<Pod>;

  constructor(options: PVCProtectionControllerOptions) {
    const { client, claimInformer, podInformer } = options ?? {};
    this.#harness = defineController({
      name: "pvcprotection",
      owner: "PVCProtectionController",
      context: options,
      required: { client, claimInformer, podInformer },
      informers: { claims: claimInformer, pods: podInformer },
      queues: [{ name: "pvcprotection", sync: (key) => this.syncClaim(key) }],
    });
    [this.#client, this.#claims, this.#pods] = [client, claimInformer, podInformer];
    const claimChanged = (claim: DeepReadonly<PersistentVolumeClaim>) =>
      this.#harness.enqueue(metaNamespaceKeyFunc(claim), "claim changed");
    claimInformer.addEventHandler({ onAdd: claimChanged, onUpdate: (_, claim) => claimChanged(claim) });
    // A pod that ends or goes away may free the claims it used.
    const podChanged = (pod: DeepReadonly<Pod>, used: readonly string[]) => {
      for (const name of used)
        this.#harness.enqueue(`${pod.metadata?.namespace ?? ""}/${name}`, "pod changed");
    };
    podInformer.addEventHandler({
      onUpdate: (old, pod) => podChanged(pod, claimsOf(old)),
      onDelete: (obj) => {
        const pod = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
        podChanged(
          pod,
          (pod.spec?.volumes ?? []).flatMap((v) =>
            v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
          ),
        );
      },
    });
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof persistentVolumeClaims): ControllerInformer<PersistentVolumeClaim>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
    },
    options: Omit<PVCProtectionControllerOptions, "claimInformer" | "podInformer">,
  ): PVCProtectionController {
    return new PVCProtectionController({
      ...options,
      claimInformer: factory.forResource(persistentVolumeClaims),
      podInformer: factory.forResource(pods),
    });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  async syncClaim(key: string): Promise<SyncResult> {
    const claim = this.#claims.getIndexer().getByKey(key);
    if (claim === undefined) return;
    const { namespace, name } = splitMetaNamespaceKey(key);
    const api = this.#client.resource(persistentVolumeClaims, namespace);
    await protect<PersistentVolumeClaim>(
      claim,
      pvcProtectionFinalizer,
      async () => !(await this.#inUse(namespace, name)),
      (c) => api.update(c),
    );
  }

  /** Whether a pod that has not finished uses the claim: the cache first, then a live list (the cache may lag a new pod). */
  async #inUse(namespace: string, name: string): Promise<boolean> {
    const uses = (pod: DeepReadonly<Pod>) =>
      pod.metadata?.namespace === namespace && claimsOf(pod).includes(name);
    if (this.#pods.getIndexer().byIndex("namespace", namespace).some(uses)) return true;
    const live = await this.#client.resource(pods, namespace).list();
    return live.items.some(uses);
  }
}

export interface PVProtectionControllerOptions extends ControllerContext {
  /** Writes the volumes' finalizers. Required. */
  client: Client;
  volumeInformer: ControllerInformer<PersistentVolume>;
}

/**
 * The PV protection controller (upstream `pkg/controller/volume/pvprotection`):
 * a volume carries `kubernetes.io/pv-protection` while it lives; once it is
 * being deleted, the finalizer comes off only when it is no longer Bound.
 */
export class PVProtectionController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #volumes: ControllerInformer<PersistentVolume>;

  constructor(options: PVProtectionControllerOptions) {
    const { client, volumeInformer } = options ?? {};
    this.#harness = defineController({
      name: "pvprotection",
      owner: "PVProtectionController",
      context: options,
      required: { client, volumeInformer },
      informers: { volumes: volumeInformer },
      queues: [{ name: "pvprotection", sync: (key) => this.syncVolume(key) }],
    });
    [this.#client, this.#volumes] = [client, volumeInformer];
    const changed = (volume: DeepReadonly<PersistentVolume>) =>
      this.#harness.enqueue(volume.metadata?.name ?? "", "volume changed");
    volumeInformer.addEventHandler({ onAdd: changed, onUpdate: (_, volume) => changed(volume) });
  }

  static fromInformerFactory(
    factory: { forResource(resource: typeof persistentVolumes): ControllerInformer<PersistentVolume> },
    options: Omit<PVProtectionControllerOptions, "volumeInformer">,
  ): PVProtectionController {
    return new PVProtectionController({ ...options, volumeInformer: factory.forResource(persistentVolumes) });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  async syncVolume(key: string): Promise<SyncResult> {
    const volume = this.#volumes.getIndexer().getByKey(key);
    if (volume === undefined) return;
    const api = this.#client.resource(persistentVolumes);
    await protect<PersistentVolume>(
      volume,
      pvProtectionFinalizer,
      () => volume.status?.phase !== "Bound",
      (v) => api.update(v),
    );
  }
}
