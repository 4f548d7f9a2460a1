import { Quantity } from "@reconcile/api";
import {
  ageColumn,
  ageOf,
  column,
  formatLabelSelector,
  type Loose,
  nameColumn,
  nameOf,
  num,
  type Printer,
} from "./columns.js";

// kube-apiserver's columns (pkg/printers/internalversion/printers.go) for the
// policy, networking, scheduling and storage kinds.

/** A quantity as `resource.Quantity.String()` prints it (`1000m` is `1`); `0` when absent, as it as given when odd. */
function quantityText(value: unknown): string {
  if (value === undefined || value === null || value === "") return "0";
  try {
    return Quantity.parse(value as string | number).toString();
  } catch {
    return String(value);
  }
}

/** `intstr.IntOrString.String()`, or `N/A` when unset (`printPodDisruptionBudget`). */
const intOrStringOrNA = (value: unknown) => (value === undefined || value === null ? "N/A" : String(value));

export const podDisruptionBudgetPrinter: Printer = {
  columns: [
    nameColumn,
    column("Min Available", "string", "The minimum number of pods that must be available."),
    column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    ageColumn,
  ],
  cells(pdb: Loose, now) {
    return [
      nameOf(pdb),
      intOrStringOrNA(pdb.spec?.minAvailable),
      intOrStringOrNA(pdb.spec?.maxUnavailable),
      num(pdb.status?.disruptionsAllowed),
      ageOf(pdb, now),
    ];
  },
};

/** `formatHosts`: the first three hosts, `*` for none, then `+ N more...`. */
function formatHosts(rules: Loose[]): string {
  const list: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (list.length === 3) more = true;
    if (!more && typeof rule?.host === "string" && rule.host !== "") list.push(rule.host);
  }
  if (list.length === 0) return "*";
  return more ? `${list.join(",")} + ${rules.length - 3} more...` : list.join(",");
}

export const ingressPrinter: Printer = {
  columns: [
    nameColumn,
    column("Class", "string", "The name of the IngressClass resource that should be used."),
    column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
    column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    column("Ports", "string", "Ports of TLS configurations that open"),
    ageColumn,
  ],
  cells(ingress: Loose, now) {
    const rules: Loose[] = Array.isArray(ingress.spec?.rules) ? ingress.spec.rules : [];
    const points: Loose[] = Array.isArray(ingress.status?.loadBalancer?.ingress)
      ? ingress.status.loadBalancer.ingress
      : [];
    const addresses = new Set<string>();
    for (const point of points) {
      if (typeof point?.ip === "string" && point.ip !== "") addresses.add(point.ip);
      else if (typeof point?.hostname === "string" && point.hostname !== "") addresses.add(point.hostname);
    }
    const tls = Array.isArray(ingress.spec?.tls) && ingress.spec.tls.length > 0;
    return [
      nameOf(ingress),
      typeof ingress.spec?.ingressClassName === "string" ? ingress.spec.ingressClassName : "<none>",
      formatHosts(rules),
      [...addresses].sort().join(","),
      tls ? "80, 443" : "80",
      ageOf(ingress, now),
    ];
  },
};

export const ingressClassPrinter: Printer = {
  columns: [
    nameColumn,
    column("Controller", "string", "Controller that is responsible for handling this class"),
    column("Parameters", "string", "A reference to a resource with additional parameters"),
    ageColumn,
  ],
  cells(ingressClass: Loose, now) {
    const parameters = ingressClass.spec?.parameters;
    let text = "<none>";
    if (parameters !== undefined && parameters !== null) {
      text = String(parameters.kind ?? "");
      if (typeof parameters.apiGroup === "string") text += `.${parameters.apiGroup}`;
      text += `/${String(parameters.name ?? "")}`;
    }
    return [nameOf(ingressClass), ingressClass.spec?.controller ?? "", text, ageOf(ingressClass, now)];
  },
};

export const networkPolicyPrinter: Printer = {
  columns: [
    nameColumn,
    column("Pod-Selector", "string", "Selects the pods to which this NetworkPolicy object applies."),
    ageColumn,
  ],
  cells(policy: Loose, now) {
    return [nameOf(policy), formatLabelSelector(policy.spec?.podSelector ?? {}), ageOf(policy, now)];
  },
};

