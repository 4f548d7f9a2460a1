import { type DeepReadonly, jsonEqual, labelsEqual, type Node, type Pod } from "@reconcile/api";
import { type ControllerInformer, objectFromTombstone } from "@reconcile/controller";
import type { SchedulerCache } from "./cache.js";
import { type ClusterEvent, type CycleState, type Plugin, runFilters } from "./framework.js";
import type { SchedulingQueue } from "./scheduling-queue.js";

/** The scheduler name pods get by default (`spec.schedulerName`). */
export const defaultSchedulerName = "default-scheduler";

/** The scheduler's parts the informer events act on. */
export interface EventHandlerTarget {
  readonly cache: SchedulerCache;
  readonly queue: SchedulingQueue;
  readonly plugins: readonly Plugin[];
  /** The pods whose `spec.schedulerName` (default `default-scheduler`) is this. */
  readonly schedulerName: string;
  readonly podInformer: ControllerInformer<Pod>;
  readonly nodeInformer: ControllerInformer<Node>;
  /** A namespace's labels, for affinity terms' namespace selectors; default: none known. */
  readonly namespaceLabels?:
    | ((namespace: string) => Readonly<Record<string, string>> | undefined)
    | undefined;
  /** Claim, volume and class changes requeue the pods VolumeBinding parked. */
  readonly volumeInformers?:
    | {
        claims: ControllerInformer<unknown>;
        volumes: ControllerInformer<unknown>;
        classes: ControllerInformer<unknown>;
      }
    | undefined;
}

/** `responsibleForPod`: the pod names this scheduler (an empty name is the default scheduler). */
export function responsibleForPod(pod: DeepReadonly<Pod>, schedulerName: string): boolean {
  return (pod.spec?.schedulerName || defaultSchedulerName) === schedulerName;
}

/**
 * Upstream's `addAllEventHandlers` (pkg/scheduler/eventhandlers.go): bound
 * pods go to the cache, unbound ones of this scheduler to the queue; node
 * events update the cache and move the parked pods they may help, each after
 * a cheap check that it now passes every filter on that node.
 */
export function addAllEventHandlers(target: EventHandlerTarget): void {
  const { cache, queue } = target;
  const responsible = (pod: DeepReadonly<Pod>) => responsibleForPod(pod, target.schedulerName);
  const fits = (pod: DeepReadonly<Pod>, node: DeepReadonly<Node>) => fitsNode(target, pod, node);
  const assigned = (event: ClusterEvent, pod: DeepReadonly<Pod>) =>
    queue.movePodsWithCrossTopologyTerm(event, pod, target.namespaceLabels?.(pod.metadata?.namespace ?? ""));

  const onPodAdd = (pod: DeepReadonly<Pod>) => {
    if (isTerminal(pod)) return;
    if (pod.spec?.nodeName) {
      cache.addPod(pod);
      assigned("AssignedPodAdd", pod);
      return;
    }
    if (responsible(pod)) queue.add(pod);
  };
  const onPodDelete = (pod: DeepReadonly<Pod> | undefined) => {
    if (pod?.metadata === undefined) return;
    if (pod.spec?.nodeName) {
      cache.removePod(pod);
      queue.moveAllToActiveOrBackoffQueue("AssignedPodDelete");
      return;
    }
    // An assumed pod deleted while binding frees its node at once.
    if (cache.isAssumed(pod.metadata.uid ?? "")) {
      cache.forgetPod(pod.metadata.uid ?? "");
      queue.moveAllToActiveOrBackoffQueue("AssignedPodDelete");
    }
    queue.delete(pod);
  };
  const onPodUpdate = (oldPod: DeepReadonly<Pod>, newPod: DeepReadonly<Pod>) => {
    if (isTerminal(newPod)) {
      onPodDelete(newPod);
      return;
    }
    if (newPod.spec?.nodeName) {
      if (oldPod.spec?.nodeName) {
        cache.updatePod(newPod);
        if (!labelsEqual(oldPod.metadata?.labels, newPod.metadata?.labels))
          assigned("AssignedPodLabelChange", newPod);
        return;
      }
      // Just bound: it leaves the queue, and its bound copy replaces the assumed one (upstream's
      // filtered handlers see a delete of the unassigned pod and an add of the assigned one).
      queue.delete(newPod);
      cache.addPod(newPod);
      assigned("AssignedPodAdd", newPod);
      return;
    }
    if (responsible(newPod)) queue.update(oldPod, newPod);
  };
  target.podInformer.addEventHandler({
    onAdd: onPodAdd,
    onUpdate: onPodUpdate,
    onDelete: (obj) => onPodDelete(objectFromTombstone(obj)),
  });

  const volumes = target.volumeInformers;
  if (volumes !== undefined) {
    const requeue = (event: ClusterEvent) => ({
      onAdd: () => queue.moveAllToActiveOrBackoffQueue(event),
      onUpdate: () => queue.moveAllToActiveOrBackoffQueue(event),
    });
    volumes.claims.addEventHandler(requeue("PersistentVolumeClaimChange"));
    volumes.volumes.addEventHandler(requeue("PersistentVolumeChange"));
    volumes.classes.addEventHandler(requeue("StorageClassChange"));
  }

  target.nodeInformer.addEventHandler({
    onAdd: (node) => {
      cache.addNode(node);
      queue.moveAllToActiveOrBackoffQueue("NodeAdd", (pod) => fits(pod, node));
    },
    onUpdate: (oldNode, newNode) => {
      cache.updateNode(newNode);
      for (const event of nodeEvents(oldNode, newNode))
        queue.moveAllToActiveOrBackoffQueue(event, (pod) => fits(pod, newNode));
    },
    onDelete: (obj) => {
      cache.removeNode(objectFromTombstone(obj)?.metadata?.name ?? "");
      queue.moveAllToActiveOrBackoffQueue("NodeDelete");
    },
  });
}

/** What changed on a node, as the cluster events plugins wait on. */
function nodeEvents(oldNode: DeepReadonly<Node>, newNode: DeepReadonly<Node>): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  if (!jsonEqual(oldNode.status?.allocatable, newNode.status?.allocatable)) {
    events.push("NodeAllocatableChange");
  }
  if (!jsonEqual(oldNode.metadata?.labels ?? {}, newNode.metadata?.labels ?? {})) {
    events.push("NodeLabelChange");
  }
  if (
    !jsonEqual(oldNode.spec?.taints ?? [], newNode.spec?.taints ?? []) ||
    Boolean(oldNode.spec?.unschedulable) !== Boolean(newNode.spec?.unschedulable)
  ) {
    events.push("NodeTaintChange");
  }
  return events;
}

// The cheap check before moving a parked pod on a node event: does it pass every single-node filter there?
function fitsNode(target: EventHandlerTarget, pod: DeepReadonly<Pod>, node: DeepReadonly<Node>): boolean {
  const nodeInfo = target.cache.nodeInfo(node.metadata?.name ?? "");
  if (nodeInfo === undefined) return false;
  const state: CycleState = new Map();
  const filters = target.plugins.filter((plugin) => {
    if (plugin.filter === undefined || plugin.dependsOnOtherNodes) return false;
    return plugin.preFilter?.(state, pod, [nodeInfo])?.code !== "Skip";
  });
  return runFilters(filters, state, pod, nodeInfo) === undefined;
}

function isTerminal(pod: DeepReadonly<Pod>): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}
