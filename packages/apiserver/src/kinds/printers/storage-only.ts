import { accessModesText } from "./cluster-kinds.js";
import {
  ageColumn,
  ageOf,
  column,
  formatLabelSelector,
  formatSelectorMap,
  type Loose,
  nameColumn,
  nameOf,
  num,
  type Printer,
  templateCells,
} from "./columns.js";
import { age } from "./human-duration.js";

// The `kubectl get` columns of the kinds served as storage only, as kube-apiserver's printers
// (pkg/printers/internalversion) print them in 1.32.

const wideTemplateColumns = [
  column("Containers", "string", "Names of each container in the template.", 1),
  column("Images", "string", "Images referenced by each container in the template.", 1),
  column("Selector", "string", "Label selector for pods.", 1),
];

export const replicationControllerPrinter: Printer = {
  columns: [
    nameColumn,
    column("Desired", "integer", "Number of desired pods."),
    column("Current", "integer", "Number of actual replicas."),
    column("Ready", "integer", "Number of ready replicas."),
    ageColumn,
    ...wideTemplateColumns,
  ],
  cells(rc: Loose, now) {
    const [containers, images] = templateCells(rc);
    const selector = rc.spec?.selector ? formatLabelSelector({ matchLabels: rc.spec.selector }) : "<none>";
    return [
      nameOf(rc),
      num(rc.spec?.replicas),
      num(rc.status?.replicas),
      num(rc.status?.readyReplicas),
      ageOf(rc, now),
      containers,
      images,
      selector,
    ];
  },
};

export const daemonSetPrinter: Printer = {
  columns: [
    nameColumn,
    column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
    column("Current", "integer", "The number of nodes that are running at least 1 daemon pod."),
    column("Ready", "integer", "The number of nodes that have the daemon pod running and ready."),
    column("Up-to-date", "integer", "The number of nodes that are running the updated daemon pod."),
    column("Available", "integer", "The number of nodes that have the daemon pod running and available."),
    column(
      "Node Selector",
      "string",
      "NodeSelector is a selector which must be true for the pod to fit on a node.",
    ),
    ageColumn,
    ...wideTemplateColumns,
  ],
  cells(ds: Loose, now) {
    const nodeSelector = ds.spec?.template?.spec?.nodeSelector;
    return [
      nameOf(ds),
      num(ds.status?.desiredNumberScheduled),
      num(ds.status?.currentNumberScheduled),
      num(ds.status?.numberReady),
      num(ds.status?.updatedNumberScheduled),
      num(ds.status?.numberAvailable),
      nodeSelector && Object.keys(nodeSelector).length > 0
        ? formatLabelSelector({ matchLabels: nodeSelector })
        : "<none>",
      ageOf(ds, now),
      ...templateCells(ds),
    ];
  },
};

export const statefulSetPrinter: Printer = {
  columns: [
    nameColumn,
    column("Ready", "string", "Number of the pod with ready state."),
    ageColumn,
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
  ],
  cells(sts: Loose, now) {
    const [containers, images] = templateCells(sts);
    const ready = `${num(sts.status?.readyReplicas)}/${num(sts.spec?.replicas)}`;
    return [nameOf(sts), ready, ageOf(sts, now), containers, images];
  },
};

/** `kubectl get controllerrevisions`: the controller as `kind.group/name`, as upstream's `formatResourceName`. */
/** `printPodTemplate`: no age column; the template's containers, images and labels. */
export const podTemplatePrinter: Printer = {
  columns: [
    nameColumn,
    column("Containers", "string", "Names of each container in the template."),
    column("Images", "string", "Images referenced by each container in the template."),
    column("Pod Labels", "string", "The labels for the pod template."),
  ],
  cells(podTemplate: Loose) {
    const containers: Loose[] = Array.isArray(podTemplate.template?.spec?.containers)
      ? podTemplate.template.spec.containers
      : [];
    return [
      nameOf(podTemplate),
      containers.map((c) => c?.name ?? "").join(","),
      containers.map((c) => c?.image ?? "").join(","),
      formatSelectorMap(podTemplate.template?.metadata?.labels),
    ];
  },
};

export const controllerRevisionPrinter: Printer = {
  columns: [
    nameColumn,
    column("Controller", "string", "Controller of the object"),
    column("Revision", "string", "Revision indicates the revision of the state represented by Data."),
    ageColumn,
  ],
  cells(revision: Loose, now) {
    const owners: Loose[] = Array.isArray(revision.metadata?.ownerReferences)
      ? revision.metadata.ownerReferences
      : [];
    const controller = owners.find((owner) => owner?.controller === true);
    return [
      nameOf(revision),
      controller ? controllerName(controller) : "<none>",
      num(revision.revision),
      ageOf(revision, now),
    ];
  },
};

