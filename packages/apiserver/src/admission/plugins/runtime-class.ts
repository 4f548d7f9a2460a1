import { type Pod, parseQuantity, pods, runtimeClasses } from "@reconcile/api";
import type { PodSpec, Toleration } from "kubernetes-types/core/v1.js";
import type { RuntimeClass } from "kubernetes-types/node/v1.js";
import { jsonEqual } from "../../json.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
  whenKnown,
} from "../plugin.js";

const podKey = resourceKey(pods);

/** Two resource lists equal as quantities (`apiequality.Semantic.DeepEqual`: `1000m` is `1`). */
function sameResources(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const left = Object.keys(a ?? {});
  if (left.length !== Object.keys(b ?? {}).length) return false;
  return left.every((name) => {
    const other = b?.[name];
    if (other === undefined) return false;
    try {
      return parseQuantity(a![name]!).equal(other);
    } catch {
      return a![name] === other;
    }
  });
}

/** `isSuperset` of pkg/util/tolerations: whether `ss` tolerates every taint `t` does. */
function tolerates(ss: Toleration, t: Toleration): boolean {
  if (jsonEqual(ss, t)) return true;
  if (t.key !== ss.key && (ss.key || ss.operator !== "Exists")) return false;
  if (t.effect !== ss.effect && ss.effect) return false;
  if (ss.effect === "NoExecute" && ss.tolerationSeconds != null) {
    if (t.tolerationSeconds == null || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  if (ss.operator === "Equal" || !ss.operator) return t.operator === "Equal" && t.value === ss.value;
  return ss.operator === "Exists";
}

/** `MergeTolerations`: both lists, without any toleration another one already covers (the first of equals kept). */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => tolerates(kept, t))) return;
    if (all.slice(i + 1).some((later) => !jsonEqual(t, later) && tolerates(later, t))) return;
    merged.push(t);
  });
  return merged;
}

/**
 * RuntimeClass: a new pod naming a RuntimeClass gets its overhead
 * (`spec.overhead`) and its scheduling constraints (node selector and
 * tolerations merged into the pod's); a missing class, an overhead the pod
 * set otherwise, or a node selector that contradicts the class's is a 403
 * with upstream's words.
 */
export function runtimeClassPlugin(context: AdmissionContext): AdmissionPlugin {
  /** The pod's RuntimeClass (undefined: it names none), at once when the cache has it. */
  const classOf = (a: AdmissionAttributes): RuntimeClass | undefined | Promise<RuntimeClass | undefined> => {
    const name = (a.object as Pod).spec?.runtimeClassName;
    if (!name) return undefined;
    return whenKnown(context.get(runtimeClasses, "", name), found, a, name);
  };
  const applies = (a: AdmissionAttributes) =>
    a.operation === "CREATE" &&
    a.subresource === "" &&
    resourceKey(a.resource) === podKey &&
    a.object !== undefined;
  return {
    name: "RuntimeClass",
    resources: [podKey],
    admit(a) {
      if (!applies(a)) return;
      const runtimeClass = classOf(a);
      if (runtimeClass === undefined) return;
      return whenKnown(runtimeClass, applyFound, a);
    },
    validate(a) {
      if (!applies(a)) return;
      return whenKnown(classOf(a), checkOverhead, a);
    },
  };
}

/** The RuntimeClass `name` that the pod of `a` names, which must exist. */
function found(runtimeClass: RuntimeClass | undefined, a: AdmissionAttributes, name: string): RuntimeClass {
  if (runtimeClass === undefined) throw forbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
  return runtimeClass;
}

/** The pod of `a` takes what its RuntimeClass sets. */
function applyFound(runtimeClass: RuntimeClass | undefined, a: AdmissionAttributes): void {
  const spec = (a.object as Pod).spec;
  if (spec !== undefined && runtimeClass !== undefined) applyClass(a, spec, runtimeClass);
}

/** The pod's overhead is its RuntimeClass's, or unset when the class (or the pod) sets none. */
function checkOverhead(runtimeClass: RuntimeClass | undefined, a: AdmissionAttributes): void {
  const overhead = (a.object as Pod).spec?.overhead;
  const podFixed = runtimeClass?.overhead?.podFixed;
  if (podFixed !== undefined) {
    if (!sameResources(podFixed, overhead ?? undefined))
      throw forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  } else if (overhead != null)
    throw forbidden(a, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
}

/** What the pod takes from its RuntimeClass: the overhead, the node selector and the tolerations. */
function applyClass(a: AdmissionAttributes, spec: PodSpec, runtimeClass: RuntimeClass): void {
  const podFixed = runtimeClass.overhead?.podFixed;
  if (podFixed !== undefined) {
    if (spec.overhead != null && !sameResources(podFixed, spec.overhead))
      throw forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    spec.overhead = { ...podFixed };
  }
  const scheduling = runtimeClass.scheduling;
  if (scheduling === undefined) return;
  const selector = scheduling.nodeSelector;
  if (spec.nodeSelector == null) {
    if (selector !== undefined) spec.nodeSelector = { ...selector };
  } else {
    for (const [key, value] of Object.entries(selector ?? {})) {
      const podValue = spec.nodeSelector[key];
      if (podValue !== undefined && podValue !== value)
        throw forbidden(
          a,
          `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`,
        );
      spec.nodeSelector[key] = value;
    }
  }
  const tolerations = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations ?? []);
  if (tolerations.length > 0) spec.tolerations = tolerations;
}
