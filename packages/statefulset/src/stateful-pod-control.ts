import {
  persistentVolumeClaims as claimsResource,
  type DeepReadonly,
  errorMessage,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type OwnerReference,
  type Pod,
  pods,
  type StatefulSet,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { ControllerIndexer, EventRecorder } from "@reconcile/controller";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import {
  controllerKind,
  identityMatches,
  persistentVolumeClaims,
  podInOrdinalRange,
  storageMatches,
  updateIdentity,
  updateStorage,
} from "./stateful-set-utils.js";

type Set = DeepReadonly<StatefulSet>;
type AnyPod = Pod | DeepReadonly<Pod>;

/** Options of {@link StatefulPodControl}. */
export interface StatefulPodControlOptions {
  client: Client;
  recorder: EventRecorder;
  pods: ControllerIndexer<Pod>;
  claims: ControllerIndexer<PersistentVolumeClaim>;
}

/**
 * Creates, updates and deletes a StatefulSet's pods and their claims, with
 * an Event for each (upstream `StatefulPodControl`). Claims are made before
 * the pod that mounts them, and carry the owner references the set's
 * `persistentVolumeClaimRetentionPolicy` asks for.
 */
export class StatefulPodControl {
  readonly #client: Client;
  readonly #recorder: EventRecorder;
  readonly #pods: ControllerIndexer<Pod>;
  readonly #claims: ControllerIndexer<PersistentVolumeClaim>;

  constructor(options: StatefulPodControlOptions) {
    this.#client = options.client;
    this.#recorder = options.recorder;
    this.#pods = options.pods;
    this.#claims = options.claims;
  }

  /** The claims first, then the pod; an existing pod is an AlreadyExists error, recorded nowhere. */
  async createStatefulPod(set: Set, pod: Pod, signal?: AbortSignal): Promise<void> {
    try {
      await this.#createClaims(set, pod, signal);
    } catch (error) {
      this.#podEvent("create", set, pod, error);
      throw error;
    }
    const namespace = set.metadata?.namespace ?? "";
    let created: Pod;
    try {
      created = await this.#client.resource(pods, namespace).create(pod, { signal });
    } catch (error) {
      if (isAlreadyExists(error)) throw error;
      this.#podEvent("create", set, pod, error);
      throw error;
    }
    try {
      await this.updateClaimsForRetentionPolicy(set, created, signal);
    } catch (error) {
      this.#podEvent("update", set, pod, error);
      throw error;
    }
    this.#podEvent("create", set, pod, undefined);
  }

  /**
   * Restores the pod's identity and storage where they drifted, and its
   * claims' owner references, re-reading the pod on a conflict (upstream `UpdateStatefulPod`).
   */
  async updateStatefulPod(set: Set, original: AnyPod, signal?: AbortSignal): Promise<void> {
    let pod = structuredClone(original) as Pod;
    const api = this.#client.resource(pods, set.metadata?.namespace ?? "");
    for (let attempt = 0; ; attempt++) {
      let consistent = true;
      if (!identityMatches(set, pod)) {
        updateIdentity(set, pod);
        consistent = false;
      }
      if (!storageMatches(set, pod)) {
        updateStorage(set, pod);
        consistent = false;
        await this.#createClaims(set, pod, signal).catch((error: unknown) => {
          this.#podEvent("update", set, pod, error);
          throw error;
        });
      }
      if (!(await this.claimsMatchRetentionPolicy(set, pod))) {
        await this.updateClaimsForRetentionPolicy(set, pod, signal).catch((error: unknown) => {
          this.#podEvent("update", set, pod, error);
          throw error;
        });
      }
      if (consistent) return;
      try {
        await api.update(pod, { signal });
        this.#podEvent("update", set, pod, undefined);
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= 9) {
          this.#podEvent("update", set, pod, error);
          throw error;
        }
        const cached = this.#pods.getByKey(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
        pod = structuredClone(cached ?? (await api.get(pod.metadata?.name ?? "", { signal }))) as Pod;
      }
    }
  }

  async deleteStatefulPod(set: Set, pod: AnyPod, signal?: AbortSignal): Promise<void> {
    try {
      await this.#client
        .resource(pods, pod.metadata?.namespace ?? "")
        .delete(pod.metadata?.name ?? "", { signal });
    } catch (error) {
      this.#podEvent("delete", set, pod, error);
      throw error;
    }
    this.#podEvent("delete", set, pod, undefined);
  }

  /** Creates the claims of a pending pod that are missing (upstream `createMissingPersistentVolumeClaims`). */
  createMissingClaims(set: Set, pod: AnyPod, signal?: AbortSignal): Promise<void> {
    return this.#createClaims(set, pod, signal);
  }

  /** Whether every claim of the pod carries the owner references the retention policy asks for. */
  async claimsMatchRetentionPolicy(set: Set, pod: AnyPod): Promise<boolean> {
    for (const claim of persistentVolumeClaims(set, pod).values()) {
      const existing = this.#claims.getByKey(`${claim.metadata?.namespace}/${claim.metadata?.name}`);
      if (existing !== undefined && wantedOwnerRefs(set, pod, existing) !== undefined) return false;
    }
    return true;
  }

  /** Gives the pod's claims the owner references the retention policy asks for (upstream `UpdatePodClaimForRetentionPolicy`). */
  async updateClaimsForRetentionPolicy(set: Set, pod: AnyPod, signal?: AbortSignal): Promise<void> {
    for (const claim of persistentVolumeClaims(set, pod).values()) {
      const namespace = claim.metadata?.namespace ?? "";
      const name = claim.metadata?.name ?? "";
      const existing = this.#claims.getByKey(`${namespace}/${name}`);
      if (existing === undefined) continue;
      const ownerReferences = wantedOwnerRefs(set, pod, existing);
      if (ownerReferences === undefined) continue;
      const updated = {
        ...structuredClone(existing),
        metadata: { ...structuredClone(existing.metadata), ownerReferences },
      };
      try {
        await this.#client
          .resource(claimsResource, namespace)
          .update(updated as PersistentVolumeClaim, { signal });
      } catch (error) {
        if (isNotFound(error)) continue;
        throw new Error(
          `could not update claim ${name} for delete policy ownerRefs: ${errorMessage(error)}`,
          {
            cause: error,
          },
        );
      }
    }
  }

  async #createClaims(set: Set, pod: AnyPod, signal: AbortSignal | undefined): Promise<void> {
    const failures: string[] = [];
    for (const claim of persistentVolumeClaims(set, pod).values()) {
      const namespace = claim.metadata?.namespace ?? "";
      const name = claim.metadata?.name ?? "";
      const existing = this.#claims.getByKey(`${namespace}/${name}`);
      if (existing !== undefined) {
        if (existing.metadata?.deletionTimestamp != null) failures.push(`pvc ${name} is being deleted`);
        continue;
      }
      try {
        await this.#client.resource(claimsResource, namespace).create(claim, { signal });
        this.#claimEvent("create", set, pod, claim, undefined);
      } catch (error) {
        if (isAlreadyExists(error)) continue;
        failures.push(`failed to create PVC ${name}: ${errorMessage(error)}`);
        this.#claimEvent("create", set, pod, claim, error);
      }
    }
    if (failures.length === 1) throw new Error(failures[0]);
    if (failures.length > 1) throw new Error(`[${failures.join(", ")}]`);
  }

  #podEvent(verb: string, set: Set, pod: AnyPod, error: unknown): void {
    const name = pod.metadata?.name ?? "";
    const reason = `${error === undefined ? "Successful" : "Failed"}${verb[0]!.toUpperCase()}${verb.slice(1)}`;
    if (error === undefined)
      this.#recorder.event(
        set,
        "Normal",
        reason,
        `${verb} Pod ${name} in StatefulSet ${set.metadata?.name} successful`,
      );
    else
      this.#recorder.event(
        set,
        "Warning",
        reason,
        `${verb} Pod ${name} in StatefulSet ${set.metadata?.name} failed error: ${errorMessage(error)}`,
      );
  }

  #claimEvent(verb: string, set: Set, pod: AnyPod, claim: PersistentVolumeClaim, error: unknown): void {
    const [claimName, podName, setName] = [claim.metadata?.name, pod.metadata?.name, set.metadata?.name];
    const reason = `${error === undefined ? "Successful" : "Failed"}${verb[0]!.toUpperCase()}${verb.slice(1)}`;
    if (error === undefined)
      this.#recorder.event(
        set,
        "Normal",
        reason,
        `${verb} Claim ${claimName} Pod ${podName} in StatefulSet ${setName} success`,
      );
    else
      this.#recorder.event(
        set,
        "Warning",
        reason,
        `${verb} Claim ${claimName} for Pod ${podName} in StatefulSet ${setName} failed error: ${errorMessage(error)}`,
      );
  }
}

