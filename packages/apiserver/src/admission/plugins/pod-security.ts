import { type Namespace, namespaces, type Pod, type PodSpec } from "@reconcile/api";
import type { Container } from "kubernetes-types/core/v1.js";
import type { AdmissionAttributes } from "../../registry/admission.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden, resourceKey, whenKnown } from "../plugin.js";

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
/** The sysctls baseline allows, with the minor version of 1.x that first allows each. */
const safeSysctls: ReadonlyArray<readonly [name: string, since: number]> = [
  ["kernel.shm_rmid_forced", 0],
  ["net.ipv4.ip_local_port_range", 0],
  ["net.ipv4.ip_unprivileged_port_start", 0],
  ["net.ipv4.tcp_syncookies", 0],
  ["net.ipv4.ping_group_range", 0],
  ["net.ipv4.ip_local_reserved_ports", 27],
  ["net.ipv4.tcp_keepalive_time", 29],
  ["net.ipv4.tcp_fin_timeout", 29],
  ["net.ipv4.tcp_keepalive_intvl", 29],
  ["net.ipv4.tcp_keepalive_probes", 29],
  ["net.ipv4.tcp_rmem", 32],
  ["net.ipv4.tcp_wmem", 32],
];
/** The SELinux types baseline allows ("" is unset), with the minor version that first allows each. */
const seLinuxTypes: ReadonlyArray<readonly [type: string, since: number]> = [
  ["", 0],
  ["container_t", 0],
  ["container_init_t", 0],
  ["container_kvm_t", 0],
  ["container_engine_t", 31],
];
const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/";
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

/** `pod and containers "a", "b"`: who set a forbidden value. */
function setters(pod: boolean, containers: readonly string[], extra: readonly string[] = []): string {
  const who = pod ? ["pod"] : [];
  if (containers.length > 0) who.push(containersWord(containers));
  return [...who, ...extra].join(" and ");
}

/** appArmorProfile: profile types and the deprecated annotations may only name the runtime's default or a local profile. */
function appArmorViolation(
  spec: PodSpec,
  containers: readonly AnyContainer[],
  annotations: Readonly<Record<string, string>>,
): Violation | undefined {
  const allowedType = (type: string | undefined) => type === "RuntimeDefault" || type === "Localhost";
  const badValues = new Set<string>();
  const podType = (spec.securityContext as { appArmorProfile?: { type?: string } } | undefined)
    ?.appArmorProfile;
  const pod = podType !== undefined && !allowedType(podType.type);
  if (pod) badValues.add(podType.type ?? "");
  const bad: string[] = [];
  for (const c of containers) {
    const profile = (c.securityContext as { appArmorProfile?: { type?: string } } | undefined)
      ?.appArmorProfile;
    if (profile !== undefined && !allowedType(profile.type)) {
      bad.push(c.name);
      badValues.add(profile.type ?? "");
    }
  }
  const values = [...badValues].sort();
  const forbiddenAnnotations = Object.entries(annotations)
    .filter(
      ([key, value]) =>
        key.startsWith(appArmorAnnotationPrefix) &&
        value !== "" &&
        value !== "runtime/default" &&
        !value.startsWith("localhost/"),
    )
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .sort();
  values.push(...forbiddenAnnotations);
  const extra =
    forbiddenAnnotations.length === 0
      ? []
      : [forbiddenAnnotations.length === 1 ? "annotation" : "annotations"];
  if (!pod && bad.length === 0 && extra.length === 0) return undefined;
  return {
    id: "appArmorProfile",
    reason: values.length === 1 ? "forbidden AppArmor profile" : "forbidden AppArmor profiles",
    detail: `${setters(pod, bad, extra)} must not set AppArmor profile type to ${quoted(values)}`,
  };
}

