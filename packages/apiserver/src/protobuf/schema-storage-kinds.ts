import {
  bool,
  bytes,
  INLINE,
  i32,
  i64,
  intOrString,
  type MessageSchema,
  mapOf,
  msg,
  POINTER,
  REPEATED,
  str,
  time,
} from "./schema-fields.js";

/**
 * Messages of the kinds served as storage only that kubectl's generators send
 * as protobuf (`create serviceaccount|quota|role|clusterrole|rolebinding|
 * clusterrolebinding|cronjob|ingress|poddisruptionbudget|priorityclass`), from
 * k8s.io/api's core/v1, rbac/v1, batch/v1, networking/v1, policy/v1 and
 * scheduling/v1 `generated.proto`.
 */
export const storageKindMessages: Readonly<Record<string, MessageSchema>> = {
  // core/v1
  ServiceAccount: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("secrets", "ObjectReference", REPEATED),
    3: msg("imagePullSecrets", "LocalObjectReference", REPEATED),
    4: bool("automountServiceAccountToken", POINTER),
  },
  ObjectReference: {
    1: str("kind"),
    2: str("namespace"),
    3: str("name"),
    4: str("uid"),
    5: str("apiVersion"),
    6: str("resourceVersion"),
    7: str("fieldPath"),
  },
  TypedLocalObjectReference: { 1: str("apiGroup", POINTER), 2: str("kind"), 3: str("name") },
  ResourceQuota: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "ResourceQuotaSpec"),
    3: msg("status", "ResourceQuotaStatus"),
  },
  ResourceQuotaSpec: {
    1: mapOf("hard", "Quantity"),
    2: str("scopes", REPEATED),
    3: msg("scopeSelector", "ScopeSelector"),
  },
  ScopeSelector: { 1: msg("matchExpressions", "ScopedResourceSelectorRequirement", REPEATED) },
  ScopedResourceSelectorRequirement: { 1: str("scopeName"), 2: str("operator"), 3: str("values", REPEATED) },
  ResourceQuotaStatus: { 1: mapOf("hard", "Quantity"), 2: mapOf("used", "Quantity") },

  // rbac/v1
  Role: { 1: msg("metadata", "ObjectMeta"), 2: msg("rules", "PolicyRule", REPEATED) },
  ClusterRole: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("rules", "PolicyRule", REPEATED),
    3: msg("aggregationRule", "AggregationRule"),
  },
  AggregationRule: { 1: msg("clusterRoleSelectors", "LabelSelector", REPEATED) },
  PolicyRule: {
    1: str("verbs", REPEATED),
    2: str("apiGroups", REPEATED),
    3: str("resources", REPEATED),
    4: str("resourceNames", REPEATED),
    5: str("nonResourceURLs", REPEATED),
  },
  RoleBinding: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("subjects", "Subject", REPEATED),
    3: msg("roleRef", "RoleRef"),
  },
  ClusterRoleBinding: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("subjects", "Subject", REPEATED),
    3: msg("roleRef", "RoleRef"),
  },
  Subject: { 1: str("kind"), 2: str("apiGroup"), 3: str("name"), 4: str("namespace") },
  RoleRef: { 1: str("apiGroup"), 2: str("kind"), 3: str("name") },

  // batch/v1
  CronJob: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "CronJobSpec"),
    3: msg("status", "CronJobStatus"),
  },
  CronJobSpec: {
    1: str("schedule"),
    8: str("timeZone", POINTER),
    2: i64("startingDeadlineSeconds", POINTER),
    3: str("concurrencyPolicy"),
    4: bool("suspend", POINTER),
    5: msg("jobTemplate", "JobTemplateSpec"),
    6: i32("successfulJobsHistoryLimit", POINTER),
    7: i32("failedJobsHistoryLimit", POINTER),
  },
  JobTemplateSpec: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "JobSpec") },
  CronJobStatus: {
    1: msg("active", "ObjectReference", REPEATED),
    4: time("lastScheduleTime"),
    5: time("lastSuccessfulTime"),
  },

  // networking/v1
  Ingress: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "IngressSpec"),
    3: msg("status", "IngressStatus"),
  },
  IngressSpec: {
    4: str("ingressClassName", POINTER),
    1: msg("defaultBackend", "IngressBackend"),
    2: msg("tls", "IngressTLS", REPEATED),
    3: msg("rules", "IngressRule", REPEATED),
  },
  IngressBackend: {
    4: msg("service", "IngressServiceBackend"),
    3: msg("resource", "TypedLocalObjectReference"),
  },
  IngressServiceBackend: { 1: str("name"), 2: msg("port", "ServiceBackendPort") },
  ServiceBackendPort: { 1: str("name"), 2: i32("number") },
  IngressTLS: { 1: str("hosts", REPEATED), 2: str("secretName") },
  IngressRule: { 1: str("host"), 2: msg("ingressRuleValue", "IngressRuleValue", INLINE) },
  IngressRuleValue: { 1: msg("http", "HTTPIngressRuleValue") },
  HTTPIngressRuleValue: { 1: msg("paths", "HTTPIngressPath", REPEATED) },
  HTTPIngressPath: { 1: str("path"), 3: str("pathType", POINTER), 2: msg("backend", "IngressBackend") },
  IngressStatus: { 1: msg("loadBalancer", "IngressLoadBalancerStatus") },
  IngressLoadBalancerStatus: { 1: msg("ingress", "IngressLoadBalancerIngress", REPEATED) },
  IngressLoadBalancerIngress: {
    1: str("ip"),
    2: str("hostname"),
    4: msg("ports", "IngressPortStatus", REPEATED),
  },
  IngressPortStatus: { 1: i32("port"), 2: str("protocol"), 3: str("error", POINTER) },

  // autoscaling/v1 (what `kubectl autoscale` sends)
  HorizontalPodAutoscalerV1: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "HorizontalPodAutoscalerSpecV1"),
    3: msg("status", "HorizontalPodAutoscalerStatusV1"),
  },
  HorizontalPodAutoscalerSpecV1: {
    1: msg("scaleTargetRef", "CrossVersionObjectReference"),
    2: i32("minReplicas", POINTER),
    3: i32("maxReplicas"),
    4: i32("targetCPUUtilizationPercentage", POINTER),
  },
  CrossVersionObjectReference: { 1: str("kind"), 2: str("name"), 3: str("apiVersion") },
  HorizontalPodAutoscalerStatusV1: {
    1: i64("observedGeneration", POINTER),
    2: time("lastScaleTime"),
    3: i32("currentReplicas"),
    4: i32("desiredReplicas"),
    5: i32("currentCPUUtilizationPercentage", POINTER),
  },

  // policy/v1
  PodDisruptionBudget: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "PodDisruptionBudgetSpec"),
    3: msg("status", "PodDisruptionBudgetStatus"),
  },
  PodDisruptionBudgetSpec: {
    1: intOrString("minAvailable"),
    2: msg("selector", "LabelSelector"),
    3: intOrString("maxUnavailable"),
  },
  PodDisruptionBudgetStatus: {
    1: i64("observedGeneration"),
    2: mapOf("disruptedPods", "Time"),
    3: i32("disruptionsAllowed"),
    4: i32("currentHealthy"),
    5: i32("desiredHealthy"),
    6: i32("expectedPods"),
    7: msg("conditions", "Condition", REPEATED),
  },

  // certificates/v1 (`kubectl certificate approve|deny` writes the whole request back)
  CertificateSigningRequest: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "CertificateSigningRequestSpec"),
    3: msg("status", "CertificateSigningRequestStatus"),
  },
  CertificateSigningRequestSpec: {
    1: bytes("request"),
    7: str("signerName"),
    8: i32("expirationSeconds", POINTER),
    5: str("usages", REPEATED),
    2: str("username"),
    3: str("uid"),
    4: str("groups", REPEATED),
    // 6, `extra`, is skipped: the server sets it from the requester on create and keeps it after.
  },
  CertificateSigningRequestStatus: {
    1: msg("conditions", "CertificateSigningRequestCondition", REPEATED),
    2: bytes("certificate"),
  },
  CertificateSigningRequestCondition: {
    1: str("type"),
    6: str("status"),
    2: str("reason"),
    3: str("message"),
    4: time("lastUpdateTime"),
    5: time("lastTransitionTime"),
  },

  // scheduling/v1
  PriorityClass: {
    1: msg("metadata", "ObjectMeta"),
    2: i32("value"),
    3: bool("globalDefault"),
    4: str("description"),
    5: str("preemptionPolicy", POINTER),
  },
};
