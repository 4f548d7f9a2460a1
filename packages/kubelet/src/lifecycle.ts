// The kubelet's lifecycle handler runner (`pkg/kubelet/lifecycle/handlers.go`):
// a container's postStart and preStop hooks run as a command in the
// container (exec), an HTTP GET to it, or a pause (sleep). A failure is
// described the way upstream words it; callers decide what it costs (a
// postStart failure kills the container, a preStop failure is only reported).
import { type DeepReadonly, errorMessage } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { Container, LifecycleHandler, Pod } from "kubernetes-types/core/v1.js";
import type { ContainerRuntime } from "./runtime/runtime.js";

export interface HandlerTarget {
  readonly runtime: ContainerRuntime;
  readonly clock: Clock;
  readonly pod: DeepReadonly<Pod>;
  readonly container: DeepReadonly<Container>;
  /** The runtime's container ID (no `<runtime>://` prefix). */
  readonly containerId: string;
}

/**
 * Runs one handler (`handlerRunner.Run`); resolves with undefined on success
 * or with the failure's message. `signal` aborting ends a sleep early, which
 * counts as a failure, as a terminated container does upstream.
 */
export async function runLifecycleHandler(
  target: HandlerTarget,
  handler: DeepReadonly<LifecycleHandler>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { runtime, container, pod } = target;
  const where = `for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(formatPod(pod))}`;
  if (handler.exec !== undefined) {
    const command = handler.exec.command ?? [];
    let error: string | undefined;
    let output = "";
    try {
      if (runtime.execSync === undefined) throw new Error("the container runtime does not support exec");
      const result = await whileNotAborted(runtime.execSync(target.containerId, command, 0), signal);
      output = result.stdout + result.stderr;
      // The CRI client's CodeExitError.
      if (result.exitCode !== 0)
        error = `command '${command.join(" ")}' exited with ${result.exitCode}: ${result.stderr}`;
    } catch (caught) {
      error = errorMessage(caught);
    }
    if (error === undefined) return undefined;
    return `Exec lifecycle hook ([${command.join(" ")}]) ${where} failed - error: ${error}, message: ${JSON.stringify(output)}`;
  }
  if (handler.httpGet !== undefined) {
    const { httpGet } = handler;
    try {
      if (runtime.httpGet === undefined)
        throw new Error("the container runtime does not support HTTP handlers");
      // Any answer is a success: only a transport error fails an HTTP hook, as upstream.
      const request = runtime.httpGet(target.containerId, {
        scheme: httpGet.scheme === "HTTPS" ? "HTTPS" : "HTTP",
        host: httpGet.host ?? "",
        port: resolvePort(container, httpGet.port),
        path: httpGet.path ?? "",
      });
      await whileNotAborted(request, signal);
      return undefined;
    } catch (caught) {
      return `HTTP lifecycle hook (${httpGet.path ?? ""}) ${where} failed - error: ${errorMessage(caught)}`;
    }
  }
  if (handler.sleep !== undefined) {
    const seconds = handler.sleep.seconds;
    try {
      await target.clock.sleep(seconds * 1000, signal === undefined ? undefined : { signal });
      return undefined;
    } catch {
      return `Sleep lifecycle hook (${seconds}) ${where} failed - error: container terminated before sleep hook finished`;
    }
  }
  return `Cannot run handler: invalid handler: ${JSON.stringify(handler)}`;
}

/** A named port (`http`) resolves through the container's ports. */
export function resolvePort(container: DeepReadonly<Container>, port: number | string): number | string {
  if (typeof port === "number" || /^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort ?? port;
}

/** `format.Pod`: `name_namespace(uid)`. */
export function formatPod(pod: DeepReadonly<Pod>): string {
  return `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;
}

/** `work`, or a "context canceled" rejection once `signal` aborts. */
function whileNotAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  work.catch(() => {});
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      if (signal.aborted) reject(new Error("context canceled"));
      signal.addEventListener("abort", () => reject(new Error("context canceled")), { once: true });
    }),
  ]);
}
