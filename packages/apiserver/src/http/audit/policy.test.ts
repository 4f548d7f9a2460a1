import { describe, expect, it } from "vitest";
import {
  type AuditLevel,
  type AuditPolicyRule,
  type AuditRequestAttributes,
  type AuditStage,
  evaluateAuditPolicy,
  loadAuditPolicy,
} from "./policy.js";

// Upstream's checker_test.go: its requests, rules and expectations.
const tim = { username: "tim@k8s.io", groups: ["humans", "developers"] };
const requests: Record<string, AuditRequestAttributes> = {
  namespaced: {
    user: tim,
    resourceRequest: true,
    verb: "get",
    apiGroup: "",
    resource: "pods",
    subresource: "",
    namespace: "default",
    name: "busybox",
  },
  cluster: {
    user: tim,
    resourceRequest: true,
    verb: "get",
    apiGroup: "rbac.authorization.k8s.io",
    resource: "clusterroles",
    subresource: "",
    namespace: "",
    name: "edit",
  },
  nonResource: { user: tim, resourceRequest: false, verb: "get", path: "/logs/kubelet.log" },
  subresource: {
    user: tim,
    resourceRequest: true,
    verb: "get",
    apiGroup: "",
    resource: "pods",
    subresource: "log",
    namespace: "default",
    name: "busybox",
  },
  Unauthorized: {
    user: undefined,
    resourceRequest: true,
    verb: "get",
    apiGroup: "",
    resource: "pods",
    subresource: "",
    namespace: "default",
    name: "busybox",
  },
};

const rules: Record<string, AuditPolicyRule> = {
  default: { level: "Metadata" },
  create: { level: "Request", verbs: ["create"] },
  tims: { level: "Metadata", users: ["tim@k8s.io"] },
  humans: { level: "Metadata", userGroups: ["humans"] },
  serviceAccounts: { level: "Request", userGroups: ["system:serviceaccounts"] },
  getPods: { level: "RequestResponse", verbs: ["get"], resources: [{ resources: ["pods"] }] },
  getPodLogs: { level: "Request", verbs: ["get"], resources: [{ resources: ["pods/log"] }] },
  getPodWildcardMatching: { level: "Request", verbs: ["get"], resources: [{ resources: ["*"] }] },
  getPodResourceWildcardMatching: { level: "Request", verbs: ["get"], resources: [{ resources: ["*/log"] }] },
  getPodSubResourceWildcardMatching: {
    level: "Request",
    verbs: ["get"],
    resources: [{ resources: ["pods/*"] }],
  },
  getClusterRoles: {
    level: "RequestResponse",
    verbs: ["get"],
    resources: [{ group: "rbac.authorization.k8s.io", resources: ["clusterroles"] }],
    namespaces: [""],
  },
  getLogs: { level: "RequestResponse", verbs: ["get"], nonResourceURLs: ["/logs*"] },
  getMetrics: { level: "Request", verbs: ["get"], nonResourceURLs: ["/metrics"] },
  clusterRoleEdit: {
    level: "Request",
    resources: [{ group: "rbac.authorization.k8s.io", resources: ["clusterroles"], resourceNames: ["edit"] }],
  },
  "omit RequestReceived": { level: "Request", omitStages: ["RequestReceived"] },
  "only audit panic": {
    level: "Request",
    omitStages: ["RequestReceived", "ResponseStarted", "ResponseComplete"],
  },
};

type Case = [request: string, level: AuditLevel, ...ruleNames: string[]];

const levelCases: Case[] = [
  ["namespaced", "Metadata", "default"],
  ["namespaced", "None", "create"],
  ["namespaced", "Metadata", "tims"],
  ["namespaced", "Metadata", "humans"],
  ["namespaced", "None", "serviceAccounts"],
  ["namespaced", "RequestResponse", "getPods"],
  ["namespaced", "None", "getClusterRoles"],
  ["namespaced", "None", "getLogs"],
  ["namespaced", "None", "getMetrics"],
  ["namespaced", "Metadata", "getMetrics", "serviceAccounts", "default"],
  ["namespaced", "RequestResponse", "getMetrics", "getPods", "default"],
  ["namespaced", "RequestResponse", "getPodLogs", "getPods"],

  ["cluster", "Metadata", "default"],
  ["cluster", "None", "create"],
  ["cluster", "Metadata", "tims"],
  ["cluster", "Metadata", "humans"],
  ["cluster", "None", "serviceAccounts"],
  ["cluster", "None", "getPods"],
  ["cluster", "RequestResponse", "getClusterRoles"],
  ["cluster", "Request", "clusterRoleEdit", "getClusterRoles"],
  ["cluster", "None", "getLogs"],
  ["cluster", "None", "getMetrics"],
  ["cluster", "Metadata", "getMetrics", "serviceAccounts", "default"],
  ["cluster", "RequestResponse", "getMetrics", "getClusterRoles", "default"],
  ["cluster", "None", "getPodLogs", "getPods"],

  ["nonResource", "Metadata", "default"],
  ["nonResource", "None", "create"],
  ["nonResource", "Metadata", "tims"],
  ["nonResource", "Metadata", "humans"],
  ["nonResource", "None", "serviceAccounts"],
  ["nonResource", "None", "getPods"],
  ["nonResource", "None", "getClusterRoles"],
  ["nonResource", "RequestResponse", "getLogs"],
  ["nonResource", "None", "getMetrics"],
  ["nonResource", "Metadata", "getMetrics", "serviceAccounts", "default"],
  ["nonResource", "RequestResponse", "getLogs", "getClusterRoles", "default"],
  ["nonResource", "None", "getPodLogs", "getPods"],

  ["subresource", "Request", "getPodLogs", "getPods"],
  ["subresource", "Request", "getPodWildcardMatching"],
  ["subresource", "Request", "getPodResourceWildcardMatching"],
  ["subresource", "Request", "getPodSubResourceWildcardMatching"],

  ["Unauthorized", "None", "tims"],
  ["Unauthorized", "Metadata", "tims", "default"],
  ["Unauthorized", "None", "humans"],
  ["Unauthorized", "Metadata", "humans", "default"],
];

