import type { DeepReadonly, Pod } from "@reconcile/api";
import type { Container } from "kubernetes-types/core/v1.js";
import { simulationAnnotationPrefix } from "./runtime/container-behaviour.js";
import type { ContainerRuntime } from "./runtime/runtime.js";
import { normaliseImage, repositoryOf } from "./runtime/simulated-images.js";

// The kubelet's `/portForward`: a connection to a port in the pod's network
// namespace. In the simulated runtime a running container that declares the
// port in `ports[].containerPort` answers HTTP on it — every request gets a
// `200 OK` whose body names the pod, container and port (`Connection:
// close`); a container with `sim.reconcile.dev/http-refused: "true"`, or a
// port no running container declares, refuses the connection, with the
// message containerd's port-forward gives. The web servers' images listen
// where their images do (nginx and httpd on 80, declared or not, unless the
// pod replaces their command) and serve their default page.

/** One forwarded connection, as the API server's `PodPortStream` wants it. */
export interface PortStream {
  write(data: Uint8Array): void;
  end(): void;
  onData(listener: (data: Uint8Array) => void): void;
  onEnd(listener: (error?: string) => void): void;
}

export type PortForwardAnswer = { ok: true; stream: PortStream } | { ok: false; message: string };

/** What a web server's image serves on its port when nobody configured it. */
interface ImagePage {
  readonly port: number;
  readonly server: string;
  readonly index: string;
}

const nginxIndex = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`;

/** The web servers whose images the simulated runtime knows, by repository. */
const imagePages: Readonly<Record<string, ImagePage>> = {
  "docker.io/library/nginx": { port: 80, server: "nginx/1.27.3", index: nginxIndex },
  "docker.io/library/httpd": {
    port: 80,
    server: "Apache/2.4.62 (Unix)",
    index: "<html><body><h1>It works!</h1></body></html>\n",
  },
};

/** The page a container's image serves on `port`, if it is a web server left to its own command. */
function imagePage(container: DeepReadonly<Container>, port: number): ImagePage | undefined {
  if ((container.command ?? []).length > 0 || (container.args ?? []).length > 0) return undefined;
  const page = imagePages[repositoryOf(normaliseImage(container.image ?? ""))];
  return page?.port === port ? page : undefined;
}

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
      ((c.ports ?? []).some((p) => p.containerPort === port && (p.protocol ?? "TCP") === "TCP") ||
        imagePage(c, port) !== undefined) &&
      (annotations[`${simulationAnnotationPrefix}http-refused.${c.name}`] ??
        annotations[`${simulationAnnotationPrefix}http-refused`]) !== "true",
  );
  if (listener === undefined)
    return refused(
      `failed to execute portforward in network namespace "/var/run/netns/cni-${sandboxId.slice(0, 8)}": failed to connect to localhost:${port} inside namespace "${sandboxId}", IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused IPv6 dial tcp6 [::1]:${port}: connect: connection refused `,
    );
  return {
    ok: true,
    stream: httpResponder(`${namespace}/${podName}`, listener.name, port, imagePage(listener, port)),
  };
}

/** A tiny HTTP server on one connection: it answers the first request, then closes. */
function httpResponder(pod: string, container: string, port: number, page?: ImagePage): PortStream {
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
      const { status, type, body, server } = answer(
        page,
        target,
        `${pod} container ${container}`,
        method,
        port,
      );
      const head = `HTTP/1.1 ${status}\r\n${server}Content-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
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

/** The response to one request: the image's page (or its 404), else the text naming who answered. */
function answer(
  page: ImagePage | undefined,
  target: string,
  who: string,
  method: string,
  port: number,
): { status: string; type: string; body: string; server: string } {
  if (page === undefined)
    return {
      status: "200 OK",
      type: "text/plain; charset=utf-8",
      body: `reconcile: ${who} answered ${method} ${target} on port ${port}\n`,
      server: "",
    };
  const path = target.split("?")[0];
  const server = `Server: ${page.server}\r\n`;
  if (path === "/" || path === "/index.html")
    return { status: "200 OK", type: "text/html", body: page.index, server };
  return {
    status: "404 Not Found",
    type: "text/html",
    body: "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n</body>\r\n</html>\r\n",
    server,
  };
}
