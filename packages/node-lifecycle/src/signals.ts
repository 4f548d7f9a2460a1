import { setMaxListeners } from "node:events";

/**
 * A signal that aborts with `parent`, for a component's many internal
 * listeners (workers, periodic loops, sleeps): the caller's signal gets one
 * listener, so a manager running many controllers on one signal stays under
 * Node's listener warning.
 */
export function childSignal(parent: AbortSignal): AbortSignal {
  const child = new AbortController();
  setMaxListeners(0, child.signal);
  if (parent.aborted) child.abort(parent.reason);
  else parent.addEventListener("abort", () => child.abort(parent.reason), { once: true });
  return child.signal;
}
