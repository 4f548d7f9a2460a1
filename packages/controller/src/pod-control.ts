import {
  copyJson,
  type DeepReadonly,
  errorMessage,
  hasStatusCause,
  isDNS1123Subdomain,
  isNotFound,
  type KubeObject,
  type OwnerReference,
  type Pod,
  type PodSpec,
  type PodTemplateSpec,
  pods,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type EventRecorder, noopEventRecorder } from "./event-recorder.js";

/** Event reasons PodControl records, as upstream's. */
export const failedCreatePodReason = "FailedCreate";
export const successfulCreatePodReason = "SuccessfulCreate";
export const failedDeletePodReason = "FailedDelete";
export const successfulDeletePodReason = "SuccessfulDelete";

/** Per-call options of {@link PodControl}. */
export interface PodControlCallOptions {
  /**
   * Aborts the API call (pass the worker's `SyncContext.signal`, so a stop
   * does not wait on requests in flight). An aborted call records no Event.
   */
  signal?: AbortSignal | undefined;
}

/**
 * How controllers create, delete and patch pods (upstream `PodControlInterface`).
 * Every method rejects with the API error when the call fails.
 */
export interface PodControl {
  /** Creates one pod from `template`, owned through `controllerRef`, named `<controller name>-<random>`. */
  createPods(
    namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    options?: PodControlCallOptions,
  ): Promise<void>;
  /** As {@link createPods}, with an explicit `generateName`. */
  createPodsWithGenerateName(
    namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    generateName: string,
    options?: PodControlCallOptions,
  ): Promise<void>;
  /** Deletes a pod. A NotFound error is passed through as is, so callers can tell it apart. */
  deletePod(
    namespace: string,
    podName: string,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    options?: PodControlCallOptions,
  ): Promise<void>;
  /** Applies a strategic-merge patch to a pod. */
  patchPod(namespace: string, name: string, patch: unknown, options?: PodControlCallOptions): Promise<void>;
}

export interface ClientPodControlOptions {
  /** Where pods are written. Required. */
  client: Client;
  /** Where SuccessfulCreate/FailedCreate/SuccessfulDelete/FailedDelete go. Default: records nothing. */
  recorder?: EventRecorder | undefined;
}

/**
 * {@link PodControl} over a `Client` (upstream `RealPodControl`): pods are
 * built from the template with {@link getPodFromTemplate}; every create and
 * delete records an Event on the controller object.
 */
export class ClientPodControl implements PodControl {
  readonly #client: Client;
  readonly #recorder: EventRecorder;

  constructor(options: ClientPodControlOptions) {
    this.#client = options.client;
    this.#recorder = options.recorder ?? noopEventRecorder;
  }

  createPods(
    namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    options: PodControlCallOptions = {},
  ): Promise<void> {
    return this.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, "", options);
  }

  async createPodsWithGenerateName(
    namespace: string,
    template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    controllerRef: OwnerReference,
    generateName: string,
    options: PodControlCallOptions = {},
  ): Promise<void> {
    validateControllerRef(controllerRef);
    const pod = getPodFromTemplate(template, controllerObject, controllerRef);
    if (generateName) pod.metadata!.generateName = generateName;
    if (Object.keys(pod.metadata?.labels ?? {}).length === 0) {
      throw new Error("unable to create pods, no labels");
    }
    const eventTarget = withKind(controllerObject, controllerRef);
    let created: Pod;
    try {
      created = await this.#client.resource(pods, namespace).create(pod, { signal: options.signal });
    } catch (error) {
      // No event while the namespace is going away (the creates are doomed and
      // expected to fail), nor for a call the controller itself aborted.
      if (!hasStatusCause(error, "NamespaceTerminating") && !options.signal?.aborted) {
        this.#recorder.event(
          eventTarget,
          "Warning",
          failedCreatePodReason,
          `Error creating: ${errorMessage(error)}`,
        );
      }
      throw error;
    }
    this.#recorder.event(
      eventTarget,
      "Normal",
      successfulCreatePodReason,
      `Created pod: ${created.metadata?.name}`,
    );
  }

  async deletePod(
    namespace: string,
    podName: string,
    controllerObject: KubeObject | DeepReadonly<KubeObject>,
    options: PodControlCallOptions = {},
  ): Promise<void> {
    try {
      await this.#client.resource(pods, namespace).delete(podName, { signal: options.signal });
    } catch (error) {
      if (isNotFound(error) || options.signal?.aborted) throw error;
      this.#recorder.event(
        controllerObject,
        "Warning",
        failedDeletePodReason,
        `Error deleting: ${errorMessage(error)}`,
      );
      throw new Error(`unable to delete pods: ${errorMessage(error)}`, { cause: error });
    }
    this.#recorder.event(controllerObject, "Normal", successfulDeletePodReason, `Deleted pod: ${podName}`);
  }

  async patchPod(
    namespace: string,
    name: string,
    patch: unknown,
    options: PodControlCallOptions = {},
  ): Promise<void> {
    await this.#client
      .resource(pods, namespace)
      .patch(name, patch, { type: "strategic-merge", signal: options.signal });
  }
}

