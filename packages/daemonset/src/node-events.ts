import type { DeepReadonly, Node } from "@reconcile/api";

/**
 * Whether a node update can change no DaemonSet's mind (upstream
 * `shouldIgnoreNodeUpdate`): the conditions' types and statuses are the
 * same, and nothing else changed but the resourceVersion and the
 * conditions' times.
 */
export function shouldIgnoreNodeUpdate(oldNode: DeepReadonly<Node>, node: DeepReadonly<Node>): boolean {
  const conditions = (n: DeepReadonly<Node>) =>
    new Map((n.status?.conditions ?? []).map((c) => [c.type, c.status]));
  const before = conditions(oldNode);
  const after = conditions(node);
  if (before.size !== after.size) return false;
  for (const [type, status] of before) if (after.get(type) !== status) return false;
  const strip = (n: DeepReadonly<Node>) =>
    JSON.stringify({
      ...n,
      metadata: { ...n.metadata, resourceVersion: undefined },
      status: { ...n.status, conditions: undefined },
    });
  return strip(oldNode) === strip(node);
}
