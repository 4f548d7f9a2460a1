import type {
  Logger,
  Namespace,
  Node,
  namespaces,
  nodes,
  Pod,
  persistentVolumeClaims,
  persistentVolumes,
  podDisruptionBudgets,
  pods,
  replicaSets,
  replicationControllers,
  services,
  statefulSets,
  storageClasses,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { ControllerInformer, EventRecorder, Introspection } from "@reconcile/controller";
import type { ReplicaSet, StatefulSet } from "kubernetes-types/apps/v1.js";
import type {
  PersistentVolume,
  PersistentVolumeClaim,
  ReplicationController,
  Service,
} from "kubernetes-types/core/v1.js";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";
import type { Binder } from "./binder.js";
import type { Plugin } from "./framework.js";

// The Scheduler's options and metrics seam.

/** How a scheduling attempt ended, as `scheduler_schedule_attempts_total{result}` labels it. */
export type ScheduleResult = "scheduled" | "unschedulable" | "error";

/** Scheduler metrics (no-op by default); an adapter maps them to upstream's names. */
export interface SchedulerMetrics {
  /** `scheduler_schedule_attempts_total` and `scheduler_scheduling_attempt_duration_seconds`. */
  scheduleAttempt(result: ScheduleResult, profile: string, durationSeconds: number): void;
  /** `scheduler_pod_scheduling_sli_duration_seconds` (from first entering activeQ to bound) and `scheduler_pod_scheduling_attempts`. */
  podScheduled(attempts: number, sliDurationSeconds: number): void;
}

export interface SchedulerOptions {
  /** Binds pods (through the default binder), patches their PodScheduled condition, writes Events. Required. */
  client: Client;
  /** Informer over pods of every namespace. Required. */
  podInformer: ControllerInformer<Pod>;
  /** Informer over nodes. Required. */
  nodeInformer: ControllerInformer<Node>;
  /**
   * Informers over PersistentVolumeClaims, PersistentVolumes and
   * StorageClasses: with them the default plugins include VolumeBinding, and
   * their changes requeue the pods it parked. Default: none.
   */
  volumeInformers?:
    | {
        claims: ControllerInformer<PersistentVolumeClaim>;
        volumes: ControllerInformer<PersistentVolume>;
        classes: ControllerInformer<StorageClass>;
      }
    | undefined;
  /**
   * Informer over namespaces: with it, InterPodAffinity resolves terms'
   * `namespaceSelector`s. Without it, a selector other than `{}` selects no
   * namespace. Default: none.
   */
  namespaceInformer?: ControllerInformer<Namespace> | undefined;
  /**
   * Informers over Services, ReplicationControllers, ReplicaSets and
   * StatefulSets: with them, PodTopologySpread's system defaults spread a pod
   * among the pods its Services and controller select, as upstream's do.
   * Without them, among the pods of its own ReplicaSet, ReplicationController
   * or StatefulSet. Default: none.
   */
  spreadingInformers?:
    | {
        services: ControllerInformer<Service>;
        replicationControllers: ControllerInformer<ReplicationController>;
        replicaSets: ControllerInformer<ReplicaSet>;
        statefulSets: ControllerInformer<StatefulSet>;
      }
    | undefined;
  /**
   * Informer over PodDisruptionBudgets: preemption prefers victims whose
   * budgets allow the disruption. Its cache is read as it is (not waited
   * for). Default: none (no budget counts).
   */
  podDisruptionBudgetInformer?: ControllerInformer<PodDisruptionBudget> | undefined;
  /** Pods whose `spec.schedulerName` is this are scheduled; all others are left alone. Default "default-scheduler". */
  schedulerName?: string | undefined;
  /** Time for the queue's backoff and flushes and for condition times. Default `realClock`. */
  clock?: Clock | undefined;
  /** How a pod is bound to its node. Default: a {@link ClientBinder} over `client`. */
  binder?: Binder | undefined;
  /**
   * Where Scheduled / FailedScheduling Events go. Default: events.k8s.io/v1
   * Events over `client` (a `ClientEventsV1Recorder`, as kube-scheduler
   * writes them): reporting controller `schedulerName`, instance
   * `reportingInstance`, actions `Binding` and `Scheduling`.
   */
  eventRecorder?: EventRecorder | undefined;
  /** The default recorder's `reportingInstance`. Default `<schedulerName>-<hostname>`, as upstream. */
  reportingInstance?: string | undefined;
  /** Filter and score plugins, in order. Default: {@link defaultPlugins}, with VolumeBinding given `volumeInformers`. */
  plugins?: readonly Plugin[] | undefined;
  /** Percentage of nodes to find feasible before scoring; 0 = upstream's adaptive rule. Default 0. */
  percentageOfNodesToScore?: number | undefined;
  /** Backoff after the first failure, doubling. Default 1,000 ms. */
  podInitialBackoffMs?: number | undefined;
  /** Backoff ceiling. Default 10,000 ms. */
  podMaxBackoffMs?: number | undefined;
  /** Picks among equally scored nodes; values in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
  /**
   * Cycles per turn of the event loop. Default: turns are sliced by wall time
   * (10–100 ms, as long as the rest of the process ran), which depends on the
   * machine; a number makes the interleaving of scheduling with the rest of
   * the process repeat exactly (simulations).
   */
  cyclesPerTurn?: number | undefined;
  /** Default: no logging. */
  logger?: Logger | undefined;
  /** Default: no metrics. */
  metrics?: SchedulerMetrics | undefined;
  /**
   * Remember this many of the last scheduling decisions for `inspect()`, each
   * with every node's filter verdict and the scored nodes' totals. Default 0:
   * none (keeping them costs a list per cycle).
   */
  decisionLog?: number | undefined;
  /** Where the scheduler shows `inspect()` while `run` runs (a `scheduler` source named after it). Default: nowhere. */
  introspection?: Introspection | undefined;
}

/** The informer factory {@link Scheduler.fromInformerFactory} takes its informers from. */
export interface SchedulerInformerFactory {
  forResource(resource: typeof pods): ControllerInformer<Pod>;
  forResource(resource: typeof nodes): ControllerInformer<Node>;
  forResource(resource: typeof persistentVolumeClaims): ControllerInformer<PersistentVolumeClaim>;
  forResource(resource: typeof persistentVolumes): ControllerInformer<PersistentVolume>;
  forResource(resource: typeof storageClasses): ControllerInformer<StorageClass>;
  forResource(resource: typeof namespaces): ControllerInformer<Namespace>;
  forResource(resource: typeof podDisruptionBudgets): ControllerInformer<PodDisruptionBudget>;
  forResource(resource: typeof services): ControllerInformer<Service>;
  forResource(resource: typeof replicationControllers): ControllerInformer<ReplicationController>;
  forResource(resource: typeof replicaSets): ControllerInformer<ReplicaSet>;
  forResource(resource: typeof statefulSets): ControllerInformer<StatefulSet>;
}
