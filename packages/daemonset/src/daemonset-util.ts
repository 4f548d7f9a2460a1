import {
  type DaemonSet,
  type DeepReadonly,
  getScaledValueFromIntOrPercent,
  matchesRequiredNodeAffinity,
  type Node,
  type Pod,
  type PodTemplateSpec,
  toleratesTaint,
} from "@reconcile/api";
import type { Affinity, PodSpec, Taint, Toleration } from "kubernetes-types/core/v1.js";

// Which nodes a DaemonSet runs on and the pods it makes there (upstream
// `pkg/controller/daemon/util` and the scheduling half of `daemon_controller.go`).

export const controllerKind = { apiVersion: "apps/v1", kind: "DaemonSet" } as const;
/** The label naming a pod's revision (`apps.DefaultDaemonSetUniqueLabelKey`). */
export const daemonSetRevisionLabel = "controller-revision-hash";
/** The label holding the template generation a pod was made from (`DaemonSetTemplateGenerationKey`). */
export const templateGenerationLabel = "pod-template-generation";
/** Where apps/v1 keeps the template generation. */
export const templateGenerationAnnotation = "deprecated.daemonset.template.generation";

type DS = DaemonSet | DeepReadonly<DaemonSet>;
type AnyPod = Pod | DeepReadonly<Pod>;
type AnyNode = Node | DeepReadonly<Node>;

