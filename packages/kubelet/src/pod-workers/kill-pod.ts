import { type Clock, realClock } from "@reconcile/clock";
import { type EventRecorder, noopEventRecorder } from "@reconcile/controller";
import { podRef } from "../pod-ref.js";
import type { ConfigPod, KillPodOptions, PodStatusFunc, RunnablePodWorkers } from "./types.js";

// Killing a pod through the workers (upstream's killPodNow, for eviction and preemption) and the
// grace period a kill gets (calculateEffectiveGracePeriod), from pod_workers.go.

/**
 * Kills a pod and resolves once its containers are stopped (upstream's
 * `eviction.KillPodFunc`); `gracePeriodOverride` in seconds.
 */
export type KillPodFunc = (
  pod: ConfigPod,
  isEvicted: boolean,
  gracePeriodOverride?: number | undefined,
  statusFn?: PodStatusFunc | undefined,
) => Promise<void>;

/**
 * Returns a function that kills a pod through the workers and resolves once
 * its containers are stopped (`killPodNow`, injected into eviction and
 * preemption). It rejects with "timeout waiting to kill pod", after recording
 * an `ExceededGracePeriod` warning, if that takes longer than
 * max(10 s, 1.5 × the grace period).
 */
export function killPodNow(
  podWorkers: Pick<RunnablePodWorkers, "updatePod">,
  recorder: EventRecorder = noopEventRecorder,
  clock: Clock = realClock,
): KillPodFunc {
  return (pod, isEvicted, gracePeriodOverride, statusFn) => {
    const gracePeriod = gracePeriodOverride ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
    // integer seconds, as upstream's int64 arithmetic
    const timeoutSeconds = Math.max(10, gracePeriod + Math.trunc(gracePeriod / 2));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = clock.setTimeout(() => {
        if (settled) return;
        settled = true;
        recorder.event(
          podRef(pod),
          "Warning",
          "ExceededGracePeriod",
          "Container runtime did not kill the pod within specified grace period.",
        );
        reject(new Error("timeout waiting to kill pod"));
      }, timeoutSeconds * 1000);
      podWorkers.updatePod({
        pod,
        updateType: "kill",
        killPodOptions: {
          onCompleted: () => {
            if (settled) return;
            settled = true;
            clock.clearTimeout(timer);
            resolve();
          },
          evict: isEvicted,
          podStatusFunc: statusFn,
          podTerminationGracePeriodSecondsOverride: gracePeriodOverride,
        },
      });
    });
  };
}

/**
 * The grace period (seconds) a terminating pod gets: the smallest of the one
 * already granted, the API server's `deletionGracePeriodSeconds` and the
 * kill's override, else the pod's `terminationGracePeriodSeconds`, and never
 * below 1 (`calculateEffectiveGracePeriod`). `shortened` says it is smaller
 * than the one already granted, so an in-flight termination must restart.
 */
export function calculateEffectiveGracePeriod(
  currentGracePeriod: number,
  pod: ConfigPod,
  options: KillPodOptions | undefined,
): { gracePeriod: number; shortened: boolean } {
  let gracePeriod = currentGracePeriod;
  // the API server's value is the bedrock truth
  const deletionGracePeriod = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGracePeriod != null && (gracePeriod === 0 || deletionGracePeriod < gracePeriod)) {
    gracePeriod = deletionGracePeriod;
  }
  // other parts of the kubelet (eviction) may ask for a faster termination
  const override = options?.podTerminationGracePeriodSecondsOverride;
  if (override != null && (gracePeriod === 0 || override < gracePeriod)) {
    gracePeriod = override;
  }
  const specGracePeriod = pod.spec?.terminationGracePeriodSeconds;
  if (gracePeriod === 0 && specGracePeriod != null) gracePeriod = specGracePeriod;
  if (gracePeriod < 1) gracePeriod = 1;
  return { gracePeriod, shortened: currentGracePeriod !== 0 && currentGracePeriod !== gracePeriod };
}

/** Upstream's `NetworkNotReadyErrorMsg`: a sync failing with it is retried after about a second. */
