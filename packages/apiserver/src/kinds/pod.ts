import type { Container, Pod, PodSpec } from "@reconcile/api";
import { isDNS1123Label, isValidPortNum, pods, selectableFieldsOf } from "@reconcile/api";
import { hasNoMembers, jsonEqual, type Mutable } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { podBindingHandler } from "./pod-binding.js";
import { podEvictionHandler } from "./pod-eviction.js";
import { checkContainerScheduling, checkPodScheduling } from "./pod-scheduling-checks.js";
import { validateContainerCommon, validateVolumeSources } from "./pod-spec-checks.js";
import { podPrinter } from "./printers/index.js";

const restartPolicies = ["Always", "OnFailure", "Never"];
const pullPolicies = ["Always", "IfNotPresent", "Never"];
const protocols = ["TCP", "UDP", "SCTP"];
const dnsPolicies = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];

/** Pods: defaults, validation, status reset on create, graceful deletion. */
export const podStrategy: Strategy = {
  prepareForCreate(object) {
    const pod = object as Mutable<Pod>;
    // The ServiceAccount admission plugin names the account after defaulting: the alias follows it.
    const spec = pod.spec as (PodSpec & { serviceAccount?: string }) | undefined;
    if (spec?.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
    pod.status = { phase: "Pending", qosClass: qosClassOf(pod.spec) };
    // A gated pod is marked as such at creation (upstream applySchedulingGatedCondition).
    if ((pod.spec?.schedulingGates ?? []).length > 0) {
      pod.status.conditions = [
        {
          type: "PodScheduled",
          status: "False",
          reason: "SchedulingGated",
          message: "Scheduling is blocked due to non-empty scheduling gates",
        },
      ];
    }
  },
  applyDefaults(object) {
    const pod = object as Pod;
    pod.spec ??= { containers: [] };
    applyPodDefaults(pod.spec);
    applyPodSpecDefaults(pod.spec);
  },
  validate(object, errors) {
    validatePodSpec((object as Pod).spec, "spec", errors);
  },
  // A status write's spec is the stored one (the store puts it back), so it is not validated
  // again, as upstream's ValidatePodStatusUpdate does not. Upstream's checks of the status itself
  // (conditions, pod and host IPs, container state transitions) are not made.
  validateStatusUpdate() {},
  validateUpdate(object, old, errors) {
    const spec = (object as Pod).spec;
    const oldSpec = (old as Pod).spec;
    // Without containers there is nothing to compare; validate has said spec.containers is required.
    if (spec === undefined || oldSpec === undefined) return;
    if (!Array.isArray(spec.containers) || !Array.isArray(oldSpec.containers)) return;
    // Most updates (labels, annotations, status) leave the spec as it was.
    if (jsonEqual(spec, oldSpec)) return;
    // Only what kube-apiserver lets an update change: images, activeDeadlineSeconds, tolerations,
    // and (a reconcile extension standing in for the pods/binding subresource) nodeName once.
    // The members replaced below are replaced whole, so a copy of the top level does.
    const comparable = { ...spec };
    const keepImage = (c: Container, old: Container | undefined): Container => {
      const copy = { ...c };
      setOrDelete(copy, "image", old?.image);
      return copy;
    };
    comparable.containers = comparable.containers.map((c, i) => keepImage(c, oldSpec.containers[i]));
    if (comparable.initContainers) {
      comparable.initContainers = comparable.initContainers.map((c, i) =>
        keepImage(c, oldSpec.initContainers?.[i]),
      );
    }
    setOrDelete(comparable, "activeDeadlineSeconds", oldSpec.activeDeadlineSeconds);
    setOrDelete(comparable, "tolerations", oldSpec.tolerations);
    // Scheduling gates may be removed, never added (upstream validateOnlyDeletedSchedulingGates).
    setOrDelete(comparable, "schedulingGates", oldSpec.schedulingGates);
    validateOnlyDeletedSchedulingGates(spec.schedulingGates, oldSpec.schedulingGates, errors);
    if (!oldSpec.nodeName) setOrDelete(comparable, "nodeName", oldSpec.nodeName);
    if (!jsonEqual(comparable, oldSpec)) {
      errors.forbidden(
        "spec",
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.nodeName` (only to bind an unbound pod)",
      );
    }
  },
  gracePeriodSeconds(object, requested) {
    const pod = object as Pod;
    // An unscheduled pod, or one that has finished, has nothing to stop: it goes at once.
    if (!pod.spec?.nodeName) return 0;
    const phase = pod.status?.phase;
    if (phase === "Failed" || phase === "Succeeded") return 0;
    const period = requested ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    // A negative period means "immediately but gracefully": kube-apiserver turns it into 1.
    return period < 0 ? 1 : period;
  },
};

function validateOnlyDeletedSchedulingGates(
  gates: PodSpec["schedulingGates"],
  oldGates: PodSpec["schedulingGates"],
  errors: { forbidden(field: string, detail: string): void },
): void {
  // Each new name once, at its last index, as upstream's map of additions gives it.
  const added = new Map<string, number>();
  for (const [i, gate] of (gates ?? []).entries()) added.set(gate.name, i);
  for (const gate of oldGates ?? []) added.delete(gate.name);
  for (const [name, i] of [...added].sort((a, b) => a[1] - b[1])) {
    errors.forbidden(
      `spec.schedulingGates[${i}].name`,
      `only deletion is allowed, but found new scheduling gate '${name}'`,
    );
  }
}

export const podDefinition = defineKind({
  descriptor: pods,
  strategy: podStrategy,
  selectableFields: selectableFieldsOf(pods),
  printer: podPrinter,
  protobufMessage: "Pod",
  subresources: { binding: podBindingHandler, eviction: podEvictionHandler },
});

// Defaulting as kube-apiserver's generated defaulters for core/v1 (`SetObjectDefaults_Pod`,
// `SetObjectDefaults_PodTemplate`) call it: the PodSpec's own defaults, then every volume,
// container, probe, lifecycle handler and field selector inside it. A Pod also takes
// `SetDefaults_Pod`, which a template does not.

type Loose = Record<string, unknown>;

/** `SetDefaults_Pod`: what only a Pod (never a template) takes. */
export function applyPodDefaults(spec: PodSpec): void {
  // Requests default to limits, per resource, for containers and init containers.
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const limits = container.resources?.limits;
    // An empty map is written as nothing (omitempty), so it makes no requests either.
    if (limits === undefined || container.resources === undefined || hasNoMembers(limits)) continue;
    const requests = (container.resources.requests ??= {});
    for (const name in limits) if (!(name in requests)) requests[name] = limits[name]!;
  }
  spec.enableServiceLinks ??= true;
  if (spec.hostNetwork) {
    // With the host's network every container port is a host port.
    for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])])
      for (const port of container.ports ?? []) if (!port.hostPort) port.hostPort = port.containerPort;
  }
}

/** `SetDefaults_PodSpec` and the defaults of everything a PodSpec holds, for a Pod and for a template. */
export function applyPodSpecDefaults(spec: PodSpec): void {
  spec.dnsPolicy ??= "ClusterFirst";
  spec.restartPolicy ??= "Always";
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= "default-scheduler";
  // serviceAccount is the deprecated alias of serviceAccountName: read when the name is unset,
  // and written as the name (the v1 conversion of PodSpec).
  const loose = spec as PodSpec & { serviceAccount?: string };
  if (!spec.serviceAccountName && loose.serviceAccount) spec.serviceAccountName = loose.serviceAccount;
  if (spec.serviceAccountName) loose.serviceAccount = spec.serviceAccountName;
  else delete loose.serviceAccount;
  for (const volume of spec.volumes ?? []) applyVolumeDefaults(volume as unknown as Loose);
  for (const container of spec.containers ?? []) applyContainerDefaults(container);
  for (const container of spec.initContainers ?? []) applyContainerDefaults(container);
  for (const container of spec.ephemeralContainers ?? []) applyContainerDefaults(container as Container);
}

const fileModeDefault = 0o644; // 420: secret, configMap, downwardAPI and projected volumes

function applyVolumeDefaults(volume: Loose): void {
  // SetDefaults_Volume: a volume without a source is an emptyDir.
  if (Object.keys(volume).every((key) => key === "name")) volume.emptyDir = {};
  const source = (key: string) => (isLoose(volume[key]) ? (volume[key] as Loose) : undefined);
  const hostPath = source("hostPath");
  if (hostPath) hostPath.type ??= "";
  for (const key of ["secret", "configMap", "downwardAPI", "projected"]) {
    const withMode = source(key);
    if (withMode) withMode.defaultMode ??= fileModeDefault;
  }
  defaultFieldRefs(source("downwardAPI")?.items);
  const projected = source("projected");
  for (const projection of asLooseArray(projected?.sources)) {
    if (isLoose(projection.downwardAPI)) defaultFieldRefs(projection.downwardAPI.items);
    if (isLoose(projection.serviceAccountToken)) projection.serviceAccountToken.expirationSeconds ??= 3600;
  }
  const iscsi = source("iscsi");
  if (iscsi) iscsi.iscsiInterface ??= "default";
  const rbd = source("rbd");
  if (rbd) {
    rbd.pool ??= "rbd";
    rbd.user ??= "admin";
    rbd.keyring ??= "/etc/ceph/keyring";
  }
  const azureDisk = source("azureDisk");
  if (azureDisk) {
    azureDisk.cachingMode ??= "ReadWrite";
    azureDisk.fsType ??= "ext4";
    azureDisk.readOnly ??= false;
    azureDisk.kind ??= "Shared";
  }
  const scaleIO = source("scaleIO");
  if (scaleIO) {
    scaleIO.storageMode ??= "ThinProvisioned";
    scaleIO.fsType ??= "xfs";
  }
  const claimTemplate = source("ephemeral")?.volumeClaimTemplate;
  if (isLoose(claimTemplate) && isLoose(claimTemplate.spec)) claimTemplate.spec.volumeMode ??= "Filesystem";
}

/** `SetDefaults_Container` and the generated defaults of its ports, env, probes and lifecycle handlers. */
function applyContainerDefaults(container: Container): void {
  container.imagePullPolicy ??= imageTagIsLatest(container.image) ? "Always" : "IfNotPresent";
  container.terminationMessagePath ??= "/dev/termination-log";
  container.terminationMessagePolicy ??= "File";
  for (const port of container.ports ?? []) port.protocol ??= "TCP";
  container.resources ??= {};
  for (const env of container.env ?? []) {
    const fieldRef = env.valueFrom?.fieldRef;
    if (fieldRef !== undefined) fieldRef.apiVersion ??= "v1";
  }
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
    if (!isLoose(probe)) continue;
    // SetDefaults_Probe: a zero is unset, as Go's int32 fields cannot tell them apart.
    if (!probe.timeoutSeconds) probe.timeoutSeconds = 1;
    if (!probe.periodSeconds) probe.periodSeconds = 10;
    if (!probe.successThreshold) probe.successThreshold = 1;
    if (!probe.failureThreshold) probe.failureThreshold = 3;
    applyHandlerDefaults(probe as Loose);
    if (isLoose(probe.grpc)) probe.grpc.service ??= "";
  }
  const lifecycle = container.lifecycle as Loose | undefined;
  for (const hook of [lifecycle?.postStart, lifecycle?.preStop])
    if (isLoose(hook)) applyHandlerDefaults(hook);
}

/** `SetDefaults_HTTPGetAction`. */
function applyHandlerDefaults(handler: Loose): void {
  const httpGet = handler.httpGet;
  if (!isLoose(httpGet)) return;
  if (!httpGet.path) httpGet.path = "/";
  if (!httpGet.scheme) httpGet.scheme = "HTTP";
}

/** `SetDefaults_ObjectFieldSelector` for each item's fieldRef. */
function defaultFieldRefs(items: unknown): void {
  for (const item of asLooseArray(items)) if (isLoose(item.fieldRef)) item.fieldRef.apiVersion ??= "v1";
}

function isLoose(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asLooseArray(value: unknown): Loose[] {
  return Array.isArray(value) ? value.filter(isLoose) : [];
}

/** Pull "Always" for `:latest` or no tag at all (a digest counts as a tag), as upstream defaults it. */
function imageTagIsLatest(image: string | undefined): boolean {
  if (!image) return true;
  if (image.includes("@")) return false;
  const lastSlash = image.lastIndexOf("/");
  const colon = image.indexOf(":", lastSlash + 1);
  return colon === -1 || image.slice(colon + 1) === "latest";
}

/** `ValidatePodSpec` for the fields reconcile uses. `path` is `spec` or `spec.template.spec`. */
export function validatePodSpec(spec: PodSpec | undefined, path: string, errors: FieldErrors): void {
  if (spec === undefined) {
    errors.required(path);
    return;
  }
  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((volume, i) => {
    if (!volume.name) errors.required(`${path}.volumes[${i}].name`);
    else if (volumes.has(volume.name)) errors.duplicate(`${path}.volumes[${i}].name`, volume.name);
    volumes.add(volume.name);
  });
  validateVolumeSources(spec.volumes ?? [], `${path}.volumes`, errors);
  if (!spec.containers || spec.containers.length === 0) errors.required(`${path}.containers`);
  const names = new Set<string>();
  const check = (containers: Container[] | undefined, field: string) => {
    (containers ?? []).forEach((container, i) => {
      const at = `${path}.${field}[${i}]`;
      if (!container.name) errors.required(`${at}.name`);
      else {
        for (const problem of isDNS1123Label(container.name))
          errors.invalid(`${at}.name`, container.name, problem);
        if (names.has(container.name)) errors.duplicate(`${at}.name`, container.name);
        names.add(container.name);
      }
      if (!container.image) errors.required(`${at}.image`);
      (container.ports ?? []).forEach((port, j) => {
        const portPath = `${at}.ports[${j}]`;
        for (const problem of isValidPortNum(port.containerPort))
          errors.invalid(`${portPath}.containerPort`, port.containerPort, problem);
        if (port.protocol !== undefined && !protocols.includes(port.protocol))
          errors.notSupported(`${portPath}.protocol`, port.protocol, protocols);
      });
      checkContainerScheduling(errors, at, container);
      validateContainerCommon(container, at, volumes, errors);
      if (container.imagePullPolicy !== undefined && !pullPolicies.includes(container.imagePullPolicy))
        errors.notSupported(`${at}.imagePullPolicy`, container.imagePullPolicy, pullPolicies);
    });
  };
  check(spec.containers, "containers");
  check(spec.initContainers, "initContainers");
  if (spec.restartPolicy !== undefined && !restartPolicies.includes(spec.restartPolicy))
    errors.notSupported(`${path}.restartPolicy`, spec.restartPolicy, restartPolicies);
  if (spec.dnsPolicy !== undefined && !dnsPolicies.includes(spec.dnsPolicy))
    errors.notSupported(`${path}.dnsPolicy`, spec.dnsPolicy, dnsPolicies);
  checkPodScheduling(errors, path, spec);
  if (spec.terminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds < 0)
    errors.invalid(
      `${path}.terminationGracePeriodSeconds`,
      spec.terminationGracePeriodSeconds,
      "must be greater than or equal to 0",
    );
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds <= 0)
    errors.invalid(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, "must be greater than 0");
}

/** `GetPodQOS`, simplified to cpu and memory. */
function qosClassOf(spec: PodSpec | undefined): string {
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const container of containers) {
    const requests = container.resources?.requests ?? {};
    const limits = container.resources?.limits ?? {};
    if (!hasNoMembers(requests) || !hasNoMembers(limits)) any = true;
    for (const name of ["cpu", "memory"]) {
      const limit = limits[name];
      const request = requests[name] ?? limit;
      if (limit === undefined || String(request) !== String(limit)) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

function setOrDelete<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}
