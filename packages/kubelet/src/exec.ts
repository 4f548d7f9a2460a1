import type { DeepReadonly, Pod } from "@reconcile/api";
import type { ContainerRuntime, ExecOptions, ExecSession } from "./runtime/runtime.js";
import { RuntimeError } from "./runtime/runtime.js";

// The kubelet's `/exec/{namespace}/{pod}/{container}` endpoint: finds the
// running container and starts the command in it through the runtime.

/** What the kubelet answers to an exec: the session, or the HTTP error it would send. */
export type ExecAnswer = { ok: true; session: ExecSession } | { ok: false; code: number; message: string };

/** Starts `command` in container `container` of the pod `namespace/podName` (see the file comment). */
export function execInPod(
  runtime: ContainerRuntime,
  pods: readonly DeepReadonly<Pod>[],
  namespace: string,
  podName: string,
  container: string,
  command: readonly string[],
  options: ExecOptions,
): ExecAnswer {
  const pod = pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === podName);
  if (pod === undefined) return { ok: false, code: 404, message: `pod does not exist` };
  if (runtime.exec === undefined)
    return { ok: false, code: 400, message: `the container runtime ${runtime.runtimeName} cannot exec` };
  const running = runtime
    .listContainers({ podUid: pod.metadata?.uid ?? "" })
    .filter((c) => c.name === container && c.state === "running")
    .sort((a, b) => b.attempt - a.attempt)[0];
  if (running === undefined)
    return { ok: false, code: 400, message: `container not found (${JSON.stringify(container)})` };
  try {
    return { ok: true, session: runtime.exec(running.id, command, options) };
  } catch (error) {
    if (RuntimeError.isInstance(error))
      return { ok: false, code: 400, message: `container not found (${JSON.stringify(container)})` };
    throw error;
  }
}
