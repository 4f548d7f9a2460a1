import type { Taint, Toleration } from "kubernetes-types/core/v1.js";
import type { DeepReadonly } from "./types.js";

type AnyTaint = Taint | DeepReadonly<Taint>;
type AnyToleration = Toleration | DeepReadonly<Toleration>;

/** Two taints are the same taint when key and effect match; value and timeAdded do not count (upstream `Taint.MatchTaint`). */
export function matchTaint(a: AnyTaint, b: AnyTaint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Whether `taints` hold one matching `taint` by key and effect (upstream `TaintExists`). */
export function taintExists(taints: readonly AnyTaint[] | undefined, taint: AnyTaint): boolean {
  return (taints ?? []).some((t) => matchTaint(t, taint));
}

/**
 * Whether `toleration` tolerates `taint` (upstream `Toleration.ToleratesTaint`):
 * an empty effect matches every effect, an empty key with `Exists` every
 * key, no operator means `Equal`, and an operator it does not know tolerates
 * nothing. The scheduler, the node lifecycle and the taint eviction
 * controllers all decide with this one function.
 */
export function toleratesTaint(toleration: AnyToleration, taint: AnyTaint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? "") {
    case "":
    case "Equal":
      return (toleration.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    default:
      return false;
  }
}
