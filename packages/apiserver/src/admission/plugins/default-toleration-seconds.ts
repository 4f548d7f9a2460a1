import { type Pod, type PodSpec, pods } from "@reconcile/api";
import type { Toleration } from "kubernetes-types/core/v1.js";
import { type AdmissionPlugin, resourceKey } from "../plugin.js";

/** `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds` of kube-apiserver. */
export const defaultTolerationSeconds = 300;

const notReadyTaint = "node.kubernetes.io/not-ready";
const unreachableTaint = "node.kubernetes.io/unreachable";

/**
 * The DefaultTolerationSeconds admission plugin: a pod that does not already
 * tolerate the `not-ready` and `unreachable` NoExecute taints gets
 * `{operator: Exists, effect: NoExecute, tolerationSeconds: 300}` for each, so
 * the taint eviction controller evicts it five minutes after its node fails
 * rather than at once. A toleration with an empty key or effect counts as
 * tolerating them.
 */
export function admitDefaultTolerationSeconds(
  spec: PodSpec,
  seconds = defaultTolerationSeconds,
  shared = true,
): void {
  const tolerations = spec.tolerations ?? [];
  let notReady = false;
  let unreachable = false;
  for (const t of tolerations) {
    if (t.effect && t.effect !== "NoExecute") continue;
    if (!t.key) notReady = unreachable = true;
    else if (t.key === notReadyTaint) notReady = true;
    else if (t.key === unreachableTaint) unreachable = true;
  }
  if (notReady && unreachable) return;
  // Most pods tolerate neither: their list is made at its size, not grown.
  if (tolerations.length === 0) {
    spec.tolerations = [
      tolerating(notReadyTaint, seconds, shared),
      tolerating(unreachableTaint, seconds, shared),
    ];
    return;
  }
  const added: Toleration[] = [...tolerations];
  if (!notReady) added.push(tolerating(notReadyTaint, seconds, shared));
  if (!unreachable) added.push(tolerating(unreachableTaint, seconds, shared));
  spec.tolerations = added;
}

/**
 * The toleration of `key` for `seconds`. With the default seconds and
 * `shared`, every pod holds the same two objects, as the token volume's
 * projection is shared (stored objects are never changed in place).
 */
function tolerating(key: string, seconds: number, shared: boolean): Toleration {
  if (shared && seconds === defaultTolerationSeconds)
    return key === notReadyTaint ? defaultNotReady : defaultUnreachable;
  return { key, operator: "Exists", effect: "NoExecute", tolerationSeconds: seconds };
}

/** The tolerations every pod gets by default, shared (exported for the test that checks no write changes them). */
export const defaultNotReady: Toleration = {
  key: notReadyTaint,
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: defaultTolerationSeconds,
};
export const defaultUnreachable: Toleration = {
  key: unreachableTaint,
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: defaultTolerationSeconds,
};

/** DefaultTolerationSeconds over pods created or updated (not their subresources). */
export function defaultTolerationSecondsPlugin(
  seconds = defaultTolerationSeconds,
  shared = true,
): AdmissionPlugin {
  return {
    name: "DefaultTolerationSeconds",
    resources: [resourceKey(pods)],
    admit(a) {
      if (a.subresource !== "" || (a.operation !== "CREATE" && a.operation !== "UPDATE")) return;
      const spec = (a.object as Pod | undefined)?.spec;
      if (spec !== undefined) admitDefaultTolerationSeconds(spec, seconds, shared);
    },
  };
}