/**
 * Checks a controllerRef before it is written into a pod (upstream
 * `validateControllerRef`): it needs apiVersion and kind, `controller: true`
 * and `blockOwnerDeletion: true`. Throws an error naming what is missing.
 */
export function validateControllerRef(controllerRef: OwnerReference | undefined): void {
  if (controllerRef === undefined || controllerRef === null) {
    throw new TypeError("controllerRef is nil");
  }
  if (!controllerRef.apiVersion) throw new TypeError("controllerRef has empty APIVersion");
  if (!controllerRef.kind) throw new TypeError("controllerRef has empty Kind");
  if (controllerRef.controller !== true) throw new TypeError("controllerRef.Controller is not set to true");
  if (controllerRef.blockOwnerDeletion !== true) {
    throw new TypeError("controllerRef.BlockOwnerDeletion is not set");
  }
}

/**
 * The pod a controller creates from its template (upstream
 * `GetPodFromTemplate`): the template's labels, annotations, finalizers and
 * spec (copied), `generateName` `<controller name>-`, and the controllerRef
 * appended to ownerReferences.
 */
export function getPodFromTemplate(
  template: PodTemplateSpec | DeepReadonly<PodTemplateSpec>,
  parentObject: KubeObject | DeepReadonly<KubeObject>,
  controllerRef: OwnerReference | undefined,
): Pod {
  const meta = template.metadata;
  // Built member by member: members added after a leading spread cost V8 a new hidden class each time.
  const metadata: NonNullable<Pod["metadata"]> = {};
  // Empty maps are left out, as upstream's encoding omits them.
  if (meta?.labels && Object.keys(meta.labels).length > 0) metadata.labels = { ...meta.labels };
  if (meta?.annotations && Object.keys(meta.annotations).length > 0)
    metadata.annotations = { ...meta.annotations };
  metadata.generateName = podsPrefix(parentObject.metadata?.name ?? "");
  if (meta?.finalizers && meta.finalizers.length > 0) metadata.finalizers = [...meta.finalizers];
  if (controllerRef) metadata.ownerReferences = [{ ...controllerRef }];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: copyJson(template.spec ?? { containers: [] }) as PodSpec,
  };
}

// `<name>-` when that is a valid name prefix, else the name itself (upstream getPodsPrefix).
function podsPrefix(controllerName: string): string {
  const prefix = `${controllerName}-`;
  // As a prefix, a trailing dash is fine: validate it with the dash masked.
  return isDNS1123Subdomain(`${controllerName}a`).length === 0 ? prefix : controllerName;
}

// Objects read from a cache may lack kind/apiVersion; the controllerRef names them.
function withKind(
  object: KubeObject | DeepReadonly<KubeObject>,
  controllerRef: OwnerReference,
): KubeObject | DeepReadonly<KubeObject> {
  if (object.kind) return object;
  return { ...object, apiVersion: controllerRef.apiVersion, kind: controllerRef.kind };
}
