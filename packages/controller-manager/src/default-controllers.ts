import { jobs } from "@reconcile/api";
import { CSRApprovingController, CSRCleanerController, CSRSigningController } from "@reconcile/certificates";
import { CronJobController } from "@reconcile/cronjob";
import { DaemonSetController } from "@reconcile/daemonset";
import { DeploymentController } from "@reconcile/deployment";
import { DisruptionController } from "@reconcile/disruption";
import { EndpointSliceController, EndpointsController } from "@reconcile/endpoints";
import { JobController, TTLAfterFinishedController } from "@reconcile/job";
import { NamespaceController } from "@reconcile/namespace";
import {
  NodeLifecycleController,
  type NodeLifecycleControllerOptions,
  TaintEvictionController,
} from "@reconcile/node-lifecycle";
import { HorizontalController } from "@reconcile/podautoscaler";
import { PodGCController } from "@reconcile/podgc";
import { ReplicaSetController } from "@reconcile/replicaset";
import { ResourceQuotaController } from "@reconcile/resourcequota";
import {
  type LegacyTokenSigner,
  RootCACertPublisher,
  ServiceAccountsController,
  ServiceAccountTokensController,
} from "@reconcile/serviceaccount";
import { StatefulSetController } from "@reconcile/statefulset";
import {
  PersistentVolumeController,
  PVCProtectionController,
  PVProtectionController,
} from "@reconcile/volume";
import { type ControllerDescriptor, ControllerDescriptors } from "./controller-descriptors.js";
import { prometheusJobMetrics } from "./job-metrics.js";
import { prometheusNodeLifecycleMetrics, prometheusTaintEvictionMetrics } from "./node-lifecycle-metrics.js";

/** `replicaset-controller` (alias `replicaset`): queue `replicaset`, 5 workers, Events from `replicaset-controller` (the controller's own recorder, flushed when it stops). */
export const replicaSetControllerDescriptor: ControllerDescriptor = {
  name: "replicaset-controller",
  serviceAccount: "replicaset-controller",
  aliases: ["replicaset"],
  construct: (context) => ReplicaSetController.fromInformerFactory(context.informerFactory, context),
};

/** `deployment-controller` (alias `deployment`): queue `deployment`, 5 workers, Events from `deployment-controller`. */
export const deploymentControllerDescriptor: ControllerDescriptor = {
  name: "deployment-controller",
  serviceAccount: "deployment-controller",
  aliases: ["deployment"],
  construct: (context) => DeploymentController.fromInformerFactory(context.informerFactory, context),
};