/** `printResourceQuota`: `resource: used/hard` of status, requests and `limits.*` apart, by name. */
export const resourceQuotaPrinter: Printer = {
  columns: [
    nameColumn,
    ageColumn,
    column(
      "Request",
      "string",
      "Request represents a minimum amount of cpu/memory that a container may consume.",
    ),
    column(
      "Limit",
      "string",
      "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
    ),
  ],
  cells(quota: Loose, now) {
    const requests: string[] = [];
    const limits: string[] = [];
    for (const resource of Object.keys(quota.spec?.hard ?? {}).sort()) {
      const text = `${resource}: ${quantityText(quota.status?.used?.[resource])}/${quantityText(quota.status?.hard?.[resource])}`;
      const pieces = resource.split(".");
      (pieces.length > 1 && pieces[0] === "limits" ? limits : requests).push(text);
    }
    return [nameOf(quota), ageOf(quota, now), requests.join(", "), limits.join(", ")];
  },
};

export const priorityClassPrinter: Printer = {
  columns: [
    nameColumn,
    column("Value", "integer", "value represents the integer value of this priority class."),
    column(
      "Global-Default",
      "boolean",
      "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.",
    ),
    column(
      "Preemption-Policy",
      "string",
      "preemptionPolicy is the Policy for preempting pods with lower priority.",
    ),
    ageColumn,
  ],
  cells(priorityClass: Loose, now) {
    return [
      nameOf(priorityClass),
      num(priorityClass.value),
      priorityClass.globalDefault === true,
      priorityClass.preemptionPolicy ?? "",
      ageOf(priorityClass, now),
    ];
  },
};

/** `storageutil.IsDefaultAnnotation`: the GA or the beta default-class annotation set to `true`. */
function isDefaultClass(storageClass: Loose): boolean {
  const annotations = storageClass.metadata?.annotations ?? {};
  return (
    annotations["storageclass.kubernetes.io/is-default-class"] === "true" ||
    annotations["storageclass.beta.kubernetes.io/is-default-class"] === "true"
  );
}

export const storageClassPrinter: Printer = {
  columns: [
    nameColumn,
    column("Provisioner", "string", "provisioner indicates the type of the provisioner."),
    column(
      "ReclaimPolicy",
      "string",
      "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.",
    ),
    column(
      "VolumeBindingMode",
      "string",
      "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
    ),
    column(
      "AllowVolumeExpansion",
      "string",
      "allowVolumeExpansion shows whether the storage class allow volume expand.",
    ),
    ageColumn,
  ],
  cells(storageClass: Loose, now) {
    return [
      isDefaultClass(storageClass) ? `${nameOf(storageClass)} (default)` : nameOf(storageClass),
      storageClass.provisioner ?? "",
      storageClass.reclaimPolicy ?? "Delete",
      storageClass.volumeBindingMode ?? "Immediate",
      storageClass.allowVolumeExpansion === true,
      ageOf(storageClass, now),
    ];
  },
};

/** `GetAccessModesAsString`: each mode once, in the order RWO, ROX, RWX, RWOP. */
export function accessModesText(modes: unknown): string {
  const given = new Set(Array.isArray(modes) ? modes : []);
  return (
    [
      ["ReadWriteOnce", "RWO"],
      ["ReadOnlyMany", "ROX"],
      ["ReadWriteMany", "RWX"],
      ["ReadWriteOncePod", "RWOP"],
    ] as const
  )
    .filter(([mode]) => given.has(mode))
    .map(([, short]) => short)
    .join(",");
}

export const persistentVolumePrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Capacity",
      "string",
      "capacity is the description of the persistent volume's resources and capacity.",
    ),
    column("Access Modes", "string", "accessModes contains all ways the volume can be mounted."),
    column(
      "Reclaim Policy",
      "string",
      "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
    ),
    column(
      "Status",
      "string",
      "phase indicates if a volume is available, bound to a claim, or released by a claim.",
    ),
    column(
      "Claim",
      "string",
      "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
    ),
    column("StorageClass", "string", "StorageClass of the pv"),
    column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    column(
      "Reason",
      "string",
      "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
    ),
    ageColumn,
    column(
      "VolumeMode",
      "string",
      "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
      1,
    ),
  ],
  cells(volume: Loose, now) {
    const claim = volume.spec?.claimRef;
    const storageClass =
      volume.spec?.storageClassName ??
      volume.metadata?.annotations?.["volume.beta.kubernetes.io/storage-class"] ??
      "";
    return [
      nameOf(volume),
      quantityText(volume.spec?.capacity?.storage),
      accessModesText(volume.spec?.accessModes),
      volume.spec?.persistentVolumeReclaimPolicy ?? "",
      volume.metadata?.deletionTimestamp !== undefined ? "Terminating" : (volume.status?.phase ?? ""),
      claim ? `${claim.namespace ?? ""}/${claim.name ?? ""}` : "",
      storageClass,
      volume.spec?.volumeAttributesClassName ?? "<unset>",
      volume.status?.reason ?? "",
      ageOf(volume, now),
      volume.spec?.volumeMode ?? "<unset>",
    ];
  },
};
