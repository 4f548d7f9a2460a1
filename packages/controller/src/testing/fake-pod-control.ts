import type { DeepReadonly, KubeObject, OwnerReference, PodTemplateSpec } from "@reconcile/api";
import type { PodControl, PodControlCallOptions } from "../pod-control.js";

/**
 * A {@link PodControl} that only records what it was asked (upstream
 * `FakePodControl`). Every create counts in `createCallCount`; calls beyond
 * `createLimit` (0 = unlimited) fail and are not recorded; `err`, when set,
 * is thrown by every call after it has been recorded.
 */
export class FakePodControl implements PodControl {
  readonly templates: PodTemplateSpec[] = [];
  readonly controllerRefs: OwnerReference[] = [];
  readonly deletePodNames: string[] = [];
  readonly patches: { namespace: string; name: string; patch: unknown }[] = [];
  /** Thrown by every call after recording it. Default: none. */
  err: Error | undefined;
  /** Creates beyond this many fail without being recorded; 0 = unlimited. Default 0. */
  createLimit = 0;
  createCallCount = 0;

  constructor(options: { err?: Error | undefined; createLimit?: number | undefined } = {}) {
    this.err = options.err;
    this.createLimit = options.createLimit ?? 0;
  }

  createPods(
    namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    options?: PodControlCallOptions,
  ): Promise<void> {
    return this.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, "", options);
  }

  async createPodsWithGenerateName(
    _namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    _controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    _generateName: string,
    _options?: PodControlCallOptions,
  ): Promise<void> {
    this.createCallCount++;
    if (this.createLimit !== 0 && this.createCallCount > this.createLimit) {
      throw new Error(
        `not creating pod, limit ${this.createLimit} already reached (create call ${this.createCallCount})`,
      );
    }
    this.templates.push(structuredClone(template) as PodTemplateSpec);
    this.controllerRefs.push({ ...controllerRef });
    if (this.err) throw this.err;
  }

  async deletePod(
    _namespace: string,
    podName: string,
    _controllerObject?: unknown,
    _options?: PodControlCallOptions,
  ): Promise<void> {
    this.deletePodNames.push(podName);
    if (this.err) throw this.err;
  }

  async patchPod(
    namespace: string,
    name: string,
    patch: unknown,
    _options?: PodControlCallOptions,
  ): Promise<void> {
    this.patches.push({ namespace, name, patch: structuredClone(patch) });
    if (this.err) throw this.err;
  }

  /** Forgets every recorded call and the create count (upstream `Clear`). */
  clear(): void {
    this.templates.length = 0;
    this.controllerRefs.length = 0;
    this.deletePodNames.length = 0;
    this.patches.length = 0;
    this.createCallCount = 0;
  }
}
