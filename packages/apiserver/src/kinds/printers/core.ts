import {
  ageColumn,
  ageOf,
  column,
  formatSelectorMap,
  type Loose,
  nameColumn,
  nameOf,
  num,
  orNone,
  type Printer,
} from "./columns.js";
import { age, humanDuration } from "./human-duration.js";

// The core (v1) and coordination kinds' tables, as kubectl prints them.

export const podPrinter: Printer = {
  columns: [
    nameColumn,
    column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "string", "The aggregate status of the containers in this pod."),
    column("Restarts", "string", "The number of times the containers in this pod have been restarted."),
    ageColumn,
    column("IP", "string", "IP address allocated to the pod.", 1),
    column("Node", "string", "Name of the node this pod is assigned to.", 1),
    column("Nominated Node", "string", "Name of the node nominated by the scheduler.", 1),
    column("Readiness Gates", "string", "The readiness gates of the pod.", 1),
  ],
  cells(pod: Loose, now) {
    const statuses: Loose[] = Array.isArray(pod.status?.containerStatuses)
      ? pod.status.containerStatuses
      : [];
    const containers: Loose[] = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
    const ready = statuses.filter((s) => s?.ready === true).length;
    const restarts = statuses.reduce((sum, s) => sum + num(s?.restartCount), 0);
    // "3 (2m ago)": the time of the latest restart, as kubectl shows it.
    let lastRestart = Number.NaN;
    for (const s of statuses) {
      const finishedAt = Date.parse(s?.lastState?.terminated?.finishedAt ?? "");
      if (num(s?.restartCount) > 0 && !Number.isNaN(finishedAt) && !(finishedAt <= lastRestart)) {
        lastRestart = finishedAt;
      }
    }
    const gates: Loose[] = Array.isArray(pod.spec?.readinessGates) ? pod.spec.readinessGates : [];
    const conditions: Loose[] = Array.isArray(pod.status?.conditions) ? pod.status.conditions : [];
    const gatesReady = gates.filter((g) =>
      conditions.some((c) => c?.type === g?.conditionType && c?.status === "True"),
    ).length;
    return [
      nameOf(pod),
      `${ready}/${containers.length}`,
      podStatusReason(pod),
      Number.isNaN(lastRestart) ? String(restarts) : `${restarts} (${humanDuration(now - lastRestart)} ago)`,
      ageOf(pod, now),
      orNone(pod.status?.podIP),
      orNone(pod.spec?.nodeName),
      orNone(pod.status?.nominatedNodeName),
      gates.length === 0 ? "<none>" : `${gatesReady}/${gates.length}`,
    ];
  },
};

export const nodePrinter: Printer = {
  columns: [
    nameColumn,
    column("Status", "string", "The status of the node."),
    column("Roles", "string", "The roles of the node."),
    ageColumn,
    column("Version", "string", "Kubelet version reported by the node."),
    column("Internal-IP", "string", "The internal IP of the node.", 1),
    column("External-IP", "string", "The external IP of the node.", 1),
    column("OS-Image", "string", "OS image reported by the node.", 1),
    column("Kernel-Version", "string", "Kernel version reported by the node.", 1),
    column("Container-Runtime", "string", "Container runtime reported by the node.", 1),
  ],
  cells(node: Loose, now) {
    const info = node.status?.nodeInfo ?? {};
    const addresses: Loose[] = Array.isArray(node.status?.addresses) ? node.status.addresses : [];
    const address = (type: string) => orNone(addresses.find((a) => a?.type === type)?.address);
    const unknown = (value: unknown) => (typeof value === "string" && value !== "" ? value : "<unknown>");
    return [
      nameOf(node),
      nodeStatus(node),
      nodeRoles(node),
      ageOf(node, now),
      typeof info.kubeletVersion === "string" ? info.kubeletVersion : "",
      address("InternalIP"),
      address("ExternalIP"),
      unknown(info.osImage),
      unknown(info.kernelVersion),
      unknown(info.containerRuntimeVersion),
    ];
  },
};

export const eventPrinter: Printer = {
  columns: [
    column("Last Seen", "string", "Time of the last occurrence."),
    column("Type", "string", "Type of this event (Normal, Warning)."),
    column("Reason", "string", "Short, machine understandable string for the transition."),
    column("Object", "string", "The object this event is about."),
    column("Subobject", "string", "The specific part of the object this event is about.", 1),
    column("Source", "string", "The component reporting this event.", 1),
    column("Message", "string", "A human-readable description of the status of this operation."),
    column("First Seen", "string", "Time of the first occurrence.", 1),
    column("Count", "integer", "The number of times this event has occurred.", 1),
    column("Name", "string", "Name must be unique within a namespace.", 1, "name"),
  ],
  // `printEvent`: the first time falls back to eventTime and the last to the first (events.k8s.io
  // Events have neither legacy time); a series gives the last time and the count, and a
  // singleton of the new API counts 1.
  cells(event: Loose, now) {
    const involved = event.involvedObject ?? {};
    const first = event.firstTimestamp ? age(event.firstTimestamp, now) : age(event.eventTime, now);
    let last = event.lastTimestamp ? age(event.lastTimestamp, now) : first;
    let count = num(event.count);
    if (event.series != null) {
      last = age(event.series.lastObservedTime, now);
      count = num(event.series.count);
    } else if (count === 0) count = 1;
    const component = event.source?.component || event.reportingComponent || "";
    const instance = event.source?.host || event.reportingInstance || "";
    return [
      last,
      event.type ?? "",
      event.reason ?? "",
      involved.name
        ? `${String(involved.kind ?? "").toLowerCase()}/${involved.name}`
        : String(involved.kind ?? "").toLowerCase(),
      involved.fieldPath ?? "",
      instance === "" ? component : `${component}, ${instance}`,
      String(event.message ?? "").trim(),
      first,
      count,
      nameOf(event),
    ];
  },
};