/**
 * The claim's owner references under the retention policy, or undefined
 * when they are right already (upstream `updateClaimOwnerRefForSetAndPod`):
 * `whenDeleted: Delete` makes the set an owner; `whenScaled: Delete` makes a
 * condemned pod (outside the ordinal range) the owner instead; Retain
 * removes the reference.
 */
export function wantedOwnerRefs(
  set: Set,
  pod: AnyPod,
  claim: PersistentVolumeClaim | DeepReadonly<PersistentVolumeClaim>,
): OwnerReference[] | undefined {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy;
  const whenDeleted = policy?.whenDeleted ?? "Retain";
  const whenScaled = policy?.whenScaled ?? "Retain";
  const scaledDown = !podInOrdinalRange(pod, set);
  const setRef: OwnerReference = {
    ...controllerKind,
    name: set.metadata?.name ?? "",
    uid: set.metadata?.uid ?? "",
  };
  const podRef: OwnerReference = {
    apiVersion: "v1",
    kind: "Pod",
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
  };
  let wantSet = false;
  let wantPod = false;
  if (whenScaled === "Delete" && scaledDown) wantPod = pod.metadata?.uid !== undefined;
  else wantSet = whenDeleted === "Delete";
  const refs = (claim.metadata?.ownerReferences ?? []) as OwnerReference[];
  const kept = refs.filter(
    (ref) => ref.uid !== setRef.uid && !(ref.kind === "Pod" && ref.name === podRef.name),
  );
  const wanted = [...kept, ...(wantSet ? [setRef] : []), ...(wantPod ? [podRef] : [])];
  const same =
    wanted.length === refs.length &&
    wanted.every((ref) => refs.some((have) => have.uid === ref.uid && have.kind === ref.kind));
  return same ? undefined : wanted;
}
