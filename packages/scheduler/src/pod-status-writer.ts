import {
  type DeepReadonly,
  isNotFound,
  type Pod,
  type PodCondition,
  pods as podsResource,
  rfc3339,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder, Logger } from "@reconcile/controller";
import type { PreemptionCandidate } from "./fit-error.js";
import { preemptionByScheduler } from "./plugins/default-preemption.js";

// The scheduler's writes to pods other than the binding: a pod's
// PodScheduled=False condition and nomination after a failed cycle, and the
// eviction of preemption's victims.

export interface PodStatusWriterOptions {
  client: Client;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  schedulerName: string;
  /** The signal the scheduler runs under (set when it starts), which cancels the writes. */
  signal: () => AbortSignal;
}

/** A pod as an Event's object: with its kind. */
export function withKind(pod: DeepReadonly<Pod>): DeepReadonly<Pod> {
  return pod.kind ? pod : { ...pod, apiVersion: "v1", kind: "Pod" };
}

export class PodStatusWriter {
  readonly #options: PodStatusWriterOptions;

  constructor(options: PodStatusWriterOptions) {
    this.#options = options;
  }

  /**
   * `PreemptPod` for each victim: the DisruptionTarget condition (reason
   * PreemptionByScheduler), the delete, and a Preempted Event naming the
   * preemptor. A victim already gone is passed over.
   */
  async evictVictims(preemptor: DeepReadonly<Pod>, candidate: PreemptionCandidate): Promise<void> {
    const { client, clock, logger, recorder, schedulerName } = this.#options;
    const signal = this.#options.signal();
    await Promise.all(
      candidate.victims.map(async (victim) => {
        const namespace = victim.metadata?.namespace ?? "";
        const name = victim.metadata?.name ?? "";
        const pods = client.resource(podsResource, namespace);
        try {
          const already = victim.status?.conditions?.some(
            (c) => c.type === "DisruptionTarget" && c.status === "True" && c.reason === preemptionByScheduler,
          );
          if (!already) {
            const condition: PodCondition = {
              type: "DisruptionTarget",
              status: "True",
              reason: preemptionByScheduler,
              message: `${preemptor.spec?.schedulerName ?? schedulerName}: preempting to accommodate a higher priority pod`,
              lastTransitionTime: rfc3339(clock.now()),
            };
            await pods.patch(
              name,
              { status: { conditions: [condition] } },
              { type: "strategic-merge", subresource: "status", signal },
            );
          }
          await pods.delete(name, { signal });
        } catch (error) {
          if (isNotFound(error)) return; // gone already
          if (!signal.aborted)
            logger.error({ err: error, pod: `${namespace}/${name}` }, "Tried to preempt pod");
          return;
        }
        recorder.event(
          withKind(victim),
          "Normal",
          "Preempted",
          `Preempted by pod ${preemptor.metadata?.uid ?? ""} on node ${candidate.nodeName}`,
          { action: "Preempting", related: withKind(preemptor) },
        );
      }),
    );
  }

  /** `ClearNominatedNodeName` of one pod. */
  async clearNominatedNodeName(pod: DeepReadonly<Pod>): Promise<void> {
    const signal = this.#options.signal();
    try {
      await this.#options.client
        .resource(podsResource, pod.metadata?.namespace ?? "")
        .patch(
          pod.metadata?.name ?? "",
          { status: { nominatedNodeName: null } },
          { type: "strategic-merge", subresource: "status", signal },
        );
    } catch (error) {
      if (!signal.aborted && !isNotFound(error))
        this.#options.logger.error({ err: error }, "Cannot clear 'NominatedNodeName' field");
    }
  }

  /**
   * upstream `updatePod`: `PodScheduled=False` with the reason and message,
   * and `nominatedNodeName` when given ("" clears it); no write when nothing
   * changes.
   */
  async setPodScheduledFalse(
    pod: DeepReadonly<Pod>,
    reason: string,
    message: string,
    nominatedNodeName?: string,
  ): Promise<void> {
    const { client, clock, logger } = this.#options;
    const signal = this.#options.signal();
    const existing = pod.status?.conditions?.find((condition) => condition.type === "PodScheduled");
    const nominationChanges =
      nominatedNodeName !== undefined && (pod.status?.nominatedNodeName ?? "") !== nominatedNodeName;
    if (
      existing?.status === "False" &&
      existing.reason === reason &&
      existing.message === message &&
      !nominationChanges
    )
      return;
    const condition: PodCondition = {
      type: "PodScheduled",
      status: "False",
      reason,
      message,
      lastTransitionTime:
        existing?.status === "False" && existing.lastTransitionTime
          ? existing.lastTransitionTime
          : rfc3339(clock.now()),
    };
    try {
      await client.resource(podsResource, pod.metadata?.namespace ?? "").patch(
        pod.metadata?.name ?? "",
        {
          status: {
            conditions: [condition],
            ...(nominationChanges ? { nominatedNodeName: nominatedNodeName || null } : {}),
          },
        },
        { type: "strategic-merge", subresource: "status", signal },
      );
    } catch (error) {
      if (!signal.aborted) logger.error({ err: error }, "Error updating pod condition");
    }
  }
}
