import { type Namespace, namespaces, type Pod, type PodSpec } from "@reconcile/api";
import type { Container } from "kubernetes-types/core/v1.js";
import type { AdmissionAttributes } from "../../registry/admission.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden, resourceKey } from "../plugin.js";

type Level = "privileged" | "baseline" | "restricted";
const levels: readonly Level[] = ["privileged", "baseline", "restricted"];

/** One failed check: upstream's reason and its details. */
interface Violation {
  readonly id: string;
  readonly reason: string;
  readonly detail: string;
}

type AnyContainer = Container & { restartPolicy?: string };

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(", ");
const containersWord = (names: readonly string[]) =>
  `${names.length === 1 ? "container" : "containers"} ${quoted(names)}`;

function containersOf(spec: PodSpec): AnyContainer[] {
  return [
    ...(spec.initContainers ?? []),
    ...(spec.containers ?? []),
    ...((spec.ephemeralContainers ?? []) as AnyContainer[]),
  ];
}

/** The baseline capabilities a container may add. */
const baselineCapabilities = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);
const safeSysctls = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
const restrictedVolumeSources = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

/** The baseline checks (pod-security-admission's policy/checks), by ID. */
function baselineViolations(spec: PodSpec): Violation[] {
  const out: Violation[] = [];
  const containers = containersOf(spec);
  const addedCaps: string[] = [];
  for (const c of containers) {
    const bad = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !baselineCapabilities.has(cap));
    if (bad.length > 0)
      addedCaps.push(
        `${containersWord([c.name])} must not include ${quoted(bad)} in securityContext.capabilities.add`,
      );
  }
  if (addedCaps.length > 0)
    out.push({
      id: "capabilities_baseline",
      reason: "non-default capabilities",
      detail: addedCaps.join("; "),
    });
  const hostNamespaces = [
    spec.hostNetwork ? "hostNetwork=true" : "",
    spec.hostPID ? "hostPID=true" : "",
    spec.hostIPC ? "hostIPC=true" : "",
  ].filter(Boolean);
  if (hostNamespaces.length > 0)
    out.push({ id: "hostNamespaces", reason: "host namespaces", detail: hostNamespaces.join(", ") });
  const hostPaths = (spec.volumes ?? []).filter((v) => v.hostPath !== undefined).map((v) => v.name);
  if (hostPaths.length > 0)
    out.push({
      id: "hostPathVolumes",
      reason: "hostPath volumes",
      detail: `${hostPaths.length === 1 ? "volume" : "volumes"} ${quoted(hostPaths)}`,
    });
  const portUsers: string[] = [];
  const ports: number[] = [];
  for (const c of containers) {
    const used = (c.ports ?? []).map((p) => p.hostPort ?? 0).filter((p) => p !== 0);
    if (used.length > 0) {
      portUsers.push(c.name);
      ports.push(...used);
    }
  }
  if (portUsers.length > 0)
    out.push({
      id: "hostPorts",
      reason: "hostPort",
      detail: `${containersWord(portUsers)} ${portUsers.length === 1 ? "uses" : "use"} ${ports.length === 1 ? "hostPort" : "hostPorts"} ${ports.join(", ")}`,
    });
  const privileged = containers.filter((c) => c.securityContext?.privileged === true).map((c) => c.name);
  if (privileged.length > 0)
    out.push({
      id: "privileged",
      reason: "privileged",
      detail: `${containersWord(privileged)} must not set securityContext.privileged=true`,
    });
  const unmasked = containers
    .filter((c) => (c.securityContext?.procMount ?? "Default") !== "Default")
    .map((c) => c.name);
  if (unmasked.length > 0)
    out.push({
      id: "procMount",
      reason: "procMount",
      detail: `${containersWord(unmasked)} must not set securityContext.procMount to "Unmasked"`,
    });
  const unconfined: string[] = [];
  if (spec.securityContext?.seccompProfile?.type === "Unconfined") unconfined.push("pod");
  const unconfinedContainers = containers
    .filter((c) => c.securityContext?.seccompProfile?.type === "Unconfined")
    .map((c) => c.name);
  if (unconfinedContainers.length > 0) unconfined.push(containersWord(unconfinedContainers));
  if (unconfined.length > 0)
    out.push({
      id: "seccompProfile_baseline",
      reason: "seccompProfile",
      detail: `${unconfined.join(" and ")} must not set securityContext.seccompProfile.type to "Unconfined"`,
    });
  const sysctls = (spec.securityContext?.sysctls ?? [])
    .map((s) => s.name)
    .filter((name) => !safeSysctls.has(name));
  if (sysctls.length > 0)
    out.push({ id: "sysctls", reason: "forbidden sysctls", detail: sysctls.join(", ") });
  return out;
}

