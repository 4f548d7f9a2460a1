import type {
  ClusterRole,
  ClusterRoleBinding,
  PolicyRule,
  Role,
  RoleBinding,
  Subject,
} from "kubernetes-types/rbac/v1.js";
import { controllerRolePrefix, controllerRoles, rule } from "./controller-policy.js";
import {
  allAuthenticated,
  allServiceAccountsGroup,
  allUnauthenticated,
  systemPrivilegedGroup,
} from "./user.js";

// The roles and bindings kube-apiserver v1.32 creates at start
// (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go` and
// `namespace_policy.go`), those a
// cluster's users and tools rely on: the user-facing roles (cluster-admin,
// admin, edit, view and their aggregated parts), discovery and self-review
// for every user, and the identities of the control plane's components.

const read = ["get", "list", "watch"];
const write = ["create", "update", "patch", "delete", "deletecollection"];
const readWrite = [...read, ...write];

function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { verbs, nonResourceURLs };
}
const events = rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"]);
const aggregate = (to: string) => ({ [`rbac.authorization.k8s.io/aggregate-to-${to}`]: "true" });
const aggregating = (to: string) => ({ clusterRoleSelectors: [{ matchLabels: aggregate(to) }] });

const roleSpecs: Array<Omit<ClusterRole, "metadata"> & { name: string; labels?: Record<string, string> }> = [
  { name: "cluster-admin", rules: [rule(["*"], ["*"], ["*"]), urls(["*"], ["*"])] },
  {
    name: "system:discovery",
    rules: [
      urls(
        ["get"],
        [
          "/livez",
          "/readyz",
          "/healthz",
          "/version",
          "/version/",
          "/openapi",
          "/openapi/*",
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
        ],
      ),
    ],
  },
  {
    name: "system:basic-user",
    rules: [
      rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
      rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
    ],
  },
  {
    name: "system:public-info-viewer",
    rules: [urls(["get"], ["/livez", "/readyz", "/healthz", "/version", "/version/"])],
  },
  {
    name: "system:service-account-issuer-discovery",
    rules: [
      urls(
        ["get"],
        [
          "/.well-known/openid-configuration",
          "/.well-known/openid-configuration/",
          "/openid/v1/jwks",
          "/openid/v1/jwks/",
        ],
      ),
    ],
  },
  { name: "admin", aggregationRule: aggregating("admin") },
  { name: "edit", labels: aggregate("admin"), aggregationRule: aggregating("edit") },
  { name: "view", labels: aggregate("edit"), aggregationRule: aggregating("view") },
  {
    name: "system:aggregate-to-admin",
    labels: aggregate("admin"),
    rules: [
      rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
      rule(readWrite, ["rbac.authorization.k8s.io"], ["roles", "rolebindings"]),
    ],
  },
  {
    name: "system:aggregate-to-edit",
    labels: aggregate("edit"),
    rules: [
      rule(
        read,
        [""],
        ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"],
      ),
      rule(["impersonate"], [""], ["serviceaccounts"]),
      rule(write, [""], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
      rule(["create"], [""], ["pods/eviction"]),
      rule(
        write,
        [""],
        [
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "serviceaccounts",
          "services",
          "services/proxy",
          "persistentvolumeclaims",
          "configmaps",
          "secrets",
          "events",
        ],
      ),
      rule(["create"], [""], ["serviceaccounts/token"]),
      rule(
        write,
        ["apps"],
        [
          "statefulsets",
          "statefulsets/scale",
          "daemonsets",
          "deployments",
          "deployments/scale",
          "deployments/rollback",
          "replicasets",
          "replicasets/scale",
        ],
      ),
      rule(write, ["autoscaling"], ["horizontalpodautoscalers"]),
      rule(write, ["batch"], ["jobs", "cronjobs"]),
      rule(
        write,
        ["extensions"],
        [
          "daemonsets",
          "deployments",
          "deployments/scale",
          "deployments/rollback",
          "ingresses",
          "replicasets",
          "replicasets/scale",
          "replicationcontrollers/scale",
          "networkpolicies",
        ],
      ),
      rule(write, ["policy"], ["poddisruptionbudgets"]),
      rule(write, ["networking.k8s.io"], ["networkpolicies", "ingresses"]),
      rule(readWrite, ["coordination.k8s.io"], ["leases"]),
    ],
  },
  {
    name: "system:aggregate-to-view",
    labels: aggregate("view"),
    rules: [
      rule(
        read,
        [""],
        [
          "pods",
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "serviceaccounts",
          "services",
          "services/status",
          "endpoints",
          "persistentvolumeclaims",
          "persistentvolumeclaims/status",
          "configmaps",
        ],
      ),
      rule(
        read,
        [""],
        [
          "limitranges",
          "resourcequotas",
          "bindings",
          "events",
          "pods/status",
          "resourcequotas/status",
          "namespaces/status",
          "replicationcontrollers/status",
          "pods/log",
        ],
      ),
      rule(read, [""], ["namespaces"]),
      rule(read, ["discovery.k8s.io"], ["endpointslices"]),
      rule(
        read,
        ["apps"],
        [
          "controllerrevisions",
          "statefulsets",
          "statefulsets/status",
          "statefulsets/scale",
          "daemonsets",
          "daemonsets/status",
          "deployments",
          "deployments/status",
          "deployments/scale",
          "replicasets",
          "replicasets/status",
          "replicasets/scale",
        ],
      ),
      rule(read, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
      rule(read, ["batch"], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
      rule(
        read,
        ["extensions"],
        [
          "daemonsets",
          "daemonsets/status",
          "deployments",
          "deployments/scale",
          "deployments/status",
          "ingresses",
          "ingresses/status",
          "replicasets",
          "replicasets/scale",
          "replicasets/status",
          "replicationcontrollers/scale",
          "networkpolicies",
        ],
      ),
      rule(read, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
      rule(read, ["networking.k8s.io"], ["networkpolicies", "ingresses", "ingresses/status"]),
      rule(read, ["metrics.k8s.io"], ["pods", "nodes"]),
    ],
  },
  {
    name: "system:auth-delegator",
    rules: [
      rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
    ],
  },
  {
    name: "system:node",
    rules: [
      rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
      rule(read, [""], ["services"]),
      rule(["create", "get", "list", "watch"], [""], ["nodes"]),
      rule(["update", "patch"], [""], ["nodes/status"]),
      rule(["update", "patch"], [""], ["nodes"]),
      rule(["create", "update", "patch"], [""], ["events"]),
      rule(read, [""], ["pods"]),
      rule(["create", "delete"], [""], ["pods"]),
      rule(["update", "patch"], [""], ["pods/status"]),
      rule(["create"], [""], ["pods/eviction"]),
      rule(read, [""], ["secrets", "configmaps"]),
      rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
      rule(["get"], [""], ["endpoints"]),
      rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
      rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
      rule(["create"], [""], ["serviceaccounts/token"]),
    ],
  },
  {
    name: "system:kube-scheduler",
    rules: [
      events,
      rule(["create"], ["coordination.k8s.io"], ["leases"]),
      rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-scheduler"]),
      rule(read, [""], ["nodes"]),
      rule(["get", "list", "watch", "delete"], [""], ["pods"]),
      rule(["create"], [""], ["pods/binding", "bindings"]),
      rule(["patch", "update"], [""], ["pods/status"]),
      rule(read, [""], ["services", "replicationcontrollers"]),
      rule(read, ["apps", "extensions"], ["replicasets"]),
      rule(read, ["apps"], ["statefulsets"]),
      rule(read, ["policy"], ["poddisruptionbudgets"]),
      rule(read, [""], ["persistentvolumeclaims", "persistentvolumes"]),
      rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
      rule(read, ["storage.k8s.io"], ["csinodes", "csidrivers", "csistoragecapacities", "storageclasses"]),
      rule(read, [""], ["namespaces", "configmaps"]),
    ],
  },
  {
    name: "system:volume-scheduler",
    rules: [
      rule([...read, "update", "patch"], [""], ["persistentvolumes"]),
      rule(read, ["storage.k8s.io"], ["storageclasses"]),
      rule([...read, "update", "patch"], [""], ["persistentvolumeclaims"]),
    ],
  },
  {
    name: "system:kube-controller-manager",
    rules: [
      events,
      rule(["create"], ["coordination.k8s.io"], ["leases"]),
      rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-controller-manager"]),
      rule(["create"], [""], ["secrets", "serviceaccounts"]),
      rule(["delete"], [""], ["secrets"]),
      rule(["get"], [""], ["namespaces", "secrets", "serviceaccounts", "configmaps"]),
      rule(["update"], [""], ["secrets", "serviceaccounts"]),
      rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
      rule(["list", "watch"], ["*"], ["*"]),
      rule(["create"], [""], ["serviceaccounts/token"]),
    ],
  },
  // Certificate requests: what a kubelet bootstrapping its credentials needs, the
  // subresources the CSR approving controller reviews, and approval per signer.
  {
    name: "system:node-bootstrapper",
    rules: [
      rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    ],
  },
  {
    name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    rules: [rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/nodeclient"])],
  },
  {
    name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    rules: [rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/selfnodeclient"])],
  },
  ...(
    [
      ["legacy-unknown-approver", "kubernetes.io/legacy-unknown"],
      ["kubelet-serving-approver", "kubernetes.io/kubelet-serving"],
      ["kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"],
      ["kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet"],
    ] as const
  ).map(([name, signer]) => ({
    name: `system:certificates.k8s.io:${name}`,
    rules: [rule(["approve"], ["certificates.k8s.io"], ["signers"], [signer])],
  })),
];

const bindingSpecs: Array<{ name: string; role?: string; subjects: Subject[] }> = [
  { name: "cluster-admin", subjects: [group(systemPrivilegedGroup)] },
  { name: "system:discovery", subjects: [group(allAuthenticated)] },
  { name: "system:basic-user", subjects: [group(allAuthenticated)] },
  { name: "system:public-info-viewer", subjects: [group(allAuthenticated), group(allUnauthenticated)] },
  { name: "system:service-account-issuer-discovery", subjects: [group(allServiceAccountsGroup)] },
  { name: "system:kube-controller-manager", subjects: [user("system:kube-controller-manager")] },
  { name: "system:kube-scheduler", subjects: [user("system:kube-scheduler")] },
  { name: "system:volume-scheduler", subjects: [user("system:kube-scheduler")] },
  { name: "system:node", subjects: [] },
];

function group(name: string): Subject {
  return { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name };
}
function user(name: string): Subject {
  return { kind: "User", apiGroup: "rbac.authorization.k8s.io", name };
}

const bootstrapMetadata = (name: string, labels: Record<string, string> = {}) => ({
  name,
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults", ...labels },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
});

/** The rules of the `system:node` role, which the Node authorizer applies to every node (upstream's `NodeRules`). */
export function nodeRules(): PolicyRule[] {
  return roleSpecs.find((role) => role.name === "system:node")?.rules ?? [];
}

/** The bootstrap ClusterRoles, as stored objects: the cluster's roles, then each controller's. */
export function bootstrapClusterRoles(): ClusterRole[] {
  const controllers = controllerRoles.map(({ serviceAccount, rules }) => ({
    name: `${controllerRolePrefix}${serviceAccount}`,
    rules,
  }));
  return [...roleSpecs, ...controllers].map(({ name, labels, ...rest }: (typeof roleSpecs)[number]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: bootstrapMetadata(name, labels),
    ...rest,
  }));
}

/** The bootstrap ClusterRoleBindings, as stored objects: each controller's role to its ServiceAccount in kube-system. */
export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  const controllers = controllerRoles.map(({ serviceAccount }) => ({
    name: `${controllerRolePrefix}${serviceAccount}`,
    subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace: "kube-system" } as Subject],
  }));
  return [...bindingSpecs, ...controllers].map(({ name, role, subjects }: (typeof bindingSpecs)[number]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: bootstrapMetadata(name),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role ?? name },
    ...(subjects.length === 0 ? {} : { subjects }),
  }));
}

