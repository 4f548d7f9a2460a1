import type { Logger } from "@reconcile/controller";
import { isTerminationRequested, type PodSyncStatus } from "./pod-sync-status.js";
import type { ConfigPod, RunningPod, UpdatePodOptions } from "./types.js";

// What one update means before the pod workers act on it (the first half of upstream's
// UpdatePod): which UID it is for, and whether it starts that pod's termination.

/**
 * The UID, name and namespace an update is for: its pod's, or its running
 * pod's when it has no config pod (which can only be killed). Undefined,
 * logged, for an update that can do nothing.
 */
export function identifyUpdate<R extends RunningPod>(
  options: UpdatePodOptions<R>,
  logger: Logger,
): { uid: string; name: string; namespace: string; isRuntimePod: boolean } | undefined {
  let identity: { uid: string; name: string; namespace: string; isRuntimePod: boolean };
  if (options.pod === undefined) {
    const runningPod = options.runningPod;
    if (runningPod === undefined) {
      logger.error({ updateType: options.updateType }, "Pod update has neither a pod nor a running pod");
      return undefined;
    }
    if (options.updateType !== "kill") {
      logger.info(
        {
          pod: `${runningPod.namespace}/${runningPod.name}`,
          podUID: runningPod.id,
          updateType: options.updateType,
        },
        "Pod update is ignored, runtime pods can only be killed",
      );
      return undefined;
    }
    identity = {
      uid: runningPod.id,
      name: runningPod.name,
      namespace: runningPod.namespace,
      isRuntimePod: true,
    };
  } else {
    options.runningPod = undefined;
    const { uid = "", name = "", namespace = "" } = options.pod.metadata ?? {};
    identity = { uid, name, namespace, isRuntimePod: false };
  }
  if (identity.uid === "") {
    logger.error(
      { pod: `${identity.namespace}/${identity.name}`, updateType: options.updateType },
      "Pod update has no UID, ignored",
    );
    return undefined;
  }
  return identity;
}

/** Whether this update starts the pod's termination: a runtime pod, a deleted or finished pod, or a kill. */
export function requestTermination<R extends RunningPod>(
  status: PodSyncStatus<R>,
  pod: ConfigPod,
  options: UpdatePodOptions<R>,
  isRuntimePod: boolean,
  now: number,
): boolean {
  if (isTerminationRequested(status)) return false;
  const phase = pod.status?.phase;
  const finished = phase === "Failed" || phase === "Succeeded";
  if (isRuntimePod || pod.metadata?.deletionTimestamp != null) {
    status.deleted = true;
  } else if (!finished) {
    if (options.updateType !== "kill") return false;
    if (options.killPodOptions?.evict) status.evicted = true;
  }
  status.terminatingAt = now;
  return true;
}
