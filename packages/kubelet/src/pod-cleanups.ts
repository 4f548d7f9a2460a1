import type { RuntimePodStatus } from "./pleg.js";
import type { RunningPod } from "./pod-workers/index.js";
import type { PodSandbox } from "./runtime/runtime.js";

/**
 * What housekeeping does with the pods the runtime holds (the runtime half of
 * upstream's `HandlePodCleanups`): a pod neither in config nor known to the
 * workers that may still run (its status unknown, a container running or a
 * sandbox ready) is killed as a runtime pod; one whose content and runtime
 * may be removed has its sandboxes removed.
 */
export function runtimePodCleanups(options: {
  sandboxes: readonly PodSandbox[];
  /** Whether config or the workers know the pod. */
  known: (uid: string) => boolean;
  /** The PLEG's last status of the pod, if any. */
  statusOf: (uid: string) => RuntimePodStatus | undefined;
  /** Whether the workers are done with the pod's content and runtime. */
  removable: (uid: string) => boolean;
}): { kill: RunningPod[]; remove: string[] } {
  const runtimePods = new Map<string, RunningPod>();
  for (const sandbox of options.sandboxes)
    runtimePods.set(sandbox.podUid, { id: sandbox.podUid, name: sandbox.name, namespace: sandbox.namespace });
  const kill: RunningPod[] = [];
  const remove: string[] = [];
  for (const [uid, runningPod] of runtimePods) {
    if (!options.known(uid)) {
      const status = options.statusOf(uid);
      const anyRunning =
        status === undefined ||
        status.containers.some((c) => c.state === "running") ||
        status.sandboxes.some((s) => s.state === "ready");
      if (anyRunning) {
        kill.push(runningPod);
        continue;
      }
    }
    if (options.removable(uid)) remove.push(uid);
  }
  return { kill, remove };
}