function serviceAccount(namespace: string, name: string): Subject {
  return { kind: "ServiceAccount", name, namespace };
}

/**
 * The Roles kube-apiserver creates in kube-system and kube-public
 * (`namespace_policy.go`): the delegated-authentication reader, leader
 * locking for the controller manager and the scheduler, and the token
 * controllers' roles.
 */
const namespaceRoleSpecs: Array<{ namespace: string; name: string; rules: PolicyRule[] }> = [
  {
    namespace: "kube-system",
    name: "extension-apiserver-authentication-reader",
    rules: [{ ...rule(read, [""], ["configmaps"]), resourceNames: ["extension-apiserver-authentication"] }],
  },
  {
    namespace: "kube-system",
    name: "system:controller:bootstrap-signer",
    rules: [rule(read, [""], ["secrets"])],
  },
  {
    namespace: "kube-system",
    name: "system:controller:cloud-provider",
    rules: [rule(["create", ...read], [""], ["configmaps"])],
  },
  {
    namespace: "kube-system",
    name: "system:controller:token-cleaner",
    rules: [rule([...read, "delete"], [""], ["secrets"]), events],
  },
  {
    namespace: "kube-system",
    name: "system::leader-locking-kube-controller-manager",
    rules: [
      rule(["watch"], [""], ["configmaps"]),
      { ...rule(["get", "update"], [""], ["configmaps"]), resourceNames: ["kube-controller-manager"] },
      rule(["get", "watch", "list", "create", "update"], ["coordination.k8s.io"], ["leases"]),
    ],
  },
  {
    namespace: "kube-system",
    name: "system::leader-locking-kube-scheduler",
    rules: [
      rule(["watch"], [""], ["configmaps"]),
      { ...rule(["get", "update"], [""], ["configmaps"]), resourceNames: ["kube-scheduler"] },
    ],
  },
  {
    namespace: "kube-public",
    name: "system:controller:bootstrap-signer",
    rules: [
      rule(read, [""], ["configmaps"]),
      { ...rule(["update"], [""], ["configmaps"]), resourceNames: ["cluster-info"] },
      events,
    ],
  },
];