/**
 * The tolerations every daemon pod gets, so node problems neither evict it
 * nor keep it off a node (upstream `AddOrUpdateDaemonPodTolerations`).
 */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const tolerations: Toleration[] = [
    { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
    { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
    { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
    { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
    { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
    { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" },
  ];
  if (hostNetwork)
    tolerations.push({
      key: "node.kubernetes.io/network-unavailable",
      operator: "Exists",
      effect: "NoSchedule",
    });
  return tolerations;
}

/** Adds the daemon tolerations a pod spec lacks (`AddOrUpdateTolerationInPodSpec` for each). */
export function addDaemonPodTolerations(spec: PodSpec): void {
  const tolerations = spec.tolerations ?? [];
  for (const toleration of daemonPodTolerations(spec.hostNetwork === true)) {
    const same = tolerations.some(
      (t) =>
        t.key === toleration.key &&
        t.effect === toleration.effect &&
        (t.operator ?? "Equal") === toleration.operator &&
        (t.value ?? "") === "",
    );
    if (!same) tolerations.push(toleration);
  }
  spec.tolerations = tolerations;
}

/** The template generation apps/v1 keeps in an annotation, if it parses (upstream `GetTemplateGeneration`). */
export function templateGeneration(ds: DS): number | undefined {
  const text = ds.metadata?.annotations?.[templateGenerationAnnotation];
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return Number(text);
}

/**
 * The template the DaemonSet's pods are made from: its tolerations, and the
 * generation and revision-hash labels (upstream `CreatePodTemplate`).
 */
export function createPodTemplate(ds: DS, hash: string): PodTemplateSpec {
  const template = structuredClone(ds.spec?.template ?? {}) as PodTemplateSpec;
  addDaemonPodTolerations((template.spec ??= { containers: [] }));
  const labels = { ...template.metadata?.labels };
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[templateGenerationLabel] = String(generation);
  if (hash !== "") labels[daemonSetRevisionLabel] = hash;
  template.metadata = { ...template.metadata, labels };
  return template;
}

/**
 * The pod's required node affinity, made to name only `nodeName` through
 * `matchFields` (upstream `ReplaceDaemonSetPodNodeNameNodeAffinity`): the
 * scheduler then places the pod on that node and nowhere else.
 */
export function replaceNodeNameAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const terms = [{ matchFields: [{ key: "metadata.name", operator: "In", values: [nodeName] }] }];
  const result: Affinity = affinity ?? {};
  const nodeAffinity = (result.nodeAffinity ??= {});
  if (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution === undefined)
    nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: terms };
  else nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms = terms;
  return result;
}

/**
 * The node a daemon pod is for: where it runs, or, not yet scheduled, the
 * node its `metadata.name` affinity names (upstream `GetTargetNodeName`).
 */
export function targetNodeName(pod: AnyPod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  for (const term of terms ?? []) {
    for (const field of term.matchFields ?? []) {
      if (field.key === "metadata.name" && field.operator === "In")
        return field.values?.length === 1 ? field.values[0] : undefined;
    }
  }
  return undefined;
}

/** The pod the DaemonSet would run on `nodeName`, for the scheduling checks (upstream `NewPod`). */
export function newPod(ds: DS, nodeName: string): Pod {
  const template = structuredClone(ds.spec?.template ?? {}) as PodTemplateSpec;
  const pod: Pod = {
    metadata: { ...template.metadata, namespace: ds.metadata?.namespace ?? "" },
    spec: { ...(template.spec ?? { containers: [] }), nodeName },
  };
  addDaemonPodTolerations(pod.spec!);
  return pod;
}

/**
 * The pod the checks below read, made once per DaemonSet object: the
 * checks do not look at its node name, and a sync asks for every node.
 */
const checkedPods = new WeakMap<object, Pod>();
function checkedPod(ds: DS): Pod {
  let pod = checkedPods.get(ds);
  if (pod === undefined) {
    pod = newPod(ds, "");
    checkedPods.set(ds, pod);
  }
  return pod;
}

/**
 * Whether the DaemonSet should run a pod on the node, and whether a pod
 * already there may stay (upstream `NodeShouldRunDaemonPod`): the pod must
 * fit the node's name, its node selector and required affinity; a taint it
 * does not tolerate keeps a new pod off, and evicts a running one only when
 * the taint is NoExecute.
 */
export function nodeShouldRunDaemonPod(
  node: AnyNode,
  ds: DS,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const nodeName = node.metadata?.name ?? "";
  const templateNode = ds.spec?.template?.spec?.nodeName;
  if (templateNode && templateNode !== nodeName) return { shouldRun: false, shouldContinueRunning: false };
  const pod = checkedPod(ds);
  if (!matchesRequiredNodeAffinity(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = (node.spec?.taints ?? []) as readonly Taint[];
  const tolerations = pod.spec?.tolerations ?? [];
  const untolerated = (effects: readonly string[]) =>
    taints.some(
      (taint) => effects.includes(taint.effect) && !tolerations.some((t) => toleratesTaint(t, taint)),
    );
  if (untolerated(["NoSchedule", "NoExecute"]))
    return { shouldRun: false, shouldContinueRunning: !untolerated(["NoExecute"]) };
  return { shouldRun: true, shouldContinueRunning: true };
}

/** Whether a pod is at the DaemonSet's current template: by hash, or by template generation (upstream `IsPodUpdated`). */
export function isPodUpdated(pod: AnyPod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata?.labels ?? {};
  const templateMatches = generation !== undefined && labels[templateGenerationLabel] === String(generation);
  const hashMatches = hash !== "" && labels[daemonSetRevisionLabel] === hash;
  return hashMatches || templateMatches;
}

/** `rollingUpdate.maxSurge` of `desired`, rounded up (upstream `SurgeCount`). */
export function surgeCount(ds: DS, desired: number): number {
  const rolling = ds.spec?.updateStrategy;
  if (rolling?.type !== "RollingUpdate" || rolling.rollingUpdate?.maxSurge === undefined) return 0;
  return getScaledValueFromIntOrPercent(rolling.rollingUpdate.maxSurge, desired, true);
}

/** `rollingUpdate.maxUnavailable` of `desired`, rounded up (upstream `UnavailableCount`). */
export function unavailableCount(ds: DS, desired: number): number {
  const rolling = ds.spec?.updateStrategy;
  if (rolling?.type !== "RollingUpdate" || rolling.rollingUpdate?.maxUnavailable === undefined) return 0;
  return getScaledValueFromIntOrPercent(rolling.rollingUpdate.maxUnavailable, desired, true);
}

/** Scheduled pods first, then oldest first, then by name (upstream `podByCreationTimestampAndPhase`). */
export function byCreationTimestampAndPhase(a: AnyPod, b: AnyPod): number {
  const as = a.spec?.nodeName ? 0 : 1;
  const bs = b.spec?.nodeName ? 0 : 1;
  if (as !== bs) return as - bs;
  const at = a.metadata?.creationTimestamp ?? "";
  const bt = b.metadata?.creationTimestamp ?? "";
  if (at !== bt) return at < bt ? -1 : 1;
  const an = a.metadata?.name ?? "";
  const bn = b.metadata?.name ?? "";
  return an < bn ? -1 : an > bn ? 1 : 0;
}
