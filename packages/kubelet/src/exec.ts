import type { DeepReadonly, Pod } from "@reconcile/api";
import type { ContainerRuntime, ExecOptions, ExecSession } from "./runtime/runtime.js";
import { RuntimeError } from "./runtime/runtime.js";

// The kubelet's `/exec` and `/attach` endpoints: find the running container
// and start the command in it, or attach to its process, through the runtime.

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
  return withRunningContainer(runtime, pods, namespace, podName, container, (id) =>
    runtime.exec === undefined ? undefined : runtime.exec(id, command, options),
  );
}

/** Attaches to the process of container `container` (the kubelet's `/attach`). */
export function attachInPod(
  runtime: ContainerRuntime,
  pods: readonly DeepReadonly<Pod>[],
  namespace: string,
  podName: string,
  container: string,
): ExecAnswer {
  return withRunningContainer(runtime, pods, namespace, podName, container, (id) => runtime.attach?.(id));
}

function withRunningContainer(
  runtime: ContainerRuntime,
  pods: readonly DeepReadonly<Pod>[],
  namespace: string,
  podName: string,
  container: string,
  start: (containerId: string) => ExecSession | undefined,
): ExecAnswer {
  const pod = pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === podName);
  if (pod === undefined) return { ok: false, code: 404, message: `pod does not exist` };
  const running = runtime
    .listContainers({ podUid: pod.metadata?.uid ?? "" })
    .filter((c) => c.name === container && c.state === "running")
    .sort((a, b) => b.attempt - a.attempt)[0];
  if (running === undefined)
    return { ok: false, code: 400, message: `container not found (${JSON.stringify(container)})` };
  try {
    const session = start(running.id);
    if (session === undefined)
      return { ok: false, code: 400, message: `the container runtime ${runtime.runtimeName} cannot do this` };
    return { ok: true, session };
  } catch (error) {
    if (RuntimeError.isInstance(error))
      return { ok: false, code: 400, message: `container not found (${JSON.stringify(container)})` };
    throw error;
  }
}