const namespaceBindingSpecs: Array<{ namespace: string; name: string; role?: string; subjects: Subject[] }> =
  [
    {
      namespace: "kube-system",
      name: "system::extension-apiserver-authentication-reader",
      role: "extension-apiserver-authentication-reader",
      subjects: [user("system:kube-controller-manager"), user("system:kube-scheduler")],
    },
    {
      namespace: "kube-system",
      name: "system::leader-locking-kube-controller-manager",
      subjects: [
        user("system:kube-controller-manager"),
        serviceAccount("kube-system", "kube-controller-manager"),
        serviceAccount("kube-system", "leader-election-controller"),
      ],
    },
    {
      namespace: "kube-system",
      name: "system::leader-locking-kube-scheduler",
      subjects: [user("system:kube-scheduler"), serviceAccount("kube-system", "kube-scheduler")],
    },
    ...["bootstrap-signer", "cloud-provider", "token-cleaner"].map((name) => ({
      namespace: "kube-system",
      name: `system:controller:${name}`,
      subjects: [serviceAccount("kube-system", name)],
    })),
    {
      namespace: "kube-public",
      name: "system:controller:bootstrap-signer",
      subjects: [serviceAccount("kube-system", "bootstrap-signer")],
    },
  ];

/** The bootstrap Roles of kube-system and kube-public, as stored objects. */
export function bootstrapNamespaceRoles(): Role[] {
  return namespaceRoleSpecs.map(({ namespace, name, rules }) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { ...bootstrapMetadata(name), namespace },
    rules,
  }));
}

/** The bootstrap RoleBindings of kube-system and kube-public, each to the Role of its namespace. */
export function bootstrapNamespaceRoleBindings(): RoleBinding[] {
  return namespaceBindingSpecs.map(({ namespace, name, role, subjects }) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { ...bootstrapMetadata(name), namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role ?? name },
    subjects,
  }));
}
