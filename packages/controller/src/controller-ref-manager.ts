import {
  type DeepReadonly,
  errorMessage,
  isInvalid,
  isNotFound,
  type KubeObject,
  type Pod,
  type ReplicaSet,
  replicaSets,
  type Selector,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { PodControl } from "./pod-control.js";

/** The kind a controller's ownerReferences name: `{ apiVersion: "apps/v1", kind: "ReplicaSet" }`. */
export interface ControllerKind {
  apiVersion: string;
  kind: string;
}

/** What a claim returns: the objects now owned by the controller, and the errors of the others. */
export interface ClaimResult<T> {
  claimed: T[];
  /** One error per object that could not be adopted or released; empty when all went well. */
  errors: Error[];
}

/**
 * Checks, with a fresh read, that the controller may adopt: it must still
 * exist and not be being deleted. Rejects with the reason it may not.
 */
export type CanAdoptFunc = () => Promise<void>;

/** Options shared by the ref managers. */
export interface ControllerRefManagerOptions {
  /** The controller doing the claiming (needs metadata name, namespace, uid). Required. */
  controller: KubeObject | DeepReadonly<KubeObject>;
  /** apiVersion and kind written into adopted objects' ownerReferences. Required. */
  controllerKind: ControllerKind;
  /** Which objects the controller wants. Required. */
  selector: Selector;
  /**
   * Run at most once per manager, before the first adoption (create one
   * manager per sync). Default: always allowed. Use {@link recheckDeletionTimestamp}.
   */
  canAdopt?: CanAdoptFunc | undefined;
  /** Finalizers added on adoption and removed on release. Default none. */
  finalizers?: readonly string[] | undefined;
  /** Aborts the adopt and release patches (pass the sync's signal). Default: none. */
  signal?: AbortSignal | undefined;
}

type Decision = "owned" | "ignore" | "adopt" | "release";

/**
 * Adopts and releases objects for one controller (upstream
 * `BaseControllerRefManager.ClaimObject`):
 * - owned by another controller: ignored;
 * - owned by this one and matching: claimed (even while the controller is being deleted);
 * - owned by this one and no longer matching: released, unless the controller is being deleted;
 * - orphaned and matching: adopted, unless the controller or the object is
 *   being deleted or they live in different namespaces, and only after
 *   `canAdopt` has confirmed the controller with a fresh read.
 */
export class BaseControllerRefManager {
  readonly controller: KubeObject | DeepReadonly<KubeObject>;
  readonly controllerKind: ControllerKind;
  readonly selector: Selector;
  readonly finalizers: readonly string[];
  readonly signal: AbortSignal | undefined;
  readonly #canAdoptFunc: CanAdoptFunc | undefined;
  #canAdoptResult: Promise<void> | undefined;

  constructor(options: ControllerRefManagerOptions) {
    const meta = options.controller.metadata;
    if (!meta?.uid || !meta.name) {
      throw new TypeError("ControllerRefManager: the controller needs metadata.name and metadata.uid");
    }
    if (!options.controllerKind.apiVersion || !options.controllerKind.kind) {
      throw new TypeError("ControllerRefManager: controllerKind needs apiVersion and kind");
    }
    this.controller = options.controller;
    this.controllerKind = options.controllerKind;
    this.selector = options.selector;
    this.finalizers = options.finalizers ?? [];
    this.signal = options.signal;
    this.#canAdoptFunc = options.canAdopt;
  }

  /** Runs `canAdopt` once for this manager and remembers its outcome (upstream `sync.Once`). */
  canAdopt(): Promise<void> {
    this.#canAdoptResult ??= this.#canAdoptFunc === undefined ? Promise.resolve() : this.#canAdoptFunc();
    return this.#canAdoptResult;
  }

  /**
   * Claims one object: resolves true when the controller owns it afterwards.
   * Rejects with the adopt/release error (NotFound counts as not owned).
   */
  async claimObject<T extends KubeObject | DeepReadonly<KubeObject>>(
    obj: T,
    match: (obj: T) => boolean,
    adopt: (obj: T) => Promise<void>,
    release: (obj: T) => Promise<void>,
  ): Promise<boolean> {
    const decision = this.decide(obj, match);
    if (decision === "owned") return true;
    if (decision === "ignore") return false;
    try {
      await (decision === "adopt" ? adopt(obj) : release(obj));
    } catch (error) {
      if (isNotFound(error)) return false; // gone: nothing to own
      throw error;
    }
    return decision === "adopt";
  }

  /** @internal The synchronous part of {@link claimObject}. */
  decide<T extends KubeObject | DeepReadonly<KubeObject>>(obj: T, match: (obj: T) => boolean): Decision {
    const controllerMeta = this.controller.metadata!;
    // Not getControllerOf: it copies, and this runs for every pod on every sync.
    const ref = obj.metadata?.ownerReferences?.find((owner) => owner.controller === true);
    if (ref !== undefined) {
      if (ref.uid !== controllerMeta.uid) return "ignore";
      if (match(obj)) return "owned";
      // Do not release while being deleted: the garbage collector may be orphaning.
      if (controllerMeta.deletionTimestamp != null) return "ignore";
      return "release";
    }
    if (controllerMeta.deletionTimestamp != null || !match(obj)) return "ignore";
    if (obj.metadata?.deletionTimestamp != null) return "ignore"; // never adopt a dying object
    if (controllerMeta.namespace && controllerMeta.namespace !== obj.metadata?.namespace) return "ignore";
    return "adopt";
  }

  /** The patch that adds this controller's controllerRef (uid of the object as a precondition). */
  adoptPatch(objectUid: string): unknown {
    const meta = this.controller.metadata!;
    return {
      metadata: {
        ownerReferences: [
          {
            apiVersion: this.controllerKind.apiVersion,
            kind: this.controllerKind.kind,
            name: meta.name,
            uid: meta.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        uid: objectUid,
        ...(this.finalizers.length > 0 ? { finalizers: [...this.finalizers] } : {}),
      },
    };
  }

  /** The strategic-merge patch that removes this controller's ownerReference (and finalizers). */
  releasePatch(objectUid: string): unknown {
    return {
      metadata: {
        ownerReferences: [{ $patch: "delete", uid: this.controller.metadata!.uid }],
        uid: objectUid,
        ...(this.finalizers.length > 0
          ? { "$deleteFromPrimitiveList/finalizers": [...this.finalizers] }
          : {}),
      },
    };
  }

  /** @internal Claims many objects one after the other, collecting errors. */
  async claimAll<T extends KubeObject | DeepReadonly<KubeObject>>(
    objects: readonly T[],
    match: (obj: T) => boolean,
    adopt: (obj: T) => Promise<void>,
    release: (obj: T) => Promise<void>,
  ): Promise<ClaimResult<T>> {
    const claimed: T[] = [];
    const errors: Error[] = [];
    for (const obj of objects) {
      // Most objects are already owned: decide synchronously, await only for writes.
      const decision = this.decide(obj, match);
      if (decision === "owned") {
        claimed.push(obj);
        continue;
      }
      if (decision === "ignore") continue;
      try {
        if (await this.claimObject(obj, match, adopt, release)) claimed.push(obj);
      } catch (error) {
        errors.push(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return { claimed, errors };
  }

  /** @internal */
  async checkCanAdopt(kind: string, obj: KubeObject | DeepReadonly<KubeObject>): Promise<void> {
    try {
      await this.canAdopt();
    } catch (error) {
      const meta = obj.metadata;
      throw new Error(
        `can't adopt ${kind} ${meta?.namespace}/${meta?.name} (${meta?.uid}): ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }
}

/** Options of {@link PodControllerRefManager}. */
export interface PodControllerRefManagerOptions extends ControllerRefManagerOptions {
  /** Patches pods. Required. */
  podControl: PodControl;
}

/** Claims pods for a controller (upstream `PodControllerRefManager`). */
export class PodControllerRefManager extends BaseControllerRefManager {
  readonly #podControl: PodControl;

  constructor(options: PodControllerRefManagerOptions) {
    super(options);
    this.#podControl = options.podControl;
  }

  /**
   * Adopts orphaned pods that match the selector and every filter, releases
   * owned pods that no longer match, and returns the pods the controller owns.
   */
  claimPods<P extends Pod | DeepReadonly<Pod>>(
    pods: readonly P[],
    ...filters: ((pod: P) => boolean)[]
  ): Promise<ClaimResult<P>> {
    const match = (pod: P): boolean =>
      this.selector.matches(pod.metadata?.labels) && filters.every((filter) => filter(pod));
    return this.claimAll(
      pods,
      match,
      (pod) => this.adoptPod(pod),
      (pod) => this.releasePod(pod),
    );
  }

  /** Makes the controller the pod's controller, after `canAdopt`. */
  async adoptPod(pod: Pod | DeepReadonly<Pod>): Promise<void> {
    await this.checkCanAdopt("Pod", pod);
    const meta = pod.metadata!;
    await this.#podControl.patchPod(meta.namespace ?? "", meta.name ?? "", this.adoptPatch(meta.uid ?? ""), {
      signal: this.signal,
    });
  }

  /**
   * Removes the controller's ownerReference. NotFound (the pod is gone) and
   * Invalid (the pod was recreated, or has no such reference) count as done.
   */
  async releasePod(pod: Pod | DeepReadonly<Pod>): Promise<void> {
    const meta = pod.metadata!;
    try {
      await this.#podControl.patchPod(
        meta.namespace ?? "",
        meta.name ?? "",
        this.releasePatch(meta.uid ?? ""),
        {
          signal: this.signal,
        },
      );
    } catch (error) {
      if (isNotFound(error) || isInvalid(error)) return;
      throw error;
    }
  }
}

/** How controllers patch ReplicaSets (upstream `RSControlInterface`). */
export interface ReplicaSetControl {
  patchReplicaSet(
    namespace: string,
    name: string,
    patch: unknown,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<void>;
}

/** {@link ReplicaSetControl} over a `Client` (strategic-merge patches). */
export class ClientReplicaSetControl implements ReplicaSetControl {
  readonly #client: Client;

  constructor(options: { client: Client }) {
    this.#client = options.client;
  }

  async patchReplicaSet(
    namespace: string,
    name: string,
    patch: unknown,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    await this.#client
      .resource(replicaSets, namespace)
      .patch(name, patch, { type: "strategic-merge", signal: options.signal });
  }
}

/** Options of {@link ReplicaSetControllerRefManager}. */
export interface ReplicaSetControllerRefManagerOptions extends ControllerRefManagerOptions {
  /** Patches ReplicaSets. Required. */
  replicaSetControl: ReplicaSetControl;
}

/** Claims ReplicaSets for a controller such as a Deployment (upstream `ReplicaSetControllerRefManager`). */
export class ReplicaSetControllerRefManager extends BaseControllerRefManager {
  readonly #control: ReplicaSetControl;

  constructor(options: ReplicaSetControllerRefManagerOptions) {
    super(options);
    this.#control = options.replicaSetControl;
  }

  /** Adopts matching orphans, releases owned ReplicaSets that stopped matching, returns the owned ones. */
  claimReplicaSets<R extends ReplicaSet | DeepReadonly<ReplicaSet>>(
    sets: readonly R[],
  ): Promise<ClaimResult<R>> {
    return this.claimAll(
      sets,
      (rs) => this.selector.matches(rs.metadata?.labels),
      (rs) => this.adoptReplicaSet(rs),
      (rs) => this.releaseReplicaSet(rs),
    );
  }

  async adoptReplicaSet(rs: ReplicaSet | DeepReadonly<ReplicaSet>): Promise<void> {
    await this.checkCanAdopt("ReplicaSet", rs);
    const meta = rs.metadata!;
    await this.#control.patchReplicaSet(
      meta.namespace ?? "",
      meta.name ?? "",
      this.adoptPatch(meta.uid ?? ""),
      {
        signal: this.signal,
      },
    );
  }

  async releaseReplicaSet(rs: ReplicaSet | DeepReadonly<ReplicaSet>): Promise<void> {
    const meta = rs.metadata!;
    try {
      await this.#control.patchReplicaSet(
        meta.namespace ?? "",
        meta.name ?? "",
        this.releasePatch(meta.uid ?? ""),
        {
          signal: this.signal,
        },
      );
    } catch (error) {
      if (isNotFound(error) || isInvalid(error)) return;
      throw error;
    }
  }
}

/**
 * A {@link CanAdoptFunc} that reads the controller afresh (upstream
 * `RecheckDeletionTimestamp`): adoption is refused when the read fails or the
 * fresh object is being deleted. Callers' `getObject` should also reject when
 * the fresh uid differs from the cached one (the controller was recreated).
 */
export function recheckDeletionTimestamp(
  getObject: () => Promise<KubeObject | DeepReadonly<KubeObject>>,
): CanAdoptFunc {
  return async () => {
    let fresh: KubeObject | DeepReadonly<KubeObject>;
    try {
      fresh = await getObject();
    } catch (error) {
      throw new Error(`can't recheck DeletionTimestamp: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const meta = fresh.metadata;
    if (meta?.deletionTimestamp != null) {
      throw new Error(`${meta.namespace}/${meta.name} has just been deleted at ${meta.deletionTimestamp}`);
    }
  };
}
