import {
  type DeepReadonly,
  errorMessage,
  isAlreadyExists,
  isConflict,
  isNotFound,
  metaNamespaceKeyFunc,
  persistentVolumeClaims,
  persistentVolumes,
  Quantity,
  type RunOptions,
  storageClasses,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  type SyncContext,
  type SyncResult,
} from "@reconcile/controller";
import type { PersistentVolume, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";

type Claim = DeepReadonly<PersistentVolumeClaim>;
type Volume = DeepReadonly<PersistentVolume>;
type Class = DeepReadonly<StorageClass>;

/** The provisioner this controller fulfils itself: hostPath volumes under the node's `/var/lib/reconcile/pv`. */
export const simulatedProvisioner = "reconcile.dev/hostpath";
export const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class";
const bindCompleted = "pv.kubernetes.io/bind-completed";
const boundByController = "pv.kubernetes.io/bound-by-controller";
const provisionedBy = "pv.kubernetes.io/provisioned-by";
const storageProvisioner = "volume.kubernetes.io/storage-provisioner";
const betaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner";
const everything = "persistentvolumeAll";

export interface PersistentVolumeControllerOptions extends ControllerContext {
  /** Writes claims, volumes and Events. Required. */
  client: Client;
  claimInformer: ControllerInformer<PersistentVolumeClaim>;
  volumeInformer: ControllerInformer<PersistentVolume>;
  classInformer: ControllerInformer<StorageClass>;
}

/**
 * The PersistentVolume controller (upstream
 * `pkg/controller/volume/persistentvolume`, with a provisioner of its own):
 * an unbound claim without a class gets the default StorageClass
 * (retroactive assignment, GA in 1.28); a claim is bound to an Available
 * volume that fits it (class, size, access modes, volume mode), or, for a
 * class whose provisioner is `reconcile.dev/hostpath`, to a volume it
 * provisions (`pvc-<claim uid>`); claims of other provisioners wait for
 * them, as upstream reports. A volume whose claim is gone is Released, and
 * deleted if its reclaim policy says Delete.
 */
export class PersistentVolumeController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #claims: ControllerInformer<PersistentVolumeClaim>;
  readonly #volumes: ControllerInformer<PersistentVolume>;
  readonly #classes: ControllerInformer<StorageClass>;

  constructor(options: PersistentVolumeControllerOptions) {
    const { client, claimInformer, volumeInformer, classInformer } = options ?? {};
    this.#harness = defineController({
      name: "persistentvolume-binder",
      owner: "PersistentVolumeController",
      context: options,
      required: { client, claimInformer, volumeInformer, classInformer },
      events: { component: "persistentvolume-controller", client },
      informers: {
        persistentvolumeclaims: claimInformer,
        persistentvolumes: volumeInformer,
        storageclasses: classInformer,
      },
      queues: [
        { name: "claims", workers: 1, sync: (key, context) => this.syncClaim(key, context) },
        { name: "volumes", workers: 1, sync: (key, context) => this.syncVolume(key, context) },
      ],
    });
    [this.#client, this.#claims, this.#volumes, this.#classes] = [
      client,
      claimInformer,
      volumeInformer,
      classInformer,
    ];
    ensureIndex(volumeInformer.getIndexer(), everything, () => [""]);
    ensureIndex(classInformer.getIndexer(), everything, () => [""]);
    ensureIndex(claimInformer.getIndexer(), everything, () => [""]);
    const claimQueue = (claim: DeepReadonly<PersistentVolumeClaim>) =>
      this.#harness.queues.get("claims")?.add(metaNamespaceKeyFunc(claim));
    const volumeQueue = (volume: DeepReadonly<PersistentVolume>) =>
      this.#harness.queues.get("volumes")?.add(volume.metadata?.name ?? "");
    claimInformer.addEventHandler({ onAdd: claimQueue, onUpdate: (_, c) => claimQueue(c) });
    volumeInformer.addEventHandler({
      onAdd: volumeQueue,
      onUpdate: (_, volume) => {
        volumeQueue(volume);
        const ref = volume.spec?.claimRef;
        if (ref?.name) this.#harness.queues.get("claims")?.add(`${ref.namespace}/${ref.name}`);
      },
    });
    claimInformer.addEventHandler({
      onDelete: () => {
        // A claim gone: its volume is released.
        for (const volume of this.#allVolumes()) if (volume.spec?.claimRef) volumeQueue(volume);
      },
    });
    // A new class (a new default, or the class a claim names) may settle waiting claims.
    classInformer.addEventHandler({
      onAdd: () => {
        for (const claim of claimInformer.getIndexer().byIndex(everything, ""))
          if (claim.status?.phase !== "Bound") claimQueue(claim);
      },
    });
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof persistentVolumeClaims): ControllerInformer<PersistentVolumeClaim>;
      forResource(resource: typeof persistentVolumes): ControllerInformer<PersistentVolume>;
      forResource(resource: typeof storageClasses): ControllerInformer<StorageClass>;
    },
    options: Omit<PersistentVolumeControllerOptions, "claimInformer" | "volumeInformer" | "classInformer">,
  ): PersistentVolumeController {
    return new PersistentVolumeController({
      ...options,
      claimInformer: factory.forResource(persistentVolumeClaims),
      volumeInformer: factory.forResource(persistentVolumes),
      classInformer: factory.forResource(storageClasses),
    });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  #allVolumes(): Volume[] {
    return this.#volumes.getIndexer().byIndex(everything, "");
  }

  /** The default StorageClass: the newest marked default, as upstream picks among several. */
  #defaultClass(): Class | undefined {
    return this.#classes
      .getIndexer()
      .byIndex(everything, "")
      .filter((c) => c.metadata?.annotations?.[defaultClassAnnotation] === "true")
      .sort((a, b) =>
        (b.metadata?.creationTimestamp ?? "").localeCompare(a.metadata?.creationTimestamp ?? ""),
      )[0];
  }

  /** One claim (upstream `syncClaim`): default class, binding, provisioning. */
  async syncClaim(key: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const { signal } = context;
    const claim = this.#claims.getIndexer().getByKey(key);
    if (claim === undefined || claim.metadata?.deletionTimestamp != null) return;
    const api = this.#client.resource(persistentVolumeClaims, claim.metadata?.namespace ?? "");
    if (claim.spec?.volumeName) {
      const volume = this.#volumes.getIndexer().getByKey(claim.spec.volumeName);
      if (volume === undefined && claim.status?.phase === "Bound") {
        this.#harness.recorder.event(
          claim,
          "Warning",
          "ClaimLost",
          "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
        );
        await this.#writeClaimStatus(
          claim,
          { ...(structuredClone(claim.status) as PersistentVolumeClaim["status"]), phase: "Lost" },
          signal,
        );
      } else if (volume !== undefined && claim.status?.phase !== "Bound")
        await this.#bind(claim, volume, signal);
      return;
    }
    if (claim.spec?.storageClassName == null) {
      const fallback = this.#defaultClass();
      if (fallback !== undefined) {
        // An update, as upstream's binder writes (its role may update claims, not patch them).
        const classed = structuredClone(claim) as PersistentVolumeClaim;
        classed.spec = { ...classed.spec, storageClassName: fallback.metadata?.name ?? "" };
        await api.update(classed, { signal });
        return;
      }
    }
    const volume = this.#findVolume(claim);
    if (volume !== undefined) return this.#bind(claim, volume, signal);
    const className = claim.spec?.storageClassName ?? "";
    const storageClass = className === "" ? undefined : this.#classes.getIndexer().getByKey(className);
    if (storageClass === undefined) {
      this.#harness.recorder.event(
        claim,
        "Normal",
        "FailedBinding",
        className === ""
          ? "no persistent volumes available for this claim and no storage class is set"
          : `storageclass.storage.k8s.io "${className}" not found`,
      );
      return;
    }
    if (storageClass.provisioner !== simulatedProvisioner) {
      this.#harness.recorder.event(
        claim,
        "Normal",
        "ExternalProvisioning",
        `Waiting for a volume to be created either by the external provisioner '${storageClass.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      return;
    }
    await this.#provision(claim, storageClass, signal);
  }

  /** An Available volume that fits the claim (upstream `findBestMatchForClaim`): the smallest that is big enough. */
  #findVolume(claim: Claim): Volume | undefined {
    const want = Quantity.parse(String(claim.spec?.resources?.requests?.storage ?? "0"));
    const className = claim.spec?.storageClassName ?? "";
    const modes = claim.spec?.accessModes ?? [];
    let best: Volume | undefined;
    for (const volume of this.#allVolumes()) {
      const ref = volume.spec?.claimRef;
      if (ref != null && ref.uid !== claim.metadata?.uid) continue;
      if (volume.metadata?.deletionTimestamp != null || (ref == null && volume.status?.phase !== "Available"))
        continue;
      if ((volume.spec?.storageClassName ?? "") !== className) continue;
      if ((volume.spec?.volumeMode ?? "Filesystem") !== (claim.spec?.volumeMode ?? "Filesystem")) continue;
      if (!modes.every((mode) => volume.spec?.accessModes?.includes(mode))) continue;
      const size = Quantity.parse(String(volume.spec?.capacity?.storage ?? "0"));
      if (size.cmp(want) < 0) continue;
      if (ref != null) return volume;
      if (best === undefined || size.cmp(Quantity.parse(String(best.spec?.capacity?.storage ?? "0"))) < 0)
        best = volume;
    }
    return best;
  }

  /** Creates the claim's volume, already naming the claim (upstream's provisioning plus the provisioner's part). */
  async #provision(claim: Claim, storageClass: Class, signal: AbortSignal | undefined): Promise<void> {
    const name = `pvc-${claim.metadata?.uid}`;
    const namespace = claim.metadata?.namespace ?? "";
    // An update, as upstream's binder writes (its role may update claims, not patch them).
    const annotated = structuredClone(claim) as PersistentVolumeClaim;
    annotated.metadata = {
      ...annotated.metadata,
      annotations: {
        ...annotated.metadata?.annotations,
        [storageProvisioner]: simulatedProvisioner,
        [betaStorageProvisioner]: simulatedProvisioner,
      },
    };
    await this.#client.resource(persistentVolumeClaims, namespace).update(annotated, { signal });
    try {
      await this.#client.resource(persistentVolumes).create(
        {
          metadata: { name, annotations: { [provisionedBy]: simulatedProvisioner } },
          spec: {
            capacity: { storage: String(claim.spec?.resources?.requests?.storage ?? "1Gi") },
            accessModes: [...(claim.spec?.accessModes ?? ["ReadWriteOnce"])],
            persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? "Delete",
            storageClassName: storageClass.metadata?.name ?? "",
            volumeMode: claim.spec?.volumeMode ?? "Filesystem",
            hostPath: { path: `/var/lib/reconcile/pv/${name}`, type: "DirectoryOrCreate" },
            claimRef: {
              kind: "PersistentVolumeClaim",
              apiVersion: "v1",
              namespace,
              name: claim.metadata?.name ?? "",
              uid: claim.metadata?.uid ?? "",
            },
          },
        },
        { signal },
      );
    } catch (error) {
      if (isAlreadyExists(error)) return;
      this.#harness.recorder.event(
        claim,
        "Warning",
        "ProvisioningFailed",
        `failed to provision volume with StorageClass "${storageClass.metadata?.name}": ${errorMessage(error)}`,
      );
      throw error;
    }
    this.#harness.recorder.event(
      claim,
      "Normal",
      "ProvisioningSucceeded",
      `Successfully provisioned volume ${name}`,
    );
  }

  /** Binds both sides (upstream `bind`): the volume's claimRef and phase, then the claim's volumeName, annotations and status. */
  async #bind(claim: Claim, volume: Volume, signal: AbortSignal | undefined): Promise<void> {
    const volumes = this.#client.resource(persistentVolumes);
    if (volume.spec?.claimRef?.uid !== claim.metadata?.uid) {
      const claimRef = {
        kind: "PersistentVolumeClaim",
        apiVersion: "v1",
        namespace: claim.metadata?.namespace ?? "",
        name: claim.metadata?.name ?? "",
        uid: claim.metadata?.uid ?? "",
      };
      await volumes.update(
        {
          ...(structuredClone(volume) as PersistentVolume),
          spec: { ...structuredClone(volume.spec), claimRef },
        },
        { signal },
      );
    }
    const fresh = await volumes.get(volume.metadata?.name ?? "", { signal });
    if (fresh.status?.phase !== "Bound")
      await volumes.updateStatus({ ...fresh, status: { phase: "Bound" } }, { signal });
    const claims = this.#client.resource(persistentVolumeClaims, claim.metadata?.namespace ?? "");
    const current = await claims.get(claim.metadata?.name ?? "", { signal });
    const annotations = {
      ...current.metadata?.annotations,
      [bindCompleted]: "yes",
      [boundByController]: "yes",
    };
    const bound = await claims.update(
      {
        ...current,
        metadata: { ...current.metadata, annotations },
        spec: { ...current.spec, volumeName: volume.metadata?.name ?? "" },
      },
      { signal },
    );
    await this.#writeClaimStatus(
      bound,
      {
        phase: "Bound",
        accessModes: [...(volume.spec?.accessModes ?? [])],
        capacity: { ...volume.spec?.capacity } as Record<string, string>,
      },
      signal,
    );
  }

  async #writeClaimStatus(
    claim: Claim,
    status: PersistentVolumeClaim["status"],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    try {
      await this.#client
        .resource(persistentVolumeClaims, claim.metadata?.namespace ?? "")
        .updateStatus(
          { ...(structuredClone(claim) as PersistentVolumeClaim), status: status ?? {} },
          { signal },
        );
    } catch (error) {
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }

  /** One volume (upstream `syncVolume`): Available, Bound, or Released and reclaimed once its claim is gone. */
  async syncVolume(name: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const { signal } = context;
    const volume = this.#volumes.getIndexer().getByKey(name);
    if (volume === undefined || volume.metadata?.deletionTimestamp != null) return;
    const api = this.#client.resource(persistentVolumes);
    const ref = volume.spec?.claimRef;
    if (ref == null) {
      if (volume.status?.phase !== "Available")
        await api.updateStatus(
          { ...(structuredClone(volume) as PersistentVolume), status: { phase: "Available" } },
          { signal },
        );
      return;
    }
    const claim = this.#claims.getIndexer().getByKey(`${ref.namespace}/${ref.name}`);
    if (claim !== undefined && (ref.uid === undefined || claim.metadata?.uid === ref.uid)) return;
    if (volume.status?.phase === "Released") return;
    await api.updateStatus(
      { ...(structuredClone(volume) as PersistentVolume), status: { phase: "Released" } },
      { signal },
    );
    if (volume.spec?.persistentVolumeReclaimPolicy === "Delete") {
      try {
        await api.delete(name, { signal });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
}
