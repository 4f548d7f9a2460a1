import {
  type DeepReadonly,
  errorMessage,
  type Job,
  jobs,
  labelSelectorAsSelector,
  type Pod,
  type Selector,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerInformer,
  type PodControl,
  PodControllerRefManager,
  recheckDeletionTimestamp,
  TerminalError,
} from "@reconcile/controller";

/** The pod index the controller adds: a pod under its controller's uid, an orphan under `orphan/<namespace>`. */
export const jobPodsIndex = "jobPods";

/**
 * The pods a Job owns, adopting matching orphans and releasing pods that no
 * longer match (upstream `getPodsForJob` through the controller ref manager).
 */
export async function claimJobPods(
  parts: { client: Client; podInformer: ControllerInformer<Pod>; podControl: PodControl },
  job: DeepReadonly<Job>,
  signal: AbortSignal | undefined,
): Promise<DeepReadonly<Pod>[]> {
  const namespace = job.metadata?.namespace ?? "";
  let selector: Selector;
  try {
    selector = labelSelectorAsSelector(job.spec?.selector);
  } catch (error) {
    throw new TerminalError(
      `invalid selector of Job ${namespace}/${job.metadata?.name}: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
  const indexer = parts.podInformer.getIndexer();
  const candidates = [
    ...indexer.byIndex(jobPodsIndex, job.metadata?.uid ?? ""),
    ...indexer.byIndex(jobPodsIndex, `orphan/${namespace}`),
  ].filter((pod) => pod.metadata?.namespace === namespace);
  const canAdopt = recheckDeletionTimestamp(async () => {
    const fresh = await parts.client.resource(jobs, namespace).get(job.metadata?.name ?? "", { signal });
    if (fresh.metadata?.uid !== job.metadata?.uid)
      throw new Error(
        `original Job ${namespace}/${job.metadata?.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${job.metadata?.uid}`,
      );
    return fresh;
  });
  const manager = new PodControllerRefManager({
    podControl: parts.podControl,
    controller: job,
    controllerKind: { apiVersion: "batch/v1", kind: "Job" },
    selector,
    canAdopt,
    signal,
  });
  const { claimed, errors } = await manager.claimPods(candidates);
  if (errors.length > 0) throw errors[0];
  return claimed;
}