/** seLinuxOptions: only the container types, and neither user nor role. */
function seLinuxViolation(
  spec: PodSpec,
  containers: readonly AnyContainer[],
  minor: number,
): Violation | undefined {
  const allowed = new Set(seLinuxTypes.filter(([, since]) => minor >= since).map(([type]) => type));
  const badTypes = new Set<string>();
  let user = false;
  let role = false;
  const valid = (options: { type?: string; user?: string; role?: string } | undefined): boolean => {
    if (options === undefined) return true;
    const typeAllowed = allowed.has(options.type ?? "");
    if (!typeAllowed) badTypes.add(options.type ?? "");
    if (options.user) user = true;
    if (options.role) role = true;
    return typeAllowed && !options.user && !options.role;
  };
  const pod = !valid(spec.securityContext?.seLinuxOptions);
  const bad = containers.filter((c) => !valid(c.securityContext?.seLinuxOptions)).map((c) => c.name);
  if (!pod && bad.length === 0) return undefined;
  const data: string[] = [];
  if (badTypes.size > 0)
    data.push(`${badTypes.size === 1 ? "type" : "types"} ${quoted([...badTypes].sort())}`);
  if (user) data.push("user may not be set");
  if (role) data.push("role may not be set");
  return {
    id: "seLinuxOptions",
    reason: "seLinuxOptions",
    detail: `${setters(pod, bad)} set forbidden securityContext.seLinuxOptions: ${data.join("; ")}`,
  };
}

/** windowsHostProcess: no Windows host-process pod or container. */
function hostProcessViolation(spec: PodSpec, containers: readonly AnyContainer[]): Violation | undefined {
  const pod = spec.securityContext?.windowsOptions?.hostProcess === true;
  const bad = containers
    .filter((c) => c.securityContext?.windowsOptions?.hostProcess === true)
    .map((c) => c.name);
  if (!pod && bad.length === 0) return undefined;
  return {
    id: "windowsHostProcess",
    reason: "hostProcess",
    detail: `${setters(pod, bad)} must not set securityContext.windowsOptions.hostProcess=true`,
  };
}

/**
 * `containers "a", "b" must not include "X", "Y" in securityContext.capabilities.add`:
 * every container adding a capability `allowed` refuses, and those capabilities
 * sorted, as upstream words it; undefined when none does.
 */
function forbiddenAdds(
  containers: readonly AnyContainer[],
  allowed: (capability: string) => boolean,
): string | undefined {
  const names: string[] = [];
  const capabilities = new Set<string>();
  for (const c of containers) {
    const bad = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !allowed(cap));
    if (bad.length === 0) continue;
    names.push(c.name);
    for (const cap of bad) capabilities.add(cap);
  }
  if (names.length === 0) return undefined;
  return `${containersWord(names)} must not include ${quoted([...capabilities].sort())} in securityContext.capabilities.add`;
}

/** The baseline checks (pod-security-admission's policy/checks), by ID. */
function baselineViolations(
  spec: PodSpec,
  annotations: Readonly<Record<string, string>>,
  minor: number,
): Violation[] {
  const out: Violation[] = [];
  const containers = containersOf(spec);
  for (const violation of [
    appArmorViolation(spec, containers, annotations),
    seLinuxViolation(spec, containers, minor),
    hostProcessViolation(spec, containers),
  ])
    if (violation !== undefined) out.push(violation);
  const addedCaps = forbiddenAdds(containers, (cap) => baselineCapabilities.has(cap));
  if (addedCaps !== undefined)
    out.push({ id: "capabilities_baseline", reason: "non-default capabilities", detail: addedCaps });
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
  const safe = new Set(safeSysctls.filter(([, since]) => minor >= since).map(([name]) => name));
  const sysctls = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((name) => !safe.has(name));
  if (sysctls.length > 0)
    out.push({ id: "sysctls", reason: "forbidden sysctls", detail: sysctls.join(", ") });
  return out;
}

/**
 * The checks restricted adds to baseline at a pinned minor version, as
 * upstream's check registry versions them: `capabilities_restricted` from
 * v1.22, `runAsUser` from v1.23, `seccompProfile_restricted` from v1.19; and
 * from v1.25 a Windows pod (`spec.os.name: windows`) is exempt from the
 * Linux-only ones (capabilities, seccomp, allowPrivilegeEscalation).
 */
function restrictedViolations(spec: PodSpec, minor: number): Violation[] {
  const windowsExempt = minor >= 25 && spec.os?.name === "windows";
  return allRestrictedViolations(spec).filter(
    (v) => minor >= (restrictedSince[v.id] ?? 0) && !(windowsExempt && linuxOnlyRestricted.has(v.id)),
  );
}

