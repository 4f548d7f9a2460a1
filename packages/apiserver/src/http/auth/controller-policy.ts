import type { PolicyRule } from "kubernetes-types/rbac/v1.js";

// The controllers' roles kube-apiserver v1.32 creates at start
// (`bootstrappolicy/controller_policy.go`): `system:controller:<name>`, each
// bound to the ServiceAccount `kube-system/<name>` that kube-controller-manager
// runs that controller as with `--use-service-account-credentials`.

/** The prefix of every controller role's name. */
export const controllerRolePrefix = "system:controller:";

const read = ["get", "list", "watch"];
const core = [""];
const apps = ["apps"];
const appsAndExtensions = ["apps", "extensions"];
const batch = ["batch"];
const storage = ["storage.k8s.io"];

/** A resource rule (upstream's `rbacv1helpers.NewRule(...).Groups(...).Resources(...).Names(...)`). */
export function rule(
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  resourceNames?: string[],
): PolicyRule {
  return { verbs, apiGroups, resources, ...(resourceNames === undefined ? {} : { resourceNames }) };
}
const events = rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"]);

/** Each controller's ServiceAccount name and its role's rules, in upstream's order. */
export const controllerRoles: ReadonlyArray<{ serviceAccount: string; rules: PolicyRule[] }> = [
  {
    serviceAccount: "attachdetach-controller",
    rules: [
      rule(["list", "watch"], core, ["persistentvolumes", "persistentvolumeclaims"]),
      rule(read, core, ["nodes"]),
      rule(["patch", "update"], core, ["nodes/status"]),
      rule(["list", "watch"], core, ["pods"]),
      events,
      rule(["get", "create", "delete", "list", "watch"], storage, ["volumeattachments"]),
      rule(["get", "watch", "list"], storage, ["csidrivers"]),
      rule(["get", "watch", "list"], storage, ["csinodes"]),
    ],
  },
  {
    serviceAccount: "clusterrole-aggregation-controller",
    rules: [
      rule(
        ["escalate", "get", "list", "watch", "update", "patch"],
        ["rbac.authorization.k8s.io"],
        ["clusterroles"],
      ),
    ],
  },
  {
    serviceAccount: "cronjob-controller",
    rules: [
      rule(["get", "list", "watch", "update"], batch, ["cronjobs"]),
      rule(["get", "list", "watch", "create", "update", "delete", "patch"], batch, ["jobs"]),
      rule(["update"], batch, ["cronjobs/status"]),
      rule(["update"], batch, ["cronjobs/finalizers"]),
      rule(["list", "watch", "delete"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "daemon-set-controller",
    rules: [
      rule(read, ["extensions", "apps"], ["daemonsets"]),
      rule(["update"], ["extensions", "apps"], ["daemonsets/status"]),
      rule(["update"], ["extensions", "apps"], ["daemonsets/finalizers"]),
      rule(["list", "watch"], core, ["nodes"]),
      rule(["list", "watch", "create", "delete", "patch"], core, ["pods"]),
      rule(["create"], core, ["pods/binding"]),
      rule(["get", "list", "watch", "create", "delete", "update", "patch"], apps, ["controllerrevisions"]),
      events,
    ],
  },
  {
    serviceAccount: "deployment-controller",
    rules: [
      rule(["get", "list", "watch", "update"], ["extensions", "apps"], ["deployments"]),
      rule(["update"], ["extensions", "apps"], ["deployments/status"]),
      rule(["update"], ["extensions", "apps"], ["deployments/finalizers"]),
      rule(["get", "list", "watch", "create", "update", "patch", "delete"], appsAndExtensions, [
        "replicasets",
      ]),
      rule(["get", "list", "watch", "update"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "disruption-controller",
    rules: [
      rule(read, ["extensions", "apps"], ["deployments"]),
      rule(read, appsAndExtensions, ["replicasets"]),
      rule(read, core, ["replicationcontrollers"]),
      rule(read, ["policy"], ["poddisruptionbudgets"]),
      rule(read, apps, ["statefulsets"]),
      rule(["update"], ["policy"], ["poddisruptionbudgets/status"]),
      rule(["patch", "update"], core, ["pods/status"]),
      rule(["get"], ["*"], ["*/scale"]),
      events,
    ],
  },
  {
    serviceAccount: "endpoint-controller",
    rules: [
      rule(read, core, ["services", "pods"]),
      rule(["get", "list", "watch", "create", "update", "delete"], core, ["endpoints"]),
      rule(["create"], core, ["endpoints/restricted"]),
      events,
    ],
  },
  {
    serviceAccount: "endpointslice-controller",
    rules: [
      rule(read, core, ["services", "pods", "nodes"]),
      rule(["update"], core, ["services/finalizers"]),
      rule(["get", "list", "watch", "create", "update", "delete"], ["discovery.k8s.io"], ["endpointslices"]),
      events,
    ],
  },
  {
    serviceAccount: "endpointslicemirroring-controller",
    rules: [
      rule(read, core, ["services", "endpoints"]),
      rule(["update"], core, ["services/finalizers"]),
      rule(["update"], core, ["endpoints/finalizers"]),
      rule(["get", "list", "watch", "create", "update", "delete"], ["discovery.k8s.io"], ["endpointslices"]),
      events,
    ],
  },
  {
    serviceAccount: "expand-controller",
    rules: [
      rule(["get", "list", "watch", "update", "patch"], core, ["persistentvolumes"]),
      rule(["update", "patch"], core, ["persistentvolumeclaims/status"]),
      rule(read, core, ["persistentvolumeclaims"]),
      events,
      rule(["get"], core, ["services"]),
    ],
  },
  {
    serviceAccount: "ephemeral-volume-controller",
    rules: [
      rule(read, core, ["pods"]),
      rule(["update"], core, ["pods/finalizers"]),
      rule(["get", "list", "watch", "create"], core, ["persistentvolumeclaims"]),
      events,
    ],
  },
  {
    serviceAccount: "generic-garbage-collector",
    rules: [rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]), events],
  },
  {
    serviceAccount: "horizontal-pod-autoscaler",
    rules: [
      rule(read, ["autoscaling"], ["horizontalpodautoscalers"]),
      rule(["update"], ["autoscaling"], ["horizontalpodautoscalers/status"]),
      rule(["get", "update"], ["*"], ["*/scale"]),
      rule(["list", "watch"], core, ["pods"]),
      rule(["list", "watch"], ["metrics.k8s.io"], ["pods"]),
      rule(read, ["custom.metrics.k8s.io"], ["*"]),
      rule(read, ["external.metrics.k8s.io"], ["*"]),
      events,
    ],
  },
  {
    serviceAccount: "job-controller",
    rules: [
      rule(["get", "list", "watch", "update", "patch"], batch, ["jobs"]),
      rule(["update"], batch, ["jobs/status"]),
      rule(["update"], batch, ["jobs/finalizers"]),
      rule(["list", "watch", "create", "delete", "patch"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "namespace-controller",
    rules: [
      rule(["get", "list", "watch", "delete"], core, ["namespaces"]),
      rule(["update"], core, ["namespaces/finalize", "namespaces/status"]),
      rule(["get", "list", "watch", "delete", "deletecollection"], ["*"], ["*"]),
    ],
  },
  {
    serviceAccount: "node-controller",
    rules: [
      rule(["get", "list", "watch", "update", "delete", "patch"], core, ["nodes"]),
      rule(["patch", "update"], core, ["nodes/status"]),
      rule(["patch", "update"], core, ["pods/status"]),
      rule(["list", "watch", "get", "delete"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "persistent-volume-binder",
    rules: [
      rule(["get", "list", "watch", "update", "create", "delete"], core, ["persistentvolumes"]),
      rule(["update"], core, ["persistentvolumes/status"]),
      rule(["get", "list", "watch", "update"], core, ["persistentvolumeclaims"]),
      rule(["update"], core, ["persistentvolumeclaims/status"]),
      rule(["list", "watch", "get", "create", "delete"], core, ["pods"]),
      rule(read, storage, ["storageclasses"]),
      rule(["list", "watch"], core, ["nodes"]),
      events,
      rule(["watch"], core, ["events"]),
      rule(["get"], core, ["services"]),
    ],
  },
  {
    serviceAccount: "pod-garbage-collector",
    rules: [
      rule(["list", "watch", "delete"], core, ["pods"]),
      rule(read, core, ["nodes"]),
      rule(["patch"], core, ["pods/status"]),
    ],
  },
  {
    serviceAccount: "replicaset-controller",
    rules: [
      rule(["get", "list", "watch", "update"], appsAndExtensions, ["replicasets"]),
      rule(["update"], appsAndExtensions, ["replicasets/status"]),
      rule(["update"], appsAndExtensions, ["replicasets/finalizers"]),
      rule(["list", "watch", "patch", "create", "delete"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "replication-controller",
    rules: [
      rule(["get", "list", "watch", "update"], core, ["replicationcontrollers"]),
      rule(["update"], core, ["replicationcontrollers/status"]),
      rule(["update"], core, ["replicationcontrollers/finalizers"]),
      rule(["list", "watch", "patch", "create", "delete"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "resourcequota-controller",
    rules: [rule(["list", "watch"], ["*"], ["*"]), rule(["update"], core, ["resourcequotas/status"]), events],
  },
  {
    serviceAccount: "route-controller",
    rules: [rule(["list", "watch"], core, ["nodes"]), rule(["patch"], core, ["nodes/status"]), events],
  },
  {
    serviceAccount: "service-account-controller",
    rules: [rule(["create"], core, ["serviceaccounts"]), events],
  },
  {
    serviceAccount: "service-controller",
    rules: [
      rule(read, core, ["services"]),
      rule(["patch", "update"], core, ["services/status"]),
      rule(["list", "watch"], core, ["nodes"]),
      events,
    ],
  },
  {
    serviceAccount: "statefulset-controller",
    rules: [
      rule(["list", "watch"], core, ["pods"]),
      rule(read, apps, ["statefulsets"]),
      rule(["update"], apps, ["statefulsets/status"]),
      rule(["update"], apps, ["statefulsets/finalizers"]),
      rule(["get", "create", "delete", "update", "patch"], core, ["pods"]),
      rule(["get", "create", "delete", "update", "patch", "list", "watch"], apps, ["controllerrevisions"]),
      rule(["get", "create"], core, ["persistentvolumeclaims"]),
      rule(["update", "delete"], core, ["persistentvolumeclaims"]),
      events,
    ],
  },
  {
    serviceAccount: "ttl-controller",
    rules: [rule(["update", "patch", "list", "watch"], core, ["nodes"]), events],
  },
  {
    serviceAccount: "certificate-controller",
    rules: [
      rule(["get", "list", "watch", "delete"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
      rule(
        ["update"],
        ["certificates.k8s.io"],
        ["certificatesigningrequests/status", "certificatesigningrequests/approval"],
      ),
      rule(
        ["approve"],
        ["certificates.k8s.io"],
        ["signers"],
        ["kubernetes.io/kube-apiserver-client-kubelet"],
      ),
      rule(
        ["sign"],
        ["certificates.k8s.io"],
        ["signers"],
        [
          "kubernetes.io/legacy-unknown",
          "kubernetes.io/kube-apiserver-client",
          "kubernetes.io/kube-apiserver-client-kubelet",
          "kubernetes.io/kubelet-serving",
        ],
      ),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
      events,
    ],
  },
  {
    serviceAccount: "pvc-protection-controller",
    rules: [
      rule(["get", "list", "watch", "update"], core, ["persistentvolumeclaims"]),
      rule(["list", "watch", "get"], core, ["pods"]),
      events,
    ],
  },
  {
    serviceAccount: "pv-protection-controller",
    rules: [rule(["get", "list", "watch", "update"], core, ["persistentvolumes"]), events],
  },
  {
    serviceAccount: "ttl-after-finished-controller",
    rules: [rule(["get", "list", "watch", "delete"], batch, ["jobs"]), events],
  },
  {
    serviceAccount: "root-ca-cert-publisher",
    rules: [rule(["create", "update"], core, ["configmaps"]), events],
  },
  {
    serviceAccount: "validatingadmissionpolicy-status-controller",
    rules: [
      rule(read, ["admissionregistration.k8s.io"], ["validatingadmissionpolicies"]),
      rule(
        ["get", "patch", "update"],
        ["admissionregistration.k8s.io"],
        ["validatingadmissionpolicies/status"],
      ),
      events,
    ],
  },
  {
    serviceAccount: "legacy-service-account-token-cleaner",
    rules: [
      rule(["get"], core, ["configmaps"], ["kube-apiserver-legacy-service-account-token-tracking"]),
      rule(["patch", "delete"], core, ["secrets"]),
    ],
  },
];
