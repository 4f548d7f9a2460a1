import { describe, expect, it } from "vitest";
import {
  type FlowSchemaObject,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from "../../kinds/flow-control-bootstrap.js";
import type { Attributes } from "../auth/attributes.js";
import type { UserInfo } from "../auth/user.js";
import { FlowControlConfig } from "./classify.js";

const bootstrap = new FlowControlConfig(
  [...mandatoryFlowSchemas, ...suggestedFlowSchemas],
  [...mandatoryPriorityLevels, ...suggestedPriorityLevels],
);

const user = (username: string, ...groups: string[]): UserInfo => ({ username, groups });
const authenticated = (username: string, ...groups: string[]) =>
  user(username, ...groups, "system:authenticated");

function resource(
  who: UserInfo,
  verb: string,
  apiGroup: string,
  resourceName: string,
  namespace = "",
  subresource = "",
): Attributes {
  return {
    user: who,
    resourceRequest: true,
    verb,
    apiGroup,
    resource: resourceName,
    subresource,
    namespace,
    name: "",
  };
}

const path = (who: UserInfo, verb: string, requestPath: string): Attributes => ({
  user: who,
  resourceRequest: false,
  verb,
  path: requestPath,
});

/** `<flow schema> <priority level> <distinguisher>` of a request under the bootstrap configuration. */
function classified(config: FlowControlConfig, digest: Attributes): string {
  const { flowSchema, priorityLevel, flowDistinguisher } = config.classify(digest.user, {
    attributes: () => digest,
  });
  return `${flowSchema.metadata?.name} ${priorityLevel.metadata?.name} ${JSON.stringify(flowDistinguisher)}`;
}

describe("classification by kube-apiserver's bootstrap FlowSchemas", () => {
  const node = authenticated("system:node:n1", "system:nodes");
  const controllerManager = authenticated("system:kube-controller-manager");
  const kubeSystemAccount = authenticated(
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccounts",
    "system:serviceaccounts:kube-system",
  );
  const appAccount = authenticated(
    "system:serviceaccount:shop:web",
    "system:serviceaccounts",
    "system:serviceaccounts:shop",
  );
  const cases: [string, Attributes, string][] = [
    [
      "an admin, anything",
      resource(authenticated("admin", "system:masters"), "delete", "", "pods", "x"),
      'exempt exempt ""',
    ],
    [
      "a probe, unauthenticated",
      path(user("system:anonymous", "system:unauthenticated"), "get", "/readyz"),
      'probes exempt ""',
    ],
    [
      "a probe's sub-check is not a probe",
      path(user("system:anonymous", "system:unauthenticated"), "get", "/readyz/etcd"),
      'global-default global-default "system:anonymous"',
    ],
    [
      "a node, its Node's status",
      resource(node, "patch", "", "nodes", "", "status"),
      'system-node-high node-high "system:node:n1"',
    ],
    [
      "a node, its Lease",
      resource(node, "update", "coordination.k8s.io", "leases", "kube-node-lease"),
      'system-node-high node-high "system:node:n1"',
    ],
    ["a node, its pods", resource(node, "list", "", "pods"), 'system-nodes system "system:node:n1"'],
    [
      "the controller manager, its Lease",
      resource(controllerManager, "update", "coordination.k8s.io", "leases", "kube-system"),
      'system-leader-election leader-election "system:kube-controller-manager"',
    ],
    [
      "the controller manager, endpoints",
      resource(controllerManager, "update", "", "endpoints", "shop"),
      'endpoint-controller workload-high "system:kube-controller-manager"',
    ],
    [
      "the controller manager, pods in a namespace",
      resource(controllerManager, "create", "", "pods", "shop"),
      'kube-controller-manager workload-high "shop"',
    ],
    [
      "the controller manager, cluster-scoped",
      resource(controllerManager, "list", "", "nodes"),
      'kube-controller-manager workload-high ""',
    ],
    [
      "a kube-system controller, a ConfigMap lock",
      resource(kubeSystemAccount, "get", "", "configmaps", "kube-system"),
      'workload-leader-election leader-election "system:serviceaccount:kube-system:deployment-controller"',
    ],
    [
      "a kube-system controller, ReplicaSets",
      resource(kubeSystemAccount, "create", "apps", "replicasets", "shop"),
      'kube-system-service-accounts workload-high "shop"',
    ],
    [
      "an application's ServiceAccount",
      resource(appAccount, "list", "", "configmaps", "shop"),
      'service-accounts workload-low "system:serviceaccount:shop:web"',
    ],
    [
      "a person",
      resource(authenticated("jane", "devs"), "get", "apps", "deployments", "shop"),
      'global-default global-default "jane"',
    ],
    [
      "no group that any FlowSchema names",
      resource(user("robot"), "get", "", "pods", "x"),
      'catch-all catch-all "robot"',
    ],
  ];
  for (const [name, digest, expected] of cases)
    it(name, () => {
      expect(classified(bootstrap, digest)).toBe(expected);
    });
});

describe("FlowSchema matching", () => {
  const level = suggestedPriorityLevels.find((l) => l.metadata?.name === "workload-low")!;
  const schema = (
    name: string,
    precedence: number,
    spec: Partial<FlowSchemaObject["spec"]>,
  ): FlowSchemaObject => ({
    metadata: { name, uid: `uid-${name}` },
    spec: { priorityLevelConfiguration: { name: "workload-low" }, matchingPrecedence: precedence, ...spec },
  });
  const jane = authenticated("jane");

  it("takes the lowest matchingPrecedence, then the first name, and skips a FlowSchema whose level is missing", () => {
    const everyone = {
      subjects: [{ kind: "Group", group: { name: "*" } }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    };
    const config = new FlowControlConfig(
      [
        schema("b", 50, { rules: [everyone] }),
        schema("a", 50, { rules: [everyone] }),
        schema("dangling", 10, { priorityLevelConfiguration: { name: "missing" }, rules: [everyone] }),
      ],
      [level],
    );
    expect(classified(config, path(jane, "get", "/version"))).toBe('a workload-low ""');
  });

  it("matches subresources as resource/subresource, and a namespaced request only by its namespace", () => {
    const rules = [
      {
        subjects: [{ kind: "User", user: { name: "jane" } }],
        resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods/log"], namespaces: ["shop"] }],
      },
    ];
    const config = new FlowControlConfig([schema("logs", 10, { rules })], [level]);
    expect(classified(config, resource(jane, "get", "", "pods", "shop", "log"))).toBe('logs workload-low ""');
    expect(classified(config, resource(jane, "get", "", "pods", "shop"))).toBe('catch-all catch-all "jane"');
    expect(classified(config, resource(jane, "get", "", "pods", "other", "log"))).toBe(
      'catch-all catch-all "jane"',
    );
  });

  it("matches a path prefix only through a trailing /*, and ServiceAccounts by namespace and name", () => {
    const rules = [
      {
        subjects: [{ kind: "ServiceAccount", serviceAccount: { namespace: "ops", name: "*" } }],
        nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/metrics/*"] }],
      },
    ];
    const config = new FlowControlConfig([schema("ops", 10, { rules })], [level]);
    const opsAccount = authenticated("system:serviceaccount:ops:scraper");
    expect(classified(config, path(opsAccount, "get", "/metrics/slis"))).toBe('ops workload-low ""');
    expect(classified(config, path(opsAccount, "get", "/metrics"))).toBe(
      'catch-all catch-all "system:serviceaccount:ops:scraper"',
    );
    expect(
      classified(config, path(authenticated("system:serviceaccount:dev:scraper"), "get", "/metrics/slis")),
    ).toBe('catch-all catch-all "system:serviceaccount:dev:scraper"');
  });
});
