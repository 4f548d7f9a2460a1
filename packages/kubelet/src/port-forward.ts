import type { DeepReadonly, Pod } from "@reconcile/api";
import { simulationAnnotationPrefix } from "./runtime/container-behaviour.js";
import type { ContainerRuntime } from "./runtime/runtime.js";

// The kubelet's `/portForward`: a connection to a port in the pod's network
// namespace. In the simulated runtime a running container that declares the
// port in `ports[].containerPort` answers HTTP on it — every request gets a
// `200 OK` whose body names the pod, container and port (`Connection:
// close`); a container with `sim.reconcile.dev/http-refused: "true"`, or a
// port no running container declares, refuses the connection, with the
// message containerd's port-forward gives.

/** One forwarded connection, as the API server's `PodPortStream` wants it. */
export interface PortStream {
  write(data: Uint8Array): void;
  end(): void;
  onData(listener: (data: Uint8Array) => void): void;
  onEnd(listener: (error?: string) => void): void;
}

export type PortForwardAnswer = { ok: true; stream: PortStream } | { ok: false; message: string };

/** Opens a connection to `port` of the pod `namespace/podName` (see the file comment). */
export function portForwardInPod(
  runtime: ContainerRuntime,
  pods: readonly DeepReadonly<Pod>[],
  namespace: string,
  podName: string,
  port: number,
): PortForwardAnswer {
  const pod = pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === podName);
  const sandbox = runtime
    .listPodSandboxes({ podUid: pod?.metadata?.uid ?? "" })
    .find((s) => s.state === "ready");
  const sandboxId = sandbox?.id ?? "";
  const refused = (reason: string): PortForwardAnswer => ({
    ok: false,
    message: `error forwarding port ${port} to pod ${sandboxId}, uid : ${reason}`,
  });
  if (pod === undefined || sandbox === undefined) return refused(`pod not found ("${podName}_${namespace}")`);
  const running = new Set(
    runtime
      .listContainers({ podUid: pod.metadata?.uid ?? "" })
      .filter((c) => c.state === "running")
      .map((c) => c.name),
  );
  const annotations = pod.metadata?.annotations ?? {};
  const listener = (pod.spec?.containers ?? []).find(
    (c) =>
      running.has(c.name) &&
      (c.ports ?? []).some((p) => p.containerPort === port && (p.protocol ?? "TCP") === "TCP") &&
      (annotations[`${simulationAnnotationPrefix}http-refused.${c.name}`] ??
        annotations[`${simulationAnnotationPrefix}http-refused`]) !== "true",
  );
  if (listener === undefined)
    return refused(
      `failed to execute portforward in network namespace "/var/run/netns/cni-${sandboxId.slice(0, 8)}": failed to connect to localhost:${port} inside namespace "${sandboxId}", IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused IPv6 dial tcp6 [::1]:${port}: connect: connection refused `,
    );
  return { ok: true, stream: httpResponder(`${namespace}/${podName}`, listener.name, port) };
}

/** A tiny HTTP server on one connection: it answers the first request, then closes. */
function httpResponder(pod: string, container: string, port: number): PortStream {
  const dataListeners: ((data: Uint8Array) => void)[] = [];
  const endListeners: ((error?: string) => void)[] = [];
  let received = "";
  let done = false;
  const close = () => {
    if (done) return;
    done = true;
    // Listeners may attach right after the stream is handed over: end on the next turn.
    queueMicrotask(() => {
      for (const listener of endListeners) listener();
    });
  };
  return {
    write(data) {
      if (done) return;
      received += new TextDecoder().decode(data);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const [requestLine = ""] = received.slice(0, end).split("\r\n");
      const [method = "GET", target = "/"] = requestLine.split(" ");
      const body = `reconcile: ${pod} container ${container} answered ${method} ${target} on port ${port}\n`;
      const head = `HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      const response = method === "HEAD" ? head : head + body;
      const bytes = new TextEncoder().encode(response);
      queueMicrotask(() => {
        for (const listener of dataListeners) listener(bytes);
        close();
      });
    },
    end: close,
    onData(listener) {
      dataListeners.push(listener);
    },
    onEnd(listener) {
      endListeners.push(listener);
    },
  };
}
