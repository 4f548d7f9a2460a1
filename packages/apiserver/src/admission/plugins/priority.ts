import { nodes, type Pod, pods, priorityClasses } from "@reconcile/api";
import type { PodSpec, Taint } from "kubernetes-types/core/v1.js";
import type { PriorityClass } from "kubernetes-types/scheduling/v1.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
  whenKnown,
} from "../plugin.js";

/** The priority of a pod when no PriorityClass is the global default. */
const priorityWithoutDefault = 0;

/** The PriorityClasses every cluster starts with (the scheduling API's post-start hook). */
export const systemPriorityClasses: readonly PriorityClass[] = [
  {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name: "system-node-critical" },
    value: 2_000_001_000,
    description: "Used for system critical pods that must not be moved from their current node.",
    preemptionPolicy: "PreemptLowerPriority",
  },
  {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name: "system-cluster-critical" },
    value: 2_000_000_000,
    description:
      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    preemptionPolicy: "PreemptLowerPriority",
  },
];

const podKey = resourceKey(pods);
const classKey = resourceKey(priorityClasses);

/**
 * Priority: a new pod's `priority` and `preemptionPolicy` come from the
 * PriorityClass it names (403 if there is none by that name), else from the
 * global default class, else 0 and `PreemptLowerPriority`; a pod may not give
 * a priority of its own that differs. An update keeps what creation set. Only
 * one PriorityClass may be the global default.
 */
export function priorityPlugin(context: AdmissionContext): AdmissionPlugin {
  const globalDefault = () => whenKnown(context.list(priorityClasses, ""), defaultOf);
  return {
    name: "Priority",
    resources: [podKey, classKey],
    admit(a) {
      if (resourceKey(a.resource) !== podKey || a.subresource !== "" || a.object === undefined) return;
      const spec = (a.object as Pod).spec;
      if (spec === undefined) return;
      if (a.operation === "UPDATE") {
        const old = (a.oldObject as Pod | undefined)?.spec;
        if (spec.priority == null && old?.priority != null) spec.priority = old.priority;
        if (spec.preemptionPolicy == null && old?.preemptionPolicy != null)
          spec.preemptionPolicy = old.preemptionPolicy;
        return;
      }
      if (a.operation !== "CREATE") return;
      if (!spec.priorityClassName) return whenKnown(globalDefault(), fromDefault, a, spec);
      return whenKnown(context.get(priorityClasses, "", spec.priorityClassName), fromNamed, a, spec);
    },
    validate(a) {
      if (resourceKey(a.resource) !== classKey || (a.operation !== "CREATE" && a.operation !== "UPDATE"))
        return;
      const pc = a.object as PriorityClass | undefined;
      if (!pc?.globalDefault) return;
      return whenKnown(globalDefault(), (existing) => {
        if (existing === undefined) return;
        if (a.operation === "CREATE" || existing.metadata?.name !== pc.metadata?.name)
          throw forbidden(
            a,
            `PriorityClass ${existing.metadata?.name} is already marked as default. Only one default can exist`,
          );
      });
    },
  };
}

/** The global default of `classes`: when two raced in, the lowest value wins, as upstream picks. */
/** A pod without a class takes the default class's priority and policy, or 0 with none. */
function fromDefault(pc: PriorityClass | undefined, a: AdmissionAttributes, spec: PodSpec): void {
  if (pc?.metadata?.name) spec.priorityClassName = pc.metadata.name;
  setPriority(
    a,
    spec,
    pc?.value ?? priorityWithoutDefault,
    pc === undefined ? "PreemptLowerPriority" : pc.preemptionPolicy,
  );
}

/** A pod naming a class takes its priority and policy; the class must exist. */
function fromNamed(pc: PriorityClass | undefined, a: AdmissionAttributes, spec: PodSpec): void {
  if (pc === undefined) throw forbidden(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
  setPriority(a, spec, pc.value, pc.preemptionPolicy);
}

function defaultOf(classes: readonly PriorityClass[]): PriorityClass | undefined {
  let chosen: PriorityClass | undefined;
  for (const pc of classes)
    if (pc.globalDefault && (chosen === undefined || pc.value < chosen.value)) chosen = pc;
  return chosen;
}

/** Sets the priority and preemption policy the class gave; a pod that set different ones of its own is a 403. */
function setPriority(
  a: AdmissionAttributes,
  spec: PodSpec,
  priority: number,
  policy: string | undefined,
): void {
  if (spec.priority != null && spec.priority !== priority)
    throw forbidden(
      a,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  spec.priority = priority;
  if (policy === undefined) return;
  if (spec.preemptionPolicy != null && spec.preemptionPolicy !== policy)
    throw forbidden(
      a,
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
    );
  spec.preemptionPolicy = policy;
}

const notReadyTaint: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" };

/**
 * TaintNodesByCondition: a new Node starts with the `not-ready` NoSchedule
 * taint, so nothing is scheduled to it until the node lifecycle controller
 * has seen it Ready and lifted the taint.
 */
export function taintNodesByCondition(): AdmissionPlugin {
  return {
    name: "TaintNodesByCondition",
    resources: [resourceKey(nodes)],
    admit(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || a.object === undefined) return;
      const node = a.object as { spec?: { taints?: Taint[] } };
      const spec = (node.spec ??= {});
      const taints = spec.taints ?? [];
      if (taints.some((t) => t.key === notReadyTaint.key && t.effect === notReadyTaint.effect)) return;
      spec.taints = [...taints, { ...notReadyTaint }];
    },
  };
}
