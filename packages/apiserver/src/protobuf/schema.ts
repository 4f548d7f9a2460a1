/**
 * Field tables of the Kubernetes protobuf messages the server decodes: the
 * kinds kubectl's imperative generators send (`create namespace|deployment|
 * service|configmap|secret|job`) and every message nested in them. Field
 * numbers and types are those of k8s.io/api and k8s.io/apimachinery's
 * `generated.proto`; JSON names are the Go structs' `json` tags.
 *
 * Fields not listed are skipped, as protobuf skips unknown fields.
 */

export type ScalarType = "string" | "int32" | "int64" | "bool" | "bytes";

/**
 * Well-known messages with a JSON form of their own: `Time` is an RFC 3339
 * string, `IntOrString` a number or a string, `Quantity` a string.
 */
export type SpecialMessage = "Time" | "IntOrString" | "Quantity";

export type FieldType =
  | { scalar: ScalarType }
  | { message: string }
  | { special: SpecialMessage }
  | { mapOf: ScalarType | SpecialMessage };

export interface FieldSpec {
  /** The JSON name. */
  readonly name: string;
  readonly type: FieldType;
  readonly repeated?: boolean;
  /**
   * A Go pointer field: its zero value is meaningful (`replicas: 0`) and kept.
   * Other scalars are dropped when zero, as `omitempty` drops them in JSON.
   */
  readonly pointer?: boolean;
  /** Embedded with `json:",inline"`: its fields join the parent's. */
  readonly inline?: boolean;
}

export type MessageSchema = Readonly<Record<number, FieldSpec>>;

interface Flags {
  repeated?: boolean;
  pointer?: boolean;
  inline?: boolean;
}

const REPEATED: Flags = { repeated: true };
const POINTER: Flags = { pointer: true };
const INLINE: Flags = { inline: true };

const str = (name: string, flags: Flags = {}): FieldSpec => ({ name, type: { scalar: "string" }, ...flags });
const i32 = (name: string, flags: Flags = {}): FieldSpec => ({ name, type: { scalar: "int32" }, ...flags });
const i64 = (name: string, flags: Flags = {}): FieldSpec => ({ name, type: { scalar: "int64" }, ...flags });
const bool = (name: string, flags: Flags = {}): FieldSpec => ({ name, type: { scalar: "bool" }, ...flags });
const msg = (name: string, message: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { message },
  ...flags,
});
const time = (name: string): FieldSpec => ({ name, type: { special: "Time" } });
const intOrString = (name: string): FieldSpec => ({ name, type: { special: "IntOrString" } });
const quantity = (name: string): FieldSpec => ({ name, type: { special: "Quantity" } });
const mapOf = (name: string, value: ScalarType | SpecialMessage): FieldSpec => ({
  name,
  type: { mapOf: value },
});