export const namespacePrinter: Printer = {
  columns: [nameColumn, column("Status", "string", "The status of the namespace."), ageColumn],
  cells(namespace: Loose, now) {
    return [nameOf(namespace), namespace.status?.phase ?? "", ageOf(namespace, now)];
  },
};

export const configMapPrinter: Printer = {
  columns: [nameColumn, column("Data", "string", "Number of data entries."), ageColumn],
  cells(configMap: Loose, now) {
    const count = Object.keys(configMap.data ?? {}).length + Object.keys(configMap.binaryData ?? {}).length;
    return [nameOf(configMap), count, ageOf(configMap, now)];
  },
};

export const secretPrinter: Printer = {
  columns: [
    nameColumn,
    column("Type", "string", "The type of the secret."),
    column("Data", "string", "Number of data entries."),
    ageColumn,
  ],
  cells(secret: Loose, now) {
    return [
      nameOf(secret),
      secret.type ?? "Opaque",
      Object.keys(secret.data ?? {}).length,
      ageOf(secret, now),
    ];
  },
};

export const servicePrinter: Printer = {
  columns: [
    nameColumn,
    column("Type", "string", "The type of the service."),
    column("Cluster-IP", "string", "The cluster IP of the service."),
    column("External-IP", "string", "The external IPs of the service."),
    column("Port(s)", "string", "The ports of the service."),
    ageColumn,
    column("Selector", "string", "The selector of the service.", 1),
  ],
  cells(service: Loose, now) {
    const ports: Loose[] = Array.isArray(service.spec?.ports) ? service.spec.ports : [];
    const portText = ports
      .map((p) => `${p?.port ?? ""}${p?.nodePort ? `:${p.nodePort}` : ""}/${p?.protocol ?? "TCP"}`)
      .join(",");
    return [
      nameOf(service),
      service.spec?.type ?? "ClusterIP",
      orNone(service.spec?.clusterIP),
      serviceExternalIP(service),
      portText === "" ? "<none>" : portText,
      ageOf(service, now),
      formatSelectorMap(service.spec?.selector),
    ];
  },
};

/**
 * The External-IP cell (upstream `getServiceExternalIP`): a LoadBalancer's
 * ingress IPs or hostnames (sorted, distinct) then its external IPs, or
 * `<pending>` while it has neither; an ExternalName Service's name; other
 * types their external IPs or `<none>`.
 */
export function serviceExternalIP(service: Loose): string {
  const externalIPs: string[] = Array.isArray(service.spec?.externalIPs) ? service.spec.externalIPs : [];
  switch (service.spec?.type ?? "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length > 0 ? externalIPs.join(",") : "<none>";
    case "LoadBalancer": {
      const ingress: Loose[] = Array.isArray(service.status?.loadBalancer?.ingress)
        ? service.status.loadBalancer.ingress
        : [];
      const addresses = [
        ...new Set(
          ingress.map((entry) => entry?.ip || entry?.hostname || "").filter((a: string) => a !== ""),
        ),
      ].sort();
      const all = [...addresses, ...externalIPs];
      return all.length > 0 ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return service.spec?.externalName ?? "";
    default:
      return "<unknown>";
  }
}

export const leasePrinter: Printer = {
  columns: [nameColumn, column("Holder", "string", "The holder of the lease."), ageColumn],
  cells(lease: Loose, now) {
    return [
      nameOf(lease),
      typeof lease.spec?.holderIdentity === "string" ? lease.spec.holderIdentity : "",
      ageOf(lease, now),
    ];
  },
};

/** Why a pod is in its state, as `kubectl get pods` shows it in STATUS. */
function podStatusReason(pod: Loose): string {
  let reason: string = pod.status?.phase ?? "";
  if (typeof pod.status?.reason === "string" && pod.status.reason !== "") reason = pod.status.reason;
  const statuses: Loose[] = Array.isArray(pod.status?.containerStatuses) ? pod.status.containerStatuses : [];
  let hasRunning = false;
  for (let i = statuses.length - 1; i >= 0; i--) {
    const state = statuses[i]?.state ?? {};
    if (state.waiting?.reason) reason = state.waiting.reason;
    else if (state.terminated?.reason) reason = state.terminated.reason;
    else if (state.terminated) {
      reason = state.terminated.signal
        ? `Signal:${state.terminated.signal}`
        : `ExitCode:${num(state.terminated.exitCode)}`;
    } else if (state.running && statuses[i]?.ready) hasRunning = true;
  }
  if (reason === "Completed" && hasRunning) reason = "Running";
  if (pod.metadata?.deletionTimestamp) reason = "Terminating";
  return reason;
}

function nodeStatus(node: Loose): string {
  const conditions: Loose[] = Array.isArray(node.status?.conditions) ? node.status.conditions : [];
  const ready = conditions.find((c) => c?.type === "Ready");
  const statuses = [ready === undefined ? "Unknown" : ready.status === "True" ? "Ready" : "NotReady"];
  if (node.spec?.unschedulable) statuses.push("SchedulingDisabled");
  return statuses.join(",");
}

function nodeRoles(node: Loose): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
    if (key.startsWith("node-role.kubernetes.io/")) {
      const role = key.slice("node-role.kubernetes.io/".length);
      if (role !== "") roles.add(role);
    } else if (key === "kubernetes.io/role" && typeof value === "string" && value !== "") roles.add(value);
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",");
}
