/**
 * Valid objects of the kinds a server serves, one per collection: what the
 * mutation fuzzer starts from. Each is accepted as it is by a fresh server
 * in the namespace `fuzz`; the fuzzer mutates copies of them.
 */
export interface CorpusEntry {
  /** The collection's path, `{ns}` standing for the namespace. */
  readonly collection: string;
  /** A valid body; `metadata.name` is replaced by a fresh name per request. */
  readonly object: Record<string, unknown>;
  /** The object's subresources that take a write: `status`, `scale`. */
  readonly subresources?: readonly string[];
  /** Fits the object to its fresh name where the kind ties fields to it (a CRD is named `plural.group`). */
  readonly named?: (object: Record<string, unknown>, name: string) => Record<string, unknown>;
}

const labels = { app: "fuzz" };
const podSpec = { containers: [{ name: "c", image: "nginx:1.27", ports: [{ containerPort: 80 }] }] };
const template = { metadata: { labels }, spec: podSpec };
const rule = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] };

/** Every built-in kind the fuzzer writes. Webhook configurations and policies are left out: a valid one may refuse later writes. */
export const builtinCorpus: readonly CorpusEntry[] = [
  {
    collection: "/api/v1/namespaces/{ns}/pods",
    object: { metadata: { labels }, spec: podSpec },
    subresources: ["status"],
  },
  {
    collection: "/api/v1/namespaces/{ns}/configmaps",
    object: { data: { key: "value" }, binaryData: { bin: "aGk=" } },
  },
  {
    collection: "/api/v1/namespaces/{ns}/secrets",
    object: { type: "Opaque", data: { key: "dmFsdWU=" }, stringData: { s: "t" } },
  },
  {
    collection: "/api/v1/namespaces/{ns}/services",
    object: {
      spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
    },
    subresources: ["status"],
  },
  { collection: "/api/v1/namespaces/{ns}/serviceaccounts", object: { automountServiceAccountToken: false } },
  {
    collection: "/api/v1/namespaces/{ns}/endpoints",
    object: { subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ name: "http", port: 80 }] }] },
  },
  {
    collection: "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    object: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
    subresources: ["status"],
  },
  {
    collection: "/api/v1/namespaces/{ns}/resourcequotas",
    object: { spec: { hard: { pods: "10", "requests.cpu": "4" } } },
    subresources: ["status"],
  },
  {
    collection: "/api/v1/namespaces/{ns}/limitranges",
    object: {
      spec: { limits: [{ type: "Container", default: { cpu: "500m" }, defaultRequest: { cpu: "100m" } }] },
    },
  },
  {
    collection: "/api/v1/namespaces/{ns}/replicationcontrollers",
    object: { spec: { replicas: 1, selector: labels, template } },
    subresources: ["status", "scale"],
  },
  { collection: "/api/v1/namespaces/{ns}/podtemplates", object: { template } },
  {
    collection: "/api/v1/namespaces/{ns}/events",
    object: {
      involvedObject: { kind: "Pod", name: "p", namespace: "fuzz" },
      reason: "Fuzzed",
      message: "m",
      type: "Normal",
      firstTimestamp: "2026-01-01T00:00:00Z",
      count: 1,
    },
  },
  { collection: "/api/v1/nodes", object: { spec: { podCIDR: "10.244.0.0/24" } }, subresources: ["status"] },
  { collection: "/api/v1/namespaces", object: {}, subresources: ["status"] },
  {
    collection: "/api/v1/persistentvolumes",
    object: {
      spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/tmp/x" } },
    },
    subresources: ["status"],
  },
  {
    collection: "/apis/apps/v1/namespaces/{ns}/deployments",
    object: { spec: { replicas: 1, selector: { matchLabels: labels }, template } },
    subresources: ["status", "scale"],
  },
  {
    collection: "/apis/apps/v1/namespaces/{ns}/replicasets",
    object: { spec: { replicas: 1, selector: { matchLabels: labels }, template } },
    subresources: ["status", "scale"],
  },
  {
    collection: "/apis/apps/v1/namespaces/{ns}/statefulsets",
    object: { spec: { replicas: 1, serviceName: "s", selector: { matchLabels: labels }, template } },
    subresources: ["status", "scale"],
  },
  {
    collection: "/apis/apps/v1/namespaces/{ns}/daemonsets",
    object: { spec: { selector: { matchLabels: labels }, template } },
    subresources: ["status"],
  },
  {
    collection: "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
    object: { revision: 1, data: { spec: { template } } },
  },
  {
    collection: "/apis/batch/v1/namespaces/{ns}/jobs",
    object: { spec: { template: { spec: { ...podSpec, restartPolicy: "Never" } } } },
    subresources: ["status"],
  },
  {
    collection: "/apis/batch/v1/namespaces/{ns}/cronjobs",
    object: {
      spec: {
        schedule: "*/5 * * * *",
        jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: "OnFailure" } } } },
      },
    },
    subresources: ["status"],
  },
  {
    collection: "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
    object: {
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
          },
        ],
      },
    },
    subresources: ["status"],
  },
  {
    collection: "/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers",
    object: {
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 70,
      },
    },
  },
  {
    collection: "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    object: { spec: { minAvailable: 1, selector: { matchLabels: labels } } },
    subresources: ["status"],
  },
  {
    collection: "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
    object: {
      spec: { holderIdentity: "me", leaseDurationSeconds: 15, renewTime: "2026-01-01T00:00:00.000000Z" },
    },
  },
  {
    collection: "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
    object: {
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    },
  },
  {
    collection: "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
    object: {
      spec: {
        rules: [
          {
            host: "example.com",
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: "web", port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
    subresources: ["status"],
  },
  {
    collection: "/apis/networking.k8s.io/v1/ingressclasses",
    object: { spec: { controller: "example.com/ingress" } },
  },
  {
    collection: "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
    object: {
      spec: {
        podSelector: { matchLabels: labels },
        policyTypes: ["Ingress"],
        ingress: [
          { from: [{ ipBlock: { cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] } }], ports: [{ port: 80 }] },
        ],
      },
    },
  },
  { collection: "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", object: { rules: [rule] } },
  {
    collection: "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    object: {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "jane" }],
    },
  },
  { collection: "/apis/rbac.authorization.k8s.io/v1/clusterroles", object: { rules: [rule] } },
  {
    collection: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    object: {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: "fuzz" }],
    },
  },
  {
    collection: "/apis/storage.k8s.io/v1/storageclasses",
    object: { provisioner: "example.com/disk", reclaimPolicy: "Delete" },
  },
  { collection: "/apis/scheduling.k8s.io/v1/priorityclasses", object: { value: 1000, description: "fuzz" } },
  {
    collection: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    object: {
      spec: {
        group: "fuzz.example.com",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        scope: "Namespaced",
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: { type: "object", properties: { size: { type: "integer", minimum: 0 } } },
                },
              },
            },
            subresources: { status: {} },
          },
        ],
      },
    },
    named: (object, name) => {
      const spec = object.spec as Record<string, unknown>;
      const kind = `Fz${name.replaceAll("-", "")}`;
      return {
        ...object,
        metadata: { ...(object.metadata as object), name: `${name}.fuzz.example.com` },
        spec: { ...spec, names: { plural: name, singular: name, kind } },
      };
    },
  },
];

/** Bodies for the reviews and the subresources that create (eviction, binding, token). */
export const reviewCorpus: ReadonlyArray<{ path: string; object: Record<string, unknown> }> = [
  {
    path: "/apis/authentication.k8s.io/v1/tokenreviews",
    object: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: "abc" } },
  },
  {
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    object: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "jane",
        groups: ["dev"],
        resourceAttributes: { verb: "get", resource: "pods", namespace: "fuzz" },
      },
    },
  },
  {
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    object: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { nonResourceAttributes: { path: "/healthz", verb: "get" } },
    },
  },
  {
    path: "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
    object: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectRulesReview",
      spec: { namespace: "fuzz" },
    },
  },
  {
    path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    object: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  },
];