/** Every message the decoder knows, by name. */
export const messages: Readonly<Record<string, MessageSchema>> = {
  // k8s.io/apimachinery/pkg/runtime
  Unknown: {
    1: msg("typeMeta", "RuntimeTypeMeta"),
    2: { name: "raw", type: { scalar: "bytes" } },
    3: str("contentEncoding"),
    4: str("contentType"),
  },
  RuntimeTypeMeta: { 1: str("apiVersion"), 2: str("kind") },

  // k8s.io/apimachinery/pkg/apis/meta/v1
  ObjectMeta: {
    1: str("name"),
    2: str("generateName"),
    3: str("namespace"),
    4: str("selfLink"),
    5: str("uid"),
    6: str("resourceVersion"),
    7: i64("generation"),
    8: time("creationTimestamp"),
    9: time("deletionTimestamp"),
    10: i64("deletionGracePeriodSeconds", POINTER),
    11: mapOf("labels", "string"),
    12: mapOf("annotations", "string"),
    13: msg("ownerReferences", "OwnerReference", REPEATED),
    14: str("finalizers", REPEATED),
  },
  OwnerReference: {
    5: str("apiVersion"),
    1: str("kind"),
    3: str("name"),
    4: str("uid"),
    6: bool("controller", POINTER),
    7: bool("blockOwnerDeletion", POINTER),
  },
  LabelSelector: {
    1: mapOf("matchLabels", "string"),
    2: msg("matchExpressions", "LabelSelectorRequirement", REPEATED),
  },
  LabelSelectorRequirement: { 1: str("key"), 2: str("operator"), 3: str("values", REPEATED) },
  Condition: {
    1: str("type"),
    2: str("status"),
    3: i64("observedGeneration"),
    4: time("lastTransitionTime"),
    5: str("reason"),
    6: str("message"),
  },

  // k8s.io/api/core/v1
  Namespace: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "NamespaceSpec"),
    3: msg("status", "NamespaceStatus"),
  },
  NamespaceSpec: { 1: str("finalizers", REPEATED) },
  NamespaceStatus: { 1: str("phase"), 2: msg("conditions", "NamespaceCondition", REPEATED) },
  NamespaceCondition: {
    1: str("type"),
    2: str("status"),
    4: time("lastTransitionTime"),
    5: str("reason"),
    6: str("message"),
  },
  Pod: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "PodSpec"), 3: msg("status", "PodStatus") },
  PodTemplateSpec: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "PodSpec") },
  PodSpec: {
    1: msg("volumes", "Volume", REPEATED),
    20: msg("initContainers", "Container", REPEATED),
    2: msg("containers", "Container", REPEATED),
    3: str("restartPolicy"),
    4: i64("terminationGracePeriodSeconds", POINTER),
    5: i64("activeDeadlineSeconds", POINTER),
    6: str("dnsPolicy"),
    7: mapOf("nodeSelector", "string"),
    8: str("serviceAccountName"),
    9: str("serviceAccount"),
    21: bool("automountServiceAccountToken", POINTER),
    10: str("nodeName"),
    11: bool("hostNetwork"),
    12: bool("hostPID"),
    13: bool("hostIPC"),
    27: bool("shareProcessNamespace", POINTER),
    15: msg("imagePullSecrets", "LocalObjectReference", REPEATED),
    16: str("hostname"),
    17: str("subdomain"),
    19: str("schedulerName"),
    22: msg("tolerations", "Toleration", REPEATED),
    24: str("priorityClassName"),
    25: i32("priority", POINTER),
    29: str("runtimeClassName"),
    30: bool("enableServiceLinks", POINTER),
    31: str("preemptionPolicy"),
    35: bool("setHostnameAsFQDN", POINTER),
    37: bool("hostUsers", POINTER),
  },
  PodStatus: {
    1: str("phase"),
    2: msg("conditions", "PodCondition", REPEATED),
    3: str("message"),
    4: str("reason"),
    11: str("nominatedNodeName"),
    5: str("hostIP"),
    6: str("podIP"),
    7: time("startTime"),
    9: str("qosClass"),
  },
  PodCondition: {
    1: str("type"),
    2: str("status"),
    3: time("lastProbeTime"),
    4: time("lastTransitionTime"),
    5: str("reason"),
    6: str("message"),
  },
  Container: {
    1: str("name"),
    2: str("image"),
    3: str("command", REPEATED),
    4: str("args", REPEATED),
    5: str("workingDir"),
    6: msg("ports", "ContainerPort", REPEATED),
    19: msg("envFrom", "EnvFromSource", REPEATED),
    7: msg("env", "EnvVar", REPEATED),
    8: msg("resources", "ResourceRequirements"),
    23: msg("resizePolicy", "ContainerResizePolicy", REPEATED),
    24: str("restartPolicy"),
    9: msg("volumeMounts", "VolumeMount", REPEATED),
    10: msg("livenessProbe", "Probe"),
    11: msg("readinessProbe", "Probe"),
    22: msg("startupProbe", "Probe"),
    13: str("terminationMessagePath"),
    20: str("terminationMessagePolicy"),
    14: str("imagePullPolicy"),
    16: bool("stdin"),
    17: bool("stdinOnce"),
    18: bool("tty"),
  },
  ContainerPort: {
    1: str("name"),
    2: i32("hostPort"),
    3: i32("containerPort"),
    4: str("protocol"),
    5: str("hostIP"),
  },
  ContainerResizePolicy: { 1: str("resourceName"), 2: str("restartPolicy") },
  EnvVar: { 1: str("name"), 2: str("value"), 3: msg("valueFrom", "EnvVarSource") },
  EnvVarSource: {
    1: msg("fieldRef", "ObjectFieldSelector"),
    2: msg("resourceFieldRef", "ResourceFieldSelector"),
    3: msg("configMapKeyRef", "ConfigMapKeySelector"),
    4: msg("secretKeyRef", "SecretKeySelector"),
  },
  ObjectFieldSelector: { 1: str("apiVersion"), 2: str("fieldPath") },
  ResourceFieldSelector: { 1: str("containerName"), 2: str("resource"), 3: quantity("divisor") },
  ConfigMapKeySelector: {
    1: msg("localObjectReference", "LocalObjectReference", INLINE),
    2: str("key"),
    3: bool("optional", POINTER),
  },
  SecretKeySelector: {
    1: msg("localObjectReference", "LocalObjectReference", INLINE),
    2: str("key"),
    3: bool("optional", POINTER),
  },
  EnvFromSource: {
    1: str("prefix"),
    2: msg("configMapRef", "ConfigMapEnvSource"),
    3: msg("secretRef", "SecretEnvSource"),
  },
  ConfigMapEnvSource: {
    1: msg("localObjectReference", "LocalObjectReference", INLINE),
    2: bool("optional", POINTER),
  },
  SecretEnvSource: {
    1: msg("localObjectReference", "LocalObjectReference", INLINE),
    2: bool("optional", POINTER),
  },
  LocalObjectReference: { 1: str("name") },
  ResourceRequirements: {
    1: mapOf("limits", "Quantity"),
    2: mapOf("requests", "Quantity"),
    3: msg("claims", "ResourceClaim", REPEATED),
  },
  ResourceClaim: { 1: str("name"), 2: str("request") },
  VolumeMount: {
    1: str("name"),
    2: bool("readOnly"),
    7: str("recursiveReadOnly"),
    3: str("mountPath"),
    4: str("subPath"),
    5: str("mountPropagation"),
    6: str("subPathExpr"),
  },
  Volume: { 1: str("name"), 2: msg("volumeSource", "VolumeSource", INLINE) },
  VolumeSource: {
    1: msg("hostPath", "HostPathVolumeSource"),
    2: msg("emptyDir", "EmptyDirVolumeSource"),
    6: msg("secret", "SecretVolumeSource"),
    10: msg("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource"),
    19: msg("configMap", "ConfigMapVolumeSource"),
  },
  HostPathVolumeSource: { 1: str("path"), 2: str("type", POINTER) },
  EmptyDirVolumeSource: { 1: str("medium"), 2: quantity("sizeLimit") },
  SecretVolumeSource: {
    1: str("secretName"),
    2: msg("items", "KeyToPath", REPEATED),
    3: i32("defaultMode", POINTER),
    4: bool("optional", POINTER),
  },
  ConfigMapVolumeSource: {
    1: msg("localObjectReference", "LocalObjectReference", INLINE),
    2: msg("items", "KeyToPath", REPEATED),
    3: i32("defaultMode", POINTER),
    4: bool("optional", POINTER),
  },
  KeyToPath: { 1: str("key"), 2: str("path"), 3: i32("mode", POINTER) },
  PersistentVolumeClaimVolumeSource: { 1: str("claimName"), 2: bool("readOnly") },
  Probe: {
    1: msg("handler", "ProbeHandler", INLINE),
    2: i32("initialDelaySeconds"),
    3: i32("timeoutSeconds"),
    4: i32("periodSeconds"),
    5: i32("successThreshold"),
    6: i32("failureThreshold"),
    7: i64("terminationGracePeriodSeconds", POINTER),
  },
  ProbeHandler: {
    1: msg("exec", "ExecAction"),
    2: msg("httpGet", "HTTPGetAction"),
    3: msg("tcpSocket", "TCPSocketAction"),
  },
  ExecAction: { 1: str("command", REPEATED) },
  HTTPGetAction: {
    1: str("path"),
    2: intOrString("port"),
    3: str("host"),
    4: str("scheme"),
    5: msg("httpHeaders", "HTTPHeader", REPEATED),
  },
  HTTPHeader: { 1: str("name"), 2: str("value") },
  TCPSocketAction: { 1: intOrString("port"), 2: str("host") },
  Toleration: {
    1: str("key"),
    2: str("operator"),
    3: str("value"),
    4: str("effect"),
    5: i64("tolerationSeconds", POINTER),
  },
  Service: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "ServiceSpec"),
    3: msg("status", "ServiceStatus"),
  },
  ServiceSpec: {
    1: msg("ports", "ServicePort", REPEATED),
    2: mapOf("selector", "string"),
    3: str("clusterIP"),
    18: str("clusterIPs", REPEATED),
    4: str("type"),
    5: str("externalIPs", REPEATED),
    7: str("sessionAffinity"),
    8: str("loadBalancerIP"),
    9: str("loadBalancerSourceRanges", REPEATED),
    10: str("externalName"),
    11: str("externalTrafficPolicy"),
    12: i32("healthCheckNodePort"),
    13: bool("publishNotReadyAddresses"),
    14: msg("sessionAffinityConfig", "SessionAffinityConfig"),
    19: str("ipFamilies", REPEATED),
    17: str("ipFamilyPolicy"),
    20: bool("allocateLoadBalancerNodePorts", POINTER),
    21: str("loadBalancerClass"),
    22: str("internalTrafficPolicy"),
    23: str("trafficDistribution"),
  },
  ServicePort: {
    1: str("name"),
    2: str("protocol"),
    6: str("appProtocol"),
    3: i32("port"),
    4: intOrString("targetPort"),
    5: i32("nodePort"),
  },
  SessionAffinityConfig: { 1: msg("clientIP", "ClientIPConfig") },
  ClientIPConfig: { 1: i32("timeoutSeconds", POINTER) },
  ServiceStatus: {
    1: msg("loadBalancer", "LoadBalancerStatus"),
    2: msg("conditions", "Condition", REPEATED),
  },
  LoadBalancerStatus: { 1: msg("ingress", "LoadBalancerIngress", REPEATED) },
  LoadBalancerIngress: {
    1: str("ip"),
    2: str("hostname"),
    3: str("ipMode"),
    4: msg("ports", "PortStatus", REPEATED),
  },
  PortStatus: { 1: i32("port"), 2: str("protocol"), 3: str("error") },
  ConfigMap: {
    1: msg("metadata", "ObjectMeta"),
    4: bool("immutable", POINTER),
    2: mapOf("data", "string"),
    3: mapOf("binaryData", "bytes"),
  },
  Secret: {
    1: msg("metadata", "ObjectMeta"),
    5: bool("immutable", POINTER),
    2: mapOf("data", "bytes"),
    4: mapOf("stringData", "string"),
    3: str("type"),
  },

  // k8s.io/api/apps/v1
  Deployment: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "DeploymentSpec"),
    3: msg("status", "DeploymentStatus"),
  },
  DeploymentSpec: {
    1: i32("replicas", POINTER),
    2: msg("selector", "LabelSelector"),
    3: msg("template", "PodTemplateSpec"),
    4: msg("strategy", "DeploymentStrategy"),
    5: i32("minReadySeconds"),
    6: i32("revisionHistoryLimit", POINTER),
    7: bool("paused"),
    9: i32("progressDeadlineSeconds", POINTER),
  },
  DeploymentStrategy: { 1: str("type"), 2: msg("rollingUpdate", "RollingUpdateDeployment") },
  RollingUpdateDeployment: { 1: intOrString("maxUnavailable"), 2: intOrString("maxSurge") },
  DeploymentStatus: {
    1: i64("observedGeneration"),
    2: i32("replicas"),
    3: i32("updatedReplicas"),
    7: i32("readyReplicas"),
    4: i32("availableReplicas"),
    5: i32("unavailableReplicas"),
    9: i32("terminatingReplicas", POINTER),
    6: msg("conditions", "DeploymentCondition", REPEATED),
    8: i32("collisionCount", POINTER),
  },
  DeploymentCondition: {
    1: str("type"),
    2: str("status"),
    6: time("lastUpdateTime"),
    7: time("lastTransitionTime"),
    4: str("reason"),
    5: str("message"),
  },

  // k8s.io/api/batch/v1
  Job: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "JobSpec"), 3: msg("status", "JobStatus") },
  JobSpec: {
    1: i32("parallelism", POINTER),
    2: i32("completions", POINTER),
    3: i64("activeDeadlineSeconds", POINTER),
    7: i32("backoffLimit", POINTER),
    12: i32("backoffLimitPerIndex", POINTER),
    13: i32("maxFailedIndexes", POINTER),
    4: msg("selector", "LabelSelector"),
    5: bool("manualSelector", POINTER),
    6: msg("template", "PodTemplateSpec"),
    8: i32("ttlSecondsAfterFinished", POINTER),
    9: str("completionMode"),
    10: bool("suspend", POINTER),
    14: str("podReplacementPolicy"),
    15: str("managedBy"),
  },
  JobStatus: {
    1: msg("conditions", "JobCondition", REPEATED),
    2: time("startTime"),
    3: time("completionTime"),
    4: i32("active"),
    5: i32("succeeded"),
    6: i32("failed"),
    11: i32("terminating", POINTER),
    7: str("completedIndexes"),
    10: str("failedIndexes", POINTER),
    9: i32("ready", POINTER),
  },
  JobCondition: {
    1: str("type"),
    2: str("status"),
    3: time("lastProbeTime"),
    4: time("lastTransitionTime"),
    5: str("reason"),
    6: str("message"),
  },
};

/** The top-level message of each kind the decoder accepts, by `apiVersion` and `kind`. */
export const kindMessages: Readonly<Record<string, string>> = {
  "v1/Namespace": "Namespace",
  "v1/Pod": "Pod",
  "v1/Service": "Service",
  "v1/ConfigMap": "ConfigMap",
  "v1/Secret": "Secret",
  "apps/v1/Deployment": "Deployment",
  "batch/v1/Job": "Job",
};