/** The checks restricted adds to baseline. */
function restrictedViolations(spec: PodSpec): Violation[] {
  const out: Violation[] = [];
  const containers = containersOf(spec);
  const escalating = containers
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map((c) => c.name);
  if (escalating.length > 0)
    out.push({
      id: "allowPrivilegeEscalation",
      reason: "allowPrivilegeEscalation != false",
      detail: `${containersWord(escalating)} must set securityContext.allowPrivilegeEscalation=false`,
    });
  const notDropping = containers
    .filter((c) => !(c.securityContext?.capabilities?.drop ?? []).includes("ALL"))
    .map((c) => c.name);
  const capDetails: string[] = [];
  if (notDropping.length > 0)
    capDetails.push(`${containersWord(notDropping)} must set securityContext.capabilities.drop=["ALL"]`);
  for (const c of containers) {
    const bad = (c.securityContext?.capabilities?.add ?? []).filter((cap) => cap !== "NET_BIND_SERVICE");
    if (bad.length > 0)
      capDetails.push(
        `${containersWord([c.name])} must not include ${quoted(bad)} in securityContext.capabilities.add`,
      );
  }
  if (capDetails.length > 0)
    out.push({
      id: "capabilities_restricted",
      reason: "unrestricted capabilities",
      detail: capDetails.join("; "),
    });
  const restrictedVolumes = (spec.volumes ?? []).flatMap((v) => {
    const source = Object.keys(v).find((k) => k !== "name");
    return source !== undefined && !restrictedVolumeSources.has(source) ? [[v.name, source] as const] : [];
  });
  if (restrictedVolumes.length > 0) {
    const names = restrictedVolumes.map(([n]) => n);
    const types = [...new Set(restrictedVolumes.map(([, t]) => t))];
    out.push({
      id: "restrictedVolumes",
      reason: "restricted volume types",
      detail: `${names.length === 1 ? "volume" : "volumes"} ${quoted(names)} ${names.length === 1 ? "uses" : "use"} restricted volume ${types.length === 1 ? "type" : "types"} ${quoted(types)}`,
    });
  }
  const podNonRoot = spec.securityContext?.runAsNonRoot;
  const nonRootDetails: string[] = [];
  if (podNonRoot === false) nonRootDetails.push("pod must not set securityContext.runAsNonRoot=false");
  const explicitFalse = containers
    .filter((c) => c.securityContext?.runAsNonRoot === false)
    .map((c) => c.name);
  if (explicitFalse.length > 0)
    nonRootDetails.push(`${containersWord(explicitFalse)} must not set securityContext.runAsNonRoot=false`);
  if (podNonRoot !== true) {
    const unset = containers.filter((c) => c.securityContext?.runAsNonRoot === undefined).map((c) => c.name);
    if (unset.length > 0)
      nonRootDetails.push(`pod or ${containersWord(unset)} must set securityContext.runAsNonRoot=true`);
  }
  if (nonRootDetails.length > 0)
    out.push({ id: "runAsNonRoot", reason: "runAsNonRoot != true", detail: nonRootDetails.join("; ") });
  const rootUsers: string[] = [];
  if (spec.securityContext?.runAsUser === 0) rootUsers.push("pod");
  const rootContainers = containers.filter((c) => c.securityContext?.runAsUser === 0).map((c) => c.name);
  if (rootContainers.length > 0) rootUsers.push(containersWord(rootContainers));
  if (rootUsers.length > 0)
    out.push({
      id: "runAsUser",
      reason: "runAsUser=0",
      detail: `${rootUsers.join(" and ")} must not set runAsUser=0`,
    });
  const podSeccomp = spec.securityContext?.seccompProfile?.type;
  const allowed = (type: string | undefined) => type === "RuntimeDefault" || type === "Localhost";
  if (!allowed(podSeccomp)) {
    const unset = containers
      .filter(
        (c) =>
          !allowed(c.securityContext?.seccompProfile?.type) &&
          c.securityContext?.seccompProfile?.type !== "Unconfined",
      )
      .map((c) => c.name);
    if (unset.length > 0 && podSeccomp !== "Unconfined")
      out.push({
        id: "seccompProfile_restricted",
        reason: "seccompProfile",
        detail: `pod or ${containersWord(unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      });
  }
  return out;
}

/** The checks `level` fails for a pod spec, as upstream orders them (by check ID), or none. */
export function podSecurityViolations(level: Level, spec: PodSpec): string[] {
  if (level === "privileged") return [];
  const violations = [
    ...baselineViolations(spec),
    ...(level === "restricted" ? restrictedViolations(spec) : []),
  ];
  violations.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return violations.map((v) => `${v.reason} (${v.detail})`);
}

/** The pod template a controller kind holds, where the plugin warns (it never refuses a template). */
function templateOf(a: AdmissionAttributes): PodSpec | undefined {
  const object = a.object as
    | { spec?: { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } }
    | undefined;
  return object?.spec?.template?.spec ?? object?.spec?.jobTemplate?.spec?.template?.spec;
}

const templateKinds = new Set([
  "/podtemplates",
  "/replicationcontrollers",
  "apps/replicasets",
  "apps/deployments",
  "apps/statefulsets",
  "apps/daemonsets",
  "batch/jobs",
  "batch/cronjobs",
]);
const podKey = "/pods";

function levelOf(value: string | undefined): Level | undefined {
  return value === undefined
    ? undefined
    : (levels as readonly string[]).includes(value)
      ? (value as Level)
      : undefined;
}

/**
 * PodSecurity: a namespace's `pod-security.kubernetes.io/enforce` label
 * (`privileged`, `baseline`, `restricted`) refuses pods that fail its
 * level's checks; `warn` answers with upstream's `would violate PodSecurity`
 * warning, for pods and for the pod templates of workload kinds. Versions
 * other than `latest` are judged as `latest`.
 */
export function podSecurityPlugin(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "PodSecurity",
    resources: [podKey, ...templateKinds],
    async validate(a) {
      if (a.operation !== "CREATE" && a.operation !== "UPDATE") return;
      if (a.subresource !== "" || a.namespace === "") return;
      const key = resourceKey(a.resource);
      const spec = key === podKey ? (a.object as Pod | undefined)?.spec : templateOf(a);
      if (spec === undefined) return;
      // An update of a pod can change nothing these checks read (the spec is immutable), as upstream skips it.
      if (key === podKey && a.operation === "UPDATE") return;
      const labels = (await context.get<Namespace>(namespaces, "", a.namespace))?.metadata?.labels ?? {};
      const version = (mode: string) => labels[`pod-security.kubernetes.io/${mode}-version`] || "latest";
      const enforce = levelOf(labels["pod-security.kubernetes.io/enforce"]);
      if (key === podKey && enforce !== undefined) {
        const failed = podSecurityViolations(enforce, spec);
        if (failed.length > 0)
          throw forbidden(a, `violates PodSecurity "${enforce}:${version("enforce")}": ${failed.join(", ")}`);
      }
      const warn = levelOf(labels["pod-security.kubernetes.io/warn"]);
      if (warn !== undefined) {
        const failed = podSecurityViolations(warn, spec);
        if (failed.length > 0)
          a.warn(`would violate PodSecurity "${warn}:${version("warn")}": ${failed.join(", ")}`);
      }
    },
  };
}
