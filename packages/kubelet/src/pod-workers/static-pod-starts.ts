import type { PodSyncStatus } from "./pod-sync-status.js";
import type { ConfigPod } from "./types.js";

// Static pods (from a file or URL) start one UID per full name, in the order they arrived
// (upstream's allowPodStart and allowStaticPodStart in pod_workers.go).

/** The annotation naming a pod's config source; anything but "api" is a static pod. */
export const configSourceAnnotationKey = "kubernetes.io/config.source";

/** Whether a pod came from a static source (a file or URL), not the API server (`IsStaticPod`). */
export function isStaticPod(pod: ConfigPod): boolean {
  const source = pod.metadata?.annotations?.[configSourceAnnotationKey];
  return source !== undefined && source !== "api";
}

/** The pod workers' bookkeeping of static pods, by full name. @internal exported for tests */
export interface StaticPodStarts {
  readonly podSyncStatuses: ReadonlyMap<
    string,
    Pick<PodSyncStatus, "fullname" | "terminatingAt" | "terminatedAt">
  >;
  readonly startedStaticPodsByFullname: Map<string, string>;
  readonly waitingToStartStaticPodsByFullname: Map<string, string[]>;
}

/**
 * Whether the pod may start now, and whether it ever can (`allowPodStart`).
 * Only static pods wait: one started UID per full name, the others in the
 * order they arrived, skipping waiters already gone or terminating. A pod
 * allowed to start is recorded as the started one for its name.
 * @internal exported for tests
 */
export function allowPodStart(
  pod: ConfigPod,
  state: StaticPodStarts,
): { canStart: boolean; canEverStart: boolean } {
  if (!isStaticPod(pod)) return { canStart: true, canEverStart: true };
  const uid = pod.metadata?.uid ?? "";
  const status = state.podSyncStatuses.get(uid);
  if (status === undefined || status.terminatingAt !== 0) return { canStart: false, canEverStart: false };
  if (!allowStaticPodStart(status.fullname, uid, state)) return { canStart: false, canEverStart: true };
  return { canStart: true, canEverStart: true };
}

function allowStaticPodStart(fullname: string, uid: string, state: StaticPodStarts): boolean {
  const startedUID = state.startedStaticPodsByFullname.get(fullname);
  if (startedUID !== undefined) return startedUID === uid;

  let waiting = state.waitingToStartStaticPodsByFullname.get(fullname) ?? [];
  for (let i = 0; i < waiting.length; i++) {
    const waitingUID = waiting[i]!;
    const status = state.podSyncStatuses.get(waitingUID);
    // skip waiters that are gone or already terminating
    if (status === undefined || status.terminatingAt !== 0 || status.terminatedAt !== 0) continue;
    if (waitingUID !== uid) {
      state.waitingToStartStaticPodsByFullname.set(fullname, waiting.slice(i));
      return false;
    }
    waiting = waiting.slice(i + 1);
    break;
  }
  if (waiting.length > 0) state.waitingToStartStaticPodsByFullname.set(fullname, waiting);
  else state.waitingToStartStaticPodsByFullname.delete(fullname);
  state.startedStaticPodsByFullname.set(fullname, uid);
  return true;
}
