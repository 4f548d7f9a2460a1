import type { DeepReadonly, Pod } from "@reconcile/api";
import { isMirrorPodOf, podFullName } from "./static-pods.js";

/**
 * The kubelet's pod manager (upstream `pkg/kubelet/pod` basic manager): the
 * pods config gave it, by UID; the mirror pods the API server holds for its
 * static pods, by full name (`<name>_<namespace>`); and which full name each
 * static pod runs under. Everything that asks "which pod is this" asks here.
 */
export class PodManager {
  readonly #pods = new Map<string, DeepReadonly<Pod>>();
  readonly #mirrorPods = new Map<string, DeepReadonly<Pod>>();
  /** Static pods from the kubelet's sources: full name → UID. */
  readonly #staticPods = new Map<string, string>();

  /** The config pod of this UID. */
  getPodByUID(uid: string): DeepReadonly<Pod> | undefined {
    return this.#pods.get(uid);
  }

  hasPod(uid: string): boolean {
    return this.#pods.has(uid);
  }

  /** Every config pod. */
  getPods(): DeepReadonly<Pod>[] {
    return [...this.#pods.values()];
  }

  /** The config pod named so, the last added if several share the name. */
  getPodByName(namespace: string, name: string): DeepReadonly<Pod> | undefined {
    let found: DeepReadonly<Pod> | undefined;
    for (const pod of this.#pods.values()) {
      if (pod.metadata?.namespace === namespace && pod.metadata?.name === name) found = pod;
    }
    return found;
  }

  /** Adds or replaces a config pod (upstream `AddPod`/`UpdatePod`). */
  setPod(pod: DeepReadonly<Pod>): void {
    this.#pods.set(pod.metadata?.uid ?? "", pod);
  }

  removePod(uid: string): void {
    this.#pods.delete(uid);
  }

  /** The mirror pod of a static pod's full name. */
  getMirrorPodByFullName(fullName: string): DeepReadonly<Pod> | undefined {
    return this.#mirrorPods.get(fullName);
  }

  setMirrorPod(mirror: DeepReadonly<Pod>): void {
    this.#mirrorPods.set(podFullName(mirror), mirror);
  }

  /** Forgets the mirror pod of `fullName`; with `uid`, only if it is that one. */
  removeMirrorPod(fullName: string, uid?: string): void {
    if (uid === undefined || this.#mirrorPods.get(fullName)?.metadata?.uid === uid) {
      this.#mirrorPods.delete(fullName);
    }
  }

  /** The mirror pods, by full name (a copy: safe to remove from while iterating). */
  mirrorPods(): [string, DeepReadonly<Pod>][] {
    return [...this.#mirrorPods];
  }

  /** The UID of the static pod running under `fullName`. */
  staticPodUID(fullName: string): string | undefined {
    return this.#staticPods.get(fullName);
  }

  /** The config pod of the static pod running under `fullName`. */
  staticPodByFullName(fullName: string): DeepReadonly<Pod> | undefined {
    const uid = this.#staticPods.get(fullName);
    return uid === undefined ? undefined : this.#pods.get(uid);
  }

  /** Whether the config pod of this UID came from a static source. */
  isStaticPod(uid: string): boolean {
    if (this.#staticPods.size === 0) return false;
    const pod = this.#pods.get(uid);
    return pod !== undefined && this.#staticPods.get(podFullName(pod)) === uid;
  }

  /** The pod as the API server holds it: a static pod's mirror pod (undefined until there is one), or the pod itself. */
  apiPodOf(uid: string): DeepReadonly<Pod> | undefined {
    const pod = this.#pods.get(uid);
    if (pod === undefined || this.#staticPods.size === 0) return pod;
    const fullName = podFullName(pod);
    if (this.#staticPods.get(fullName) !== uid) return pod;
    const mirror = this.#mirrorPods.get(fullName);
    return mirror !== undefined && isMirrorPodOf(mirror, pod) ? mirror : undefined;
  }

  /**
   * Takes a static source's whole set of pods: the full names it ran before
   * (`mine`, updated) and what it reads now. Returns the config pods to
   * remove (gone, or replaced by a changed manifest: a new UID) and the pods
   * to add.
   */
  applyStaticPods(mine: Set<string>, found: readonly Pod[]): { removed: DeepReadonly<Pod>[]; added: Pod[] } {
    const seen = new Set(found.map((pod) => pod.metadata?.uid ?? ""));
    const removed: DeepReadonly<Pod>[] = [];
    for (const fullName of mine) {
      const uid = this.#staticPods.get(fullName);
      if (uid !== undefined && seen.has(uid)) continue;
      mine.delete(fullName);
      if (uid === undefined) continue;
      this.#staticPods.delete(fullName);
      const pod = this.#pods.get(uid);
      if (pod !== undefined) removed.push(pod);
    }
    const added = found.filter((pod) => this.#staticPods.get(podFullName(pod)) !== pod.metadata?.uid);
    for (const pod of added) {
      this.#staticPods.set(podFullName(pod), pod.metadata?.uid ?? "");
      mine.add(podFullName(pod));
    }
    return { removed, added };
  }
}