/** The minor version that introduced a restricted check, where not v1.0 (upstream's `MinimumVersion`). */
const restrictedSince: Readonly<Record<string, number>> = {
  allowPrivilegeEscalation: 8,
  seccompProfile_restricted: 19,
  capabilities_restricted: 22,
  runAsUser: 23,
};

/** Restricted's checks a Windows pod is exempt from since v1.25. */
const linuxOnlyRestricted = new Set([
  "capabilities_restricted",
  "seccompProfile_restricted",
  "allowPrivilegeEscalation",
]);

function allRestrictedViolations(spec: PodSpec): Violation[] {
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
  const restrictedAdds = forbiddenAdds(containers, (cap) => cap === "NET_BIND_SERVICE");
  if (restrictedAdds !== undefined) capDetails.push(restrictedAdds);
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
  const seccomp = restrictedSeccompViolation(spec, containers);
  if (seccomp !== undefined) out.push(seccomp);
  return out;
}

/**
 * seccompProfile_restricted: an explicit type other than RuntimeDefault or
 * Localhost is named first; else every container the pod's profile does not
 * cover must set one.
 */
function restrictedSeccompViolation(
  spec: PodSpec,
  containers: readonly AnyContainer[],
): Violation | undefined {
  const valid = (type: string | undefined) => type === "RuntimeDefault" || type === "Localhost";
  const badValues = new Set<string>();
  const podProfile = spec.securityContext?.seccompProfile;
  const pod = podProfile !== undefined && !valid(podProfile.type);
  if (pod) badValues.add(podProfile.type ?? "");
  const podSet = podProfile !== undefined && !pod;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers) {
    const profile = c.securityContext?.seccompProfile;
    if (profile !== undefined) {
      if (!valid(profile.type)) {
        explicit.push(c.name);
        badValues.add(profile.type ?? "");
      }
    } else if (!podSet) implicit.push(c.name);
  }
  if (pod || explicit.length > 0)
    return {
      id: "seccompProfile_restricted",
      reason: "seccompProfile",
      detail: `${setters(pod, explicit)} must not set securityContext.seccompProfile.type to ${quoted([...badValues].sort())}`,
    };
  if (implicit.length > 0)
    return {
      id: "seccompProfile_restricted",
      reason: "seccompProfile",
      detail: `pod or ${containersWord(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    };
  return undefined;
}

/**
 * The baseline checks restricted replaces with its own (upstream's
 * `OverrideCheckIDs`), from the version its replacement exists.
 */
const overriddenByRestricted: Readonly<Record<string, string>> = {
  capabilities_baseline: "capabilities_restricted",
  seccompProfile_baseline: "seccompProfile_restricted",
};

const byId = (a: Violation, b: Violation) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The checks `level` fails for a pod, as upstream orders them (baseline's by
 * check ID, then restricted's), or none. `version` is the level's pinned
 * version (`v1.29`, `latest`), which decides what some checks allow.
 */
export function podSecurityViolations(
  level: Level,
  spec: PodSpec,
  annotations: Readonly<Record<string, string>> = {},
  version = "latest",
): string[] {
  if (level === "privileged") return [];
  const minor = minorOf(version);
  let violations = baselineViolations(spec, annotations, minor).sort(byId);
  if (level === "restricted") {
    const replaced = (id: string) => {
      const by = overriddenByRestricted[id];
      return by !== undefined && minor >= (restrictedSince[by] ?? 0);
    };
    violations = [
      ...violations.filter((v) => !replaced(v.id)),
      ...restrictedViolations(spec, minor).sort(byId),
    ];
  }
  return violations.map((v) => `${v.reason} (${v.detail})`);
}

/** The minor version of 1.x a pinned version names; `latest`, and anything unreadable or newer, is v1.32. */
function minorOf(version: string): number {
  const match = /^v1\.(\d+)$/.exec(version);
  const minor = match === null ? latestMinor : Number(match[1]);
  return Math.min(minor, latestMinor);
}

const latestMinor = 32;

/** The pod template a controller kind holds, where the plugin warns (it never refuses a template). */
function templateOf(a: AdmissionAttributes): PodSpec | undefined {
  const object = a.object as
    | { spec?: { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } }
    | undefined;
  return object?.spec?.template?.spec ?? object?.spec?.jobTemplate?.spec?.template?.spec;
}

/** The metadata of a controller kind's pod template. */
function templateMetadataOf(a: AdmissionAttributes): { annotations?: Record<string, string> } | undefined {
  const object = a.object as
    | {
        spec?: {
          template?: { metadata?: { annotations?: Record<string, string> } };
          jobTemplate?: { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } };
        };
      }
    | undefined;
  return object?.spec?.template?.metadata ?? object?.spec?.jobTemplate?.spec?.template?.metadata;
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
 * warning, and `audit` records the same text in the request's audit event
 * (`pod-security.kubernetes.io/audit-violations`, beside the
 * `enforce-policy` a pod was judged by), for pods and for the pod templates
 * of workload kinds. A pinned
 * `-version` decides what the version-dependent checks allow (sysctls, SELinux
 * types); the others are judged as the latest's.
 */
export function podSecurityPlugin(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "PodSecurity",
    resources: [podKey, ...templateKinds],
    validate(a) {
      if (a.operation !== "CREATE" && a.operation !== "UPDATE") return;
      if (a.subresource !== "" || a.namespace === "") return;
      const key = resourceKey(a.resource);
      // An update of a pod can change nothing these checks read (the spec is immutable), as upstream skips it.
      if (key === podKey && a.operation === "UPDATE") return;
      if (specOf(a, key) === undefined) return;
      return whenKnown(context.get<Namespace>(namespaces, "", a.namespace), judge, a, key);
    },
  };
}

/** The pod's spec, or the template's of a workload kind. */
function specOf(a: AdmissionAttributes, key: string): PodSpec | undefined {
  return key === podKey ? (a.object as Pod | undefined)?.spec : templateOf(a);
}

const noStrings: Readonly<Record<string, string>> = Object.freeze({});

/** The version a namespace pins `mode`'s level to (`latest` unless set). */
function versionOf(labels: Readonly<Record<string, string>>, mode: "enforce" | "audit" | "warn"): string {
  return labels[`pod-security.kubernetes.io/${mode}-version`] || "latest";
}

/** Judges the pod (or template) of `a` by the levels its namespace's labels set: refused, warned, audited. */
function judge(namespace: Namespace | undefined, a: AdmissionAttributes, key: string): void {
  const spec = specOf(a, key)!;
  const annotations =
    (key === podKey
      ? (a.object as Pod | undefined)?.metadata?.annotations
      : templateMetadataOf(a)?.annotations) ?? noStrings;
  const labels = namespace?.metadata?.labels ?? noStrings;
  const enforce = levelOf(labels["pod-security.kubernetes.io/enforce"]);
  // The audit annotations say which policy judged a pod, and what the audit level would refuse.
  const audit = levelOf(labels["pod-security.kubernetes.io/audit"]);
  if (audit !== undefined) {
    const failed = podSecurityViolations(audit, spec, annotations, versionOf(labels, "audit"));
    if (failed.length > 0)
      a.annotate(
        "pod-security.kubernetes.io/audit-violations",
        `would violate PodSecurity "${audit}:${versionOf(labels, "audit")}": ${failed.join(", ")}`,
      );
  }
  if (key === podKey)
    a.annotate(
      "pod-security.kubernetes.io/enforce-policy",
      enforce === undefined ? "privileged:latest" : `${enforce}:${versionOf(labels, "enforce")}`,
    );
  if (key === podKey && enforce !== undefined) {
    const failed = podSecurityViolations(enforce, spec, annotations, versionOf(labels, "enforce"));
    if (failed.length > 0)
      throw forbidden(
        a,
        `violates PodSecurity "${enforce}:${versionOf(labels, "enforce")}": ${failed.join(", ")}`,
      );
  }
  const warn = levelOf(labels["pod-security.kubernetes.io/warn"]);
  if (warn !== undefined) {
    const failed = podSecurityViolations(warn, spec, annotations, versionOf(labels, "warn"));
    if (failed.length > 0)
      a.warn(`would violate PodSecurity "${warn}:${versionOf(labels, "warn")}": ${failed.join(", ")}`);
  }
}