function evaluate(request: string, policyStages: AuditStage[] | undefined, ruleNames: string[]) {
  return evaluateAuditPolicy(
    { omitStages: policyStages, rules: ruleNames.map((name) => rules[name]!) },
    requests[request]!,
  );
}

describe("evaluateAuditPolicy (upstream's checker_test.go)", () => {
  for (const policyStages of [undefined, ["RequestReceived", "ResponseStarted"] as AuditStage[]]) {
    const label = policyStages === undefined ? "no policy-wide stages" : "policy-wide omitStages";
    it.each(levelCases)(`${label}: %s is audited at %s by %s`, (request, level, ...ruleNames) => {
      const config = evaluate(request, policyStages, ruleNames);
      expect(config.level).toBe(level);
      expect([...config.omitStages].sort()).toEqual([...(policyStages ?? [])].sort());
    });
  }

  it.each([
    ["namespaced", undefined, "Request", ["RequestReceived"], ["omit RequestReceived", "getPods", "default"]],
    [
      "namespaced",
      undefined,
      "Request",
      ["RequestReceived", "ResponseComplete", "ResponseStarted"],
      ["only audit panic", "getPods", "default"],
    ],
    ["cluster", undefined, "Request", ["RequestReceived"], ["omit RequestReceived", "getPods", "default"]],
    [
      "nonResource",
      undefined,
      "Request",
      ["RequestReceived"],
      ["omit RequestReceived", "getPods", "default"],
    ],
    [
      "namespaced",
      ["RequestReceived", "ResponseStarted"],
      "Request",
      ["RequestReceived", "ResponseStarted"],
      ["omit RequestReceived", "getPods", "default"],
    ],
    [
      "cluster",
      ["RequestReceived", "ResponseStarted"],
      "Request",
      ["RequestReceived", "ResponseComplete", "ResponseStarted"],
      ["only audit panic", "getPods", "default"],
    ],
    [
      "nonResource",
      ["RequestReceived", "ResponseStarted"],
      "Metadata",
      ["RequestReceived", "ResponseStarted"],
      ["default", "omit RequestReceived", "getPods"],
    ],
  ] as [
    string,
    AuditStage[] | undefined,
    AuditLevel,
    AuditStage[],
    string[],
  ][])("%s with policy stages %j: level %s, omitting %j (rules %j)", (request, policyStages, level, omitted, ruleNames) => {
    const config = evaluate(request, policyStages, ruleNames);
    expect(config.level).toBe(level);
    expect([...config.omitStages].sort()).toEqual(omitted);
  });

  it.each([
    [false, undefined, false],
    [true, undefined, true],
    [true, false, false],
    [false, true, true],
  ])("omitManagedFields: policy %s, rule %s → %s", (policyDefault, ruleOverride, expected) => {
    const config = evaluateAuditPolicy(
      {
        omitManagedFields: policyDefault,
        rules: [{ level: "RequestResponse", verbs: ["get"], omitManagedFields: ruleOverride }],
      },
      { user: undefined, resourceRequest: false, verb: "get", path: "/" },
    );
    expect(config.omitManagedFields).toBe(expected);
  });
});

describe("loadAuditPolicy", () => {
  it("reads the YAML of --audit-policy-file", () => {
    const policy = loadAuditPolicy(
      [
        "apiVersion: audit.k8s.io/v1",
        "kind: Policy",
        "omitStages: [RequestReceived]",
        "rules:",
        "- level: None",
        "  nonResourceURLs: ['/healthz*', '/version']",
        "- level: RequestResponse",
        "  resources:",
        "  - group: ''",
        "    resources: [pods]",
        "- level: Metadata",
      ].join("\n"),
    );
    expect(policy.rules.map((rule) => rule.level)).toEqual(["None", "RequestResponse", "Metadata"]);
    expect(policy.omitStages).toEqual(["RequestReceived"]);
  });

  it.each([
    [
      "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Metadata}]",
      'unknown group version field "audit.k8s.io/v1beta1"',
    ],
    ["apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []", "loaded illegal audit policy with 0 rules"],
    ["rules: [{}]", "rules[0].level: Required value"],
    [
      "rules: [{level: Everything}]",
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
    ],
    [
      "rules: [{level: Metadata, nonResourceURLs: [logs]}]",
      `rules[0].nonResourceURLs[0]: Invalid value: "logs": non-resource URL rules must begin with a '/' character`,
    ],
    [
      "rules: [{level: Metadata, nonResourceURLs: ['/lo*gs']}]",
      `rules[0].nonResourceURLs[0]: Invalid value: "/lo*gs": non-resource URL wildcards '*' must be the final character of the rule`,
    ],
    [
      "rules: [{level: Metadata, nonResourceURLs: ['/logs'], namespaces: [default]}]",
      `rules[0].nonResourceURLs: Invalid value: []string{"/logs"}: rules cannot apply to both regular resources and non-resource URLs`,
    ],
    [
      "rules: [{level: Metadata, resources: [{group: rbac.authorization.k8s.io/v1}]}]",
      'rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1"',
    ],
    [
      "rules: [{level: Metadata, resources: [{resourceNames: [x]}]}]",
      `rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource`,
    ],
    [
      "rules: [{level: Metadata, omitStages: [Done]}]",
      'rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
  ])("refuses %j: %s", (text, message) => {
    expect(() => loadAuditPolicy(text)).toThrow(message);
  });
});
