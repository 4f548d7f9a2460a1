import {
  type DeepReadonly,
  type DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  jsonEqual,
  type Pod,
  pods,
} from "@reconcile/api";
import { type Client, listerWatcher } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { type ResourceEventHandler, SharedIndexInformer } from "@reconcile/informer";

// The kubelet's pod source from the API server (upstream's config/apiserver.go, a watch on the
// pods bound to this node) and how its changes are classified (config.go's checkAndUpdatePod).

/** What the config source calls a change (`kubetypes` ops). */
export type ConfigOp = "ADD" | "UPDATE" | "DELETE" | "REMOVE" | "RECONCILE";

/** The handler that turns informer events into config changes for the sync loop. */
export function podConfigHandler(
  send: (op: ConfigOp, pods: DeepReadonly<Pod>[]) => void,
): ResourceEventHandler<Pod> {
  return {
    onAdd: (pod) => send("ADD", [pod]),
    onUpdate: (old, pod) => {
      const op = classifyUpdate(old, pod);
      if (op !== undefined) send(op, [pod]);
    },
    onDelete: (pod) => send("REMOVE", [podOf(pod)]),
  };
}

/**
 * Watches the pods bound to `nodeName` (`spec.nodeName=<node>`) into
 * `handler` until `signal` aborts; `onSynced` is called once the first list
 * has been delivered.
 */
export async function runApiSource(options: {
  client: Client;
  nodeName: string;
  clock: Clock;
  /** The informer's jitter. Default `Math.random`. */
  random?: (() => number) | undefined;
  handler: ResourceEventHandler<Pod>;
  onSynced: () => void;
  signal: AbortSignal;
}): Promise<void> {
  const { clock, signal } = options;
  const informer = new SharedIndexInformer<Pod>({
    listerWatcher: listerWatcher(options.client, pods),
    resource: pods,
    fieldSelector: `spec.nodeName=${options.nodeName}`,
    // The kubelet changes no pod it is given: it shares the server's frozen copy where it has one.
    acceptFrozen: true,
    clock,
    random: options.random,
  });
  informer.addEventHandler(options.handler);
  const run = informer.run({ signal });
  while (!signal.aborted && !informer.hasSynced()) {
    try {
      await clock.sleep(10, { signal });
    } catch {
      break;
    }
  }
  if (informer.hasSynced()) options.onSynced();
  await run;
}

/** DELETE for a new deletionTimestamp, RECONCILE for a status-only change, nothing for a resync. */
export function classifyUpdate(old: DeepReadonly<Pod>, pod: DeepReadonly<Pod>): ConfigOp | undefined {
  if (
    old.metadata?.resourceVersion === pod.metadata?.resourceVersion &&
    old.metadata?.resourceVersion !== undefined
  )
    return undefined;
  if (pod.metadata?.deletionTimestamp !== undefined && old.metadata?.deletionTimestamp === undefined)
    return "DELETE";
  if (
    jsonEqual(old.spec, pod.spec) &&
    jsonEqual(old.metadata?.labels, pod.metadata?.labels) &&
    jsonEqual(old.metadata?.annotations, pod.metadata?.annotations) &&
    old.metadata?.deletionGracePeriodSeconds === pod.metadata?.deletionGracePeriodSeconds
  )
    return "RECONCILE";
  return "UPDATE";
}

function podOf(obj: DeepReadonly<Pod> | DeletedFinalStateUnknown<DeepReadonly<Pod>>): DeepReadonly<Pod> {
  return isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
}
