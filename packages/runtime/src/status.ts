import { type DeepReadonly, isConflict, type KubeObject, rfc3339 } from "@reconcile/api";
import type { ResourceClient } from "@reconcile/client";

/** A `metav1.Condition`. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration?: number | undefined;
  lastTransitionTime?: string | undefined;
}

/**
 * Sets `condition` in `conditions` (apimachinery's `meta.SetStatusCondition`):
 * a new type is appended; an existing one takes the new reason, message and
 * observedGeneration, and `lastTransitionTime` moves to `now` only when the
 * status changes. Returns whether anything changed.
 */
export function setCondition(conditions: Condition[], condition: Condition, now: Date): boolean {
  const existing = conditions.find((c) => c.type === condition.type);
  const time = condition.lastTransitionTime ?? rfc3339(now.getTime());
  if (existing === undefined) {
    conditions.push({ ...condition, lastTransitionTime: time });
    return true;
  }
  let changed = false;
  if (existing.status !== condition.status) {
    existing.status = condition.status;
    existing.lastTransitionTime = time;
    changed = true;
  }
  for (const field of ["reason", "message", "observedGeneration"] as const) {
    if (existing[field] !== condition[field]) {
      (existing as unknown as Record<string, unknown>)[field] = condition[field];
      changed = true;
    }
  }
  return changed;
}

/** The condition of `type`, if any (`meta.FindStatusCondition`). */
export function findCondition(
  conditions: readonly DeepReadonly<Condition>[] | undefined,
  type: string,
): DeepReadonly<Condition> | undefined {
  return conditions?.find((c) => c.type === type);
}

export interface UpdateStatusOptions {
  signal?: AbortSignal | undefined;
  /** Attempts in all, as client-go's `retry.DefaultRetry` (5). */
  attempts?: number | undefined;
}

/**
 * Writes a status through the status subresource, retrying on 409 Conflict
 * (client-go's `retry.RetryOnConflict`): each attempt reads the object from
 * the server, lets `mutate` change a copy's status (returning false means no
 * change is needed: nothing is written) and sends `updateStatus`. Resolves
 * the object as written (or as read, when nothing changed).
 */
export async function updateStatus<T extends KubeObject>(
  client: ResourceClient<T>,
  name: string,
  mutate: (obj: T) => unknown,
  options: UpdateStatusOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const current = await client.get(name, { signal: options.signal });
    const copy = structuredClone(current);
    const before = JSON.stringify((current as { status?: unknown }).status ?? null);
    const wanted = mutate(copy);
    if (wanted === false || JSON.stringify((copy as { status?: unknown }).status ?? null) === before)
      return current;
    try {
      return await client.updateStatus(copy, { signal: options.signal });
    } catch (error) {
      if (!isConflict(error) || attempt >= attempts) throw error;
    }
  }
}