/** `daemonset.apps/web`: the lower-cased group kind, then the name (a core kind has no group). */
function controllerName(owner: Loose): string {
  const apiVersion = String(owner.apiVersion ?? "");
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const kind = String(owner.kind ?? "");
  const groupKind = group === "" ? kind : `${kind}.${group}`;
  return groupKind === "" ? String(owner.name ?? "") : `${groupKind.toLowerCase()}/${owner.name ?? ""}`;
}

export const cronJobPrinter: Printer = {
  columns: [
    nameColumn,
    column("Schedule", "string", "The schedule in Cron format."),
    column("Timezone", "string", "The time zone name for the given schedule."),
    column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
    column("Active", "integer", "A list of pointers to currently running jobs."),
    column(
      "Last Schedule",
      "string",
      "Information when was the last time the job was successfully scheduled.",
    ),
    ageColumn,
    ...wideTemplateColumns,
  ],
  cells(cj: Loose, now) {
    const podSpec = cj.spec?.jobTemplate?.spec?.template?.spec;
    const containers: Loose[] = Array.isArray(podSpec?.containers) ? podSpec.containers : [];
    const last = cj.status?.lastScheduleTime;
    return [
      nameOf(cj),
      cj.spec?.schedule ?? "",
      cj.spec?.timeZone ?? "<none>",
      cj.spec?.suspend === true ? "True" : "False",
      Array.isArray(cj.status?.active) ? cj.status.active.length : 0,
      typeof last === "string" ? age(last, now) : "<none>",
      ageOf(cj, now),
      containers.map((c) => c?.name ?? "").join(","),
      containers.map((c) => c?.image ?? "").join(","),
      formatLabelSelector(cj.spec?.jobTemplate?.spec?.selector),
    ];
  },
};

export const serviceAccountPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Secrets",
      "string",
      "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
    ),
    ageColumn,
  ],
  cells(sa: Loose, now) {
    return [nameOf(sa), Array.isArray(sa.secrets) ? sa.secrets.length : 0, ageOf(sa, now)];
  },
};

export const persistentVolumeClaimPrinter: Printer = {
  columns: [
    nameColumn,
    column("Status", "string", "Phase represents the current phase of PersistentVolumeClaim."),
    column(
      "Volume",
      "string",
      "VolumeName is the binding reference to the PersistentVolume backing this claim.",
    ),
    column("Capacity", "string", "Capacity represents the actual resources of the underlying volume."),
    column("Access Modes", "string", "AccessModes contains the desired access modes the volume should have."),
    column(
      "StorageClass",
      "string",
      "StorageClassName is the name of the StorageClass required by the claim.",
    ),
    column(
      "VolumeAttributesClass",
      "string",
      "VolumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.",
    ),
    ageColumn,
    column("VolumeMode", "string", "VolumeMode defines what type of volume is required by the claim.", 1),
  ],
  cells(pvc: Loose, now) {
    const bound = typeof pvc.spec?.volumeName === "string" && pvc.spec.volumeName !== "";
    const modes: string[] = Array.isArray(pvc.status?.accessModes) ? pvc.status.accessModes : [];
    return [
      nameOf(pvc),
      // A claim being deleted (held by its protection finalizer) shows Terminating, as upstream prints it.
      pvc.metadata?.deletionTimestamp ? "Terminating" : (pvc.status?.phase ?? ""),
      pvc.spec?.volumeName ?? "",
      bound ? (pvc.status?.capacity?.storage ?? "") : "",
      bound ? accessModesText(modes) : "",
      pvc.spec?.storageClassName ?? "",
      pvc.spec?.volumeAttributesClassName ?? "<unset>",
      ageOf(pvc, now),
      pvc.spec?.volumeMode ?? "<unset>",
    ];
  },
};

/** RoleBindings and ClusterRoleBindings (upstream `printRoleBinding`): the role, and the subjects in wide output. */
export const roleBindingPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Role",
      "string",
      "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
    ),
    ageColumn,
    column("Users", "string", "Users in the roleBinding", 1),
    column("Groups", "string", "Groups in the roleBinding", 1),
    column("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", 1),
  ],
  cells(binding: Loose, now) {
    const subjects: Loose[] = Array.isArray(binding.subjects) ? binding.subjects : [];
    const of = (kind: string) =>
      subjects
        .filter((s) => s.kind === kind)
        .map((s) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}:${s.name}` : s.name))
        .join(", ");
    return [
      nameOf(binding),
      `${binding.roleRef?.kind ?? ""}/${binding.roleRef?.name ?? ""}`,
      ageOf(binding, now),
      of("User"),
      of("Group"),
      of("ServiceAccount"),
    ];
  },
};
