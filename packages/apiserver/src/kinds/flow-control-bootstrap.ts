import type { KubeObject } from "@reconcile/api";
import type {
  FlowSchema,
  NonResourcePolicyRule,
  PolicyRulesWithSubjects,
  PriorityLevelConfiguration,
  ResourcePolicyRule,
  Subject,
} from "kubernetes-types/flowcontrol/v1.js";

// kube-apiserver v1.32's bootstrap API Priority and Fairness configuration
// (k8s.io/apiserver's flowcontrol/bootstrap): the mandatory objects every
// server keeps, and the suggested ones it creates and keeps up to date while
// their `apf.kubernetes.io/autoupdate-spec` annotation is "true". Written as
// they are stored, defaults included.

export type FlowSchemaObject = FlowSchema & KubeObject;
export type PriorityLevelObject = PriorityLevelConfiguration & KubeObject;

/** The annotation that lets the server keep an object's spec at its bootstrap value. */
export const autoUpdateAnnotation = "apf.kubernetes.io/autoupdate-spec";

const apiVersion = "flowcontrol.apiserver.k8s.io/v1";
const meta = (name: string) => ({ name, annotations: { [autoUpdateAnnotation]: "true" } });

const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: "Group", group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: "User", user: { name } }));
const kubeSystemAccounts = (...names: string[]): Subject[] =>
  names.map((name) => ({ kind: "ServiceAccount", serviceAccount: { name, namespace: "kube-system" } }));

function resourceRule(
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  clusterScope: boolean,
): ResourcePolicyRule {
  return { verbs, apiGroups, resources, ...(clusterScope ? { clusterScope } : {}), namespaces: ["*"] };
}

const everyResource = resourceRule(["*"], ["*"], ["*"], true);
const everyNonResource: NonResourcePolicyRule = { verbs: ["*"], nonResourceURLs: ["*"] };
const everything = (subjects: Subject[]): PolicyRulesWithSubjects => ({
  subjects,
  resourceRules: [everyResource],
  nonResourceRules: [everyNonResource],
});

function flowSchema(
  name: string,
  level: string,
  matchingPrecedence: number,
  method: "ByUser" | "ByNamespace" | undefined,
  rules: PolicyRulesWithSubjects,
): FlowSchemaObject {
  return {
    apiVersion,
    kind: "FlowSchema",
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence,
      ...(method === undefined ? {} : { distinguisherMethod: { type: method } }),
      rules: [rules],
    },
  };
}

function queued(
  name: string,
  nominalConcurrencyShares: number,
  lendablePercent: number,
  queues: number,
  handSize: number,
): PriorityLevelObject {
  return {
    apiVersion,
    kind: "PriorityLevelConfiguration",
    metadata: meta(name),
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares,
        lendablePercent,
        limitResponse: { type: "Queue", queuing: { queues, handSize, queueLengthLimit: 50 } },
      },
    },
  };
}

const allUsers = groups("system:unauthenticated", "system:authenticated");

/** The mandatory FlowSchemas, in the order the server ensures them. */
export const mandatoryFlowSchemas: readonly FlowSchemaObject[] = [
  flowSchema("exempt", "exempt", 1, undefined, everything(groups("system:masters"))),
  flowSchema("catch-all", "catch-all", 10000, "ByUser", everything(allUsers)),
];

/** The mandatory PriorityLevelConfigurations. */
export const mandatoryPriorityLevels: readonly PriorityLevelObject[] = [
  {
    apiVersion,
    kind: "PriorityLevelConfiguration",
    metadata: meta("catch-all"),
    spec: {
      type: "Limited",
      limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: "Reject" } },
    },
  },
  {
    apiVersion,
    kind: "PriorityLevelConfiguration",
    metadata: meta("exempt"),
    spec: { type: "Exempt", exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  },
];

/** The suggested PriorityLevelConfigurations. */
export const suggestedPriorityLevels: readonly PriorityLevelObject[] = [
  queued("system", 30, 33, 64, 6),
  queued("node-high", 40, 25, 64, 6),
  queued("leader-election", 10, 0, 16, 4),
  queued("workload-high", 40, 50, 128, 6),
  queued("workload-low", 100, 90, 128, 6),
  queued("global-default", 20, 50, 128, 6),
];

const leases = (verbs: string[]) => resourceRule(verbs, ["coordination.k8s.io"], ["leases"], false);
const getCreateUpdate = ["get", "create", "update"];

/** The suggested FlowSchemas. */
export const suggestedFlowSchemas: readonly FlowSchemaObject[] = [
  flowSchema("system-nodes", "system", 500, "ByUser", everything(groups("system:nodes"))),
  flowSchema("system-node-high", "node-high", 400, "ByUser", {
    subjects: groups("system:nodes"),
    resourceRules: [resourceRule(["*"], [""], ["nodes", "nodes/status"], true), leases(["*"])],
  }),
  flowSchema("probes", "exempt", 2, undefined, {
    subjects: allUsers,
    nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] }],
  }),
  flowSchema("system-leader-election", "leader-election", 100, "ByUser", {
    subjects: [
      ...users("system:kube-controller-manager", "system:kube-scheduler"),
      ...kubeSystemAccounts("*"),
    ],
    resourceRules: [leases(getCreateUpdate)],
  }),
  flowSchema("workload-leader-election", "leader-election", 200, "ByUser", {
    subjects: kubeSystemAccounts("*"),
    resourceRules: [
      resourceRule(getCreateUpdate, [""], ["endpoints", "configmaps"], false),
      leases(getCreateUpdate),
    ],
  }),
  flowSchema("endpoint-controller", "workload-high", 150, "ByUser", {
    subjects: [
      ...users("system:kube-controller-manager"),
      ...kubeSystemAccounts("endpoint-controller", "endpointslicemirroring-controller"),
    ],
    resourceRules: [resourceRule(getCreateUpdate, [""], ["endpoints"], false)],
  }),
  flowSchema(
    "kube-controller-manager",
    "workload-high",
    800,
    "ByNamespace",
    everything(users("system:kube-controller-manager")),
  ),
  flowSchema(
    "kube-scheduler",
    "workload-high",
    800,
    "ByNamespace",
    everything(users("system:kube-scheduler")),
  ),
  flowSchema(
    "kube-system-service-accounts",
    "workload-high",
    900,
    "ByNamespace",
    everything(kubeSystemAccounts("*")),
  ),
  flowSchema(
    "service-accounts",
    "workload-low",
    9000,
    "ByUser",
    everything(groups("system:serviceaccounts")),
  ),
  flowSchema("global-default", "global-default", 9900, "ByUser", everything(allUsers)),
];