/** `endpoints-controller` (alias `endpoint`): queue `endpoint`, 5 workers (`--concurrent-endpoint-syncs`). */
export const endpointsControllerDescriptor: ControllerDescriptor = {
  name: "endpoints-controller",
  serviceAccount: "endpoint-controller",
  aliases: ["endpoint"],
  construct: (context) => EndpointsController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `endpointslice-controller` (alias `endpointslice`): queue `endpoint_slice`
 * with upstream's 1 s → 1000 s per-item backoff, 5 workers
 * (`--concurrent-service-endpoint-syncs`), 100 endpoints per slice.
 */
export const endpointSliceControllerDescriptor: ControllerDescriptor = {
  name: "endpointslice-controller",
  serviceAccount: "endpointslice-controller",
  aliases: ["endpointslice"],
  construct: (context) => EndpointSliceController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `job-controller` (alias `job`): queues `job` (5 workers, `--concurrent-job-syncs`)
 * and `orphan_pod`, Events from `job-controller`; pod events sync a Job after
 * `syncBatchPeriodMs` (default upstream's 1 s, which kube-controller-manager
 * has no flag for).
 */
function newJobControllerDescriptor(settings: {
  syncBatchPeriodMs?: number | undefined;
}): ControllerDescriptor {
  return {
    name: "job-controller",
    serviceAccount: "job-controller",
    aliases: ["job"],
    construct: (context) =>
      JobController.fromInformerFactory(context.informerFactory, {
        ...context,
        syncBatchPeriodMs: settings.syncBatchPeriodMs,
        metrics: prometheusJobMetrics(context.registry),
      }),
  };
}

/** `daemonset-controller` (alias `daemonset`): queue `daemonset`, 2 workers (`--concurrent-daemonset-syncs`), Events from `daemonset-controller`. */
export const daemonSetControllerDescriptor: ControllerDescriptor = {
  name: "daemonset-controller",
  serviceAccount: "daemon-set-controller",
  aliases: ["daemonset"],
  defaultWorkers: 2,
  construct: (context) => DaemonSetController.fromInformerFactory(context.informerFactory, context),
};

/** `statefulset-controller` (alias `statefulset`): queue `statefulset`, 5 workers (`--concurrent-statefulset-syncs`), Events from `statefulset-controller`. */
export const statefulSetControllerDescriptor: ControllerDescriptor = {
  name: "statefulset-controller",
  serviceAccount: "statefulset-controller",
  aliases: ["statefulset"],
  construct: (context) => StatefulSetController.fromInformerFactory(context.informerFactory, context),
};

/** `cronjob-controller` (alias `cronjob`): queue `cronjob`, 5 workers (`--concurrent-cron-job-syncs`), Events from `cronjob-controller`. */
export const cronJobControllerDescriptor: ControllerDescriptor = {
  name: "cronjob-controller",
  serviceAccount: "cronjob-controller",
  aliases: ["cronjob"],
  construct: (context) => CronJobController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `horizontal-pod-autoscaler-controller` (alias `horizontalpodautoscaling`):
 * queue `horizontalpodautoscaler`, 5 workers (`--concurrent-horizontal-pod-autoscaler-syncs`),
 * each autoscaler looked at every 15 s, Events from `horizontal-pod-autoscaler`.
 */
export const horizontalPodAutoscalerControllerDescriptor: ControllerDescriptor = {
  name: "horizontal-pod-autoscaler-controller",
  serviceAccount: "horizontal-pod-autoscaler",
  aliases: ["horizontalpodautoscaling"],
  construct: (context) => HorizontalController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `persistentvolume-binder-controller` (alias `persistentvolume-binder`):
 * binds claims to volumes, assigns the default StorageClass, provisions
 * `reconcile.dev/hostpath` volumes; queues `claims` and `volumes`, 1 worker each.
 */
export const persistentVolumeBinderControllerDescriptor: ControllerDescriptor = {
  name: "persistentvolume-binder-controller",
  serviceAccount: "persistent-volume-binder",
  aliases: ["persistentvolume-binder"],
  defaultWorkers: 1,
  construct: (context) => PersistentVolumeController.fromInformerFactory(context.informerFactory, context),
};

/** `disruption-controller` (alias `disruption`): PodDisruptionBudget status; queue `disruption`, 1 worker. */
export const disruptionControllerDescriptor: ControllerDescriptor = {
  name: "disruption-controller",
  serviceAccount: "disruption-controller",
  aliases: ["disruption"],
  defaultWorkers: 1,
  construct: (context) => DisruptionController.fromInformerFactory(context.informerFactory, context),
};

/** `pod-garbage-collector-controller` (alias `podgc`): terminated pods over 12,500, orphans of deleted nodes, every 20 s. */
export const podGCControllerDescriptor: ControllerDescriptor = {
  name: "pod-garbage-collector-controller",
  serviceAccount: "pod-garbage-collector",
  aliases: ["podgc"],
  defaultWorkers: 1,
  construct: (context) => PodGCController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `resourcequota-controller` (alias `resourcequota`): each ResourceQuota's
 * `status.hard` and `status.used`, recounted on change, on replenishment and
 * every 5 minutes; queue `resourcequota_primary`, 5 workers as upstream.
 */
export const resourceQuotaControllerDescriptor: ControllerDescriptor = {
  name: "resourcequota-controller",
  serviceAccount: "resourcequota-controller",
  aliases: ["resourcequota"],
  construct: (context) => ResourceQuotaController.fromInformerFactory(context.informerFactory, context),
};

/** `ttl-after-finished-controller` (alias `ttl-after-finished`): deletes finished Jobs past `ttlSecondsAfterFinished`; 5 workers. */
export const ttlAfterFinishedControllerDescriptor: ControllerDescriptor = {
  name: "ttl-after-finished-controller",
  serviceAccount: "ttl-after-finished-controller",
  aliases: ["ttl-after-finished"],
  construct: (context) =>
    new TTLAfterFinishedController({ ...context, jobInformer: context.informerFactory.forResource(jobs) }),
};

/** `persistentvolumeclaim-protection-controller` (alias `pvc-protection`): a claim being deleted keeps its finalizer while a pod uses it. */
export const pvcProtectionControllerDescriptor: ControllerDescriptor = {
  name: "persistentvolumeclaim-protection-controller",
  serviceAccount: "pvc-protection-controller",
  aliases: ["pvc-protection"],
  construct: (context) => PVCProtectionController.fromInformerFactory(context.informerFactory, context),
};

/** `persistentvolume-protection-controller` (alias `pv-protection`): a volume being deleted keeps its finalizer while Bound. */
export const pvProtectionControllerDescriptor: ControllerDescriptor = {
  name: "persistentvolume-protection-controller",
  serviceAccount: "pv-protection-controller",
  aliases: ["pv-protection"],
  construct: (context) => PVProtectionController.fromInformerFactory(context.informerFactory, context),
};

/** The node lifecycle controller's flags (`--node-monitor-period`, `--node-monitor-grace-period`, …); upstream's defaults where unset. */
export type NodeLifecycleSettings = Pick<
  NodeLifecycleControllerOptions,
  | "nodeMonitorPeriodMs"
  | "nodeMonitorGracePeriodMs"
  | "nodeStartupGracePeriodMs"
  | "nodeEvictionRate"
  | "secondaryNodeEvictionRate"
  | "largeClusterSizeThreshold"
  | "unhealthyZoneThreshold"
>;

/**
 * `node-lifecycle-controller` (alias `nodelifecycle`): node health from status
 * and Leases, condition taints, rate-limited NoExecute tainting; queues
 * `node_lifecycle_controller` and `node_lifecycle_controller_pods`, 8 node workers.
 */
export function newNodeLifecycleControllerDescriptor(
  settings: NodeLifecycleSettings = {},
): ControllerDescriptor {
  return {
    name: "node-lifecycle-controller",
    serviceAccount: "node-controller",
    aliases: ["nodelifecycle"],
    defaultWorkers: 8,
    construct: (context) =>
      NodeLifecycleController.fromInformerFactory(context.informerFactory, {
        ...context,
        ...settings,
        metrics: prometheusNodeLifecycleMetrics(context.registry),
      }),
  };
}

/** `node-lifecycle-controller` with upstream's defaults (5 s monitor period, 50 s grace, 60 s startup grace, 0.1 nodes/s). */
export const nodeLifecycleControllerDescriptor: ControllerDescriptor = newNodeLifecycleControllerDescriptor();

/** `taint-eviction-controller`: deletes pods from nodes with NoExecute taints they do not tolerate; 8 workers. */
export const taintEvictionControllerDescriptor: ControllerDescriptor = {
  name: "taint-eviction-controller",
  serviceAccount: "node-controller",
  defaultWorkers: 8,
  construct: (context) =>
    TaintEvictionController.fromInformerFactory(context.informerFactory, {
      ...context,
      metrics: prometheusTaintEvictionMetrics(context.registry),
    }),
};

/**
 * `namespace-controller` (alias `namespace`): empties namespaces being
 * deleted, then removes their `kubernetes` finalizer; queue `namespace`
 * (5 ms → 60 s per-item backoff), 10 workers (`--concurrent-namespace-syncs`).
 * Discovery comes from the client (the embedded server's table, or `/api` and `/apis`).
 */
export const namespaceControllerDescriptor: ControllerDescriptor = {
  name: "namespace-controller",
  serviceAccount: "namespace-controller",
  aliases: ["namespace"],
  defaultWorkers: 10,
  construct: (context) => NamespaceController.fromInformerFactory(context.informerFactory, context),
};

/** `serviceaccount-controller` (alias `serviceaccount`): the `default` ServiceAccount of every active namespace; queue `serviceaccount`, 1 worker. */
export const serviceAccountControllerDescriptor: ControllerDescriptor = {
  name: "serviceaccount-controller",
  serviceAccount: "service-account-controller",
  aliases: ["serviceaccount"],
  defaultWorkers: 1,
  construct: (context) => ServiceAccountsController.fromInformerFactory(context.informerFactory, context),
};

/** The cluster's signing CA (`--cluster-signing-cert-file`, `--cluster-signing-key-file`), PEM. */
export interface ClusterSigning {
  cert: string;
  key: string;
  /** The longest certificate issued (`--cluster-signing-duration`). Default a year. */
  durationMs?: number | undefined;
}

/**
 * `certificatesigningrequest-signing-controller` (alias `csrsigning`): signs
 * approved requests for the four kubernetes.io signers with the cluster's CA;
 * queue `certificate`, 5 workers. Runs only with a signing CA, as upstream
 * runs it only with `--cluster-signing-cert-file`.
 */
export function newCSRSigningControllerDescriptor(signing: ClusterSigning): ControllerDescriptor {
  return {
    name: "certificatesigningrequest-signing-controller",
    serviceAccount: "certificate-controller",
    aliases: ["csrsigning"],
    construct: (context) =>
      CSRSigningController.fromInformerFactory(context.informerFactory, {
        ...context,
        ca: { cert: signing.cert, key: signing.key },
        certificateDurationMs: signing.durationMs,
      }),
  };
}

/**
 * `certificatesigningrequest-approving-controller` (alias `csrapproving`):
 * approves kubelets' client certificate requests after a SubjectAccessReview
 * of `certificatesigningrequests/nodeclient` or `selfnodeclient`; queue `certificate`, 5 workers.
 */
export const csrApprovingControllerDescriptor: ControllerDescriptor = {
  name: "certificatesigningrequest-approving-controller",
  serviceAccount: "certificate-controller",
  aliases: ["csrapproving"],
  construct: (context) => CSRApprovingController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `certificatesigningrequest-cleaner-controller` (alias `csrcleaner`): every
 * hour deletes requests issued, denied or failed over an hour ago, pending
 * over a day, or whose certificate expired.
 */
export const csrCleanerControllerDescriptor: ControllerDescriptor = {
  name: "certificatesigningrequest-cleaner-controller",
  serviceAccount: "certificate-controller",
  aliases: ["csrcleaner"],
  defaultWorkers: 1,
  construct: (context) => CSRCleanerController.fromInformerFactory(context.informerFactory, context),
};

/**
 * `root-ca-certificate-publisher-controller` (alias `root-ca-cert-publisher`):
 * a `kube-root-ca.crt` ConfigMap holding `rootCA` in every namespace; queue
 * `root_ca_cert_publisher`, 1 worker. kube-controller-manager's `--root-ca-file`.
 */
export function newRootCACertPublisherDescriptor(rootCA: string): ControllerDescriptor {
  return {
    name: "root-ca-certificate-publisher-controller",
    serviceAccount: "root-ca-cert-publisher",
    aliases: ["root-ca-cert-publisher"],
    defaultWorkers: 1,
    construct: (context) =>
      RootCACertPublisher.fromInformerFactory(context.informerFactory, { ...context, rootCA }),
  };
}

/**
 * `serviceaccount-token-controller` (alias `serviceaccount-token`): fills
 * `kubernetes.io/service-account-token` Secrets with a token `signer` signs,
 * `ca.crt` (`rootCA`) and `namespace`; queue `serviceaccount_tokens_secret`, 1 worker.
 */
export function newServiceAccountTokenControllerDescriptor(
  signer: LegacyTokenSigner,
  rootCA: string | undefined,
): ControllerDescriptor {
  return {
    name: "serviceaccount-token-controller",
    aliases: ["serviceaccount-token"],
    defaultWorkers: 1,
    construct: (context) =>
      ServiceAccountTokensController.fromInformerFactory(context.informerFactory, {
        ...context,
        signer,
        rootCA,
      }),
  };
}

export interface ControllerDescriptorsOptions {
  /** Flags of `node-lifecycle-controller`. Default: upstream's. */
  nodeLifecycle?: NodeLifecycleSettings | undefined;
  /** The Job controller's batch period for pod events, in ms (see `JobControllerOptions`). Default 1,000. */
  jobSyncBatchPeriodMs?: number | undefined;
  /**
   * The CA bundle (PEM) that verifies the API server, published in every
   * namespace by `root-ca-certificate-publisher-controller`, which runs only
   * with one. Default: none.
   */
  rootCA?: string | undefined;
  /**
   * Signs the tokens of ServiceAccount token Secrets (the API server's
   * `auth.tokens`); `serviceaccount-token-controller` runs only with one.
   * Default: none.
   */
  serviceAccountTokenSigner?: LegacyTokenSigner | undefined;
  /**
   * The CA that signs approved certificate requests;
   * `certificatesigningrequest-signing-controller` runs only with one. Default: none.
   */
  clusterSigning?: ClusterSigning | undefined;
}

/**
 * The controllers this package knows, as kube-controller-manager's
 * `NewControllerDescriptors`: each call returns a fresh table, so callers may
 * register their own controllers on it.
 */
export function newControllerDescriptors(options: ControllerDescriptorsOptions = {}): ControllerDescriptors {
  return new ControllerDescriptors([
    endpointsControllerDescriptor,
    endpointSliceControllerDescriptor,
    replicaSetControllerDescriptor,
    deploymentControllerDescriptor,
    daemonSetControllerDescriptor,
    statefulSetControllerDescriptor,
    newJobControllerDescriptor({ syncBatchPeriodMs: options.jobSyncBatchPeriodMs }),
    cronJobControllerDescriptor,
    ttlAfterFinishedControllerDescriptor,
    horizontalPodAutoscalerControllerDescriptor,
    disruptionControllerDescriptor,
    podGCControllerDescriptor,
    resourceQuotaControllerDescriptor,
    persistentVolumeBinderControllerDescriptor,
    pvcProtectionControllerDescriptor,
    pvProtectionControllerDescriptor,
    options.nodeLifecycle === undefined
      ? nodeLifecycleControllerDescriptor
      : newNodeLifecycleControllerDescriptor(options.nodeLifecycle),
    taintEvictionControllerDescriptor,
    namespaceControllerDescriptor,
    serviceAccountControllerDescriptor,
    ...(options.clusterSigning === undefined
      ? []
      : [newCSRSigningControllerDescriptor(options.clusterSigning)]),
    csrApprovingControllerDescriptor,
    csrCleanerControllerDescriptor,
    ...(options.rootCA === undefined ? [] : [newRootCACertPublisherDescriptor(options.rootCA)]),
    ...(options.serviceAccountTokenSigner === undefined
      ? []
      : [newServiceAccountTokenControllerDescriptor(options.serviceAccountTokenSigner, options.rootCA)]),
  ]);
}
