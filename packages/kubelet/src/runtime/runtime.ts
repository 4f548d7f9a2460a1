import { ReconcileError } from "@reconcile/api";
// A container-runtime interface shaped like CRI's RuntimeService and
// ImageService (k8s.io/cri-api): pod sandboxes and containers that are run,
// created, started, stopped with a grace period, removed, listed and
// inspected, images that are pulled, and container logs. The kubelet derives
// every pod status from what this interface reports, never from its own
// bookkeeping, so a runtime that runs real processes can replace the
// simulated one without touching the kubelet.
//
// Reads (list, status, logs) are synchronous snapshots: a runtime lives in the
// kubelet's process, and the generic PLEG relists every second.

/** CRI's `PodSandboxState`. */
export type SandboxState = "ready" | "notready";

/** CRI's `ContainerState`. */
export type ContainerState = "created" | "running" | "exited" | "unknown";

/** What a sandbox is created from (CRI's `PodSandboxConfig`, reduced). */
export interface PodSandboxConfig {
  podUid: string;
  name: string;
  namespace: string;
  /** How many sandboxes this pod had before (0 for the first). */
  attempt: number;
  hostNetwork: boolean;
  labels: Readonly<Record<string, string>>;
  /** The pod's annotations: a runtime may read its behaviour from them. */
  annotations: Readonly<Record<string, string>>;
}

export interface PodSandbox {
  readonly id: string;
  readonly podUid: string;
  readonly name: string;
  readonly namespace: string;
  readonly attempt: number;
  readonly state: SandboxState;
  /** ms since the epoch. */
  readonly createdAt: number;
  /** The pod IP; undefined for host-network sandboxes (the pod takes the node's IPs). */
  readonly ip: string | undefined;
  /** Its IPs of the node's other pod CIDRs (CRI's `additional_ips`): a dual-stack pod's second family. */
  readonly additionalIPs?: readonly string[] | undefined;
}

/** What a container is created from (CRI's `ContainerConfig`, reduced). */
export interface ContainerConfig {
  name: string;
  /** The image as the pod spec names it. */
  image: string;
  /** Restart count this instance stands for (0 for the first run). */
  attempt: number;
  /** `ContainerSpecHash`: a new hash means a changed spec. */
  specHash: string;
  /** The command and args with `$(VAR)` references already expanded, as the kubelet hands them to CRI. */
  command?: readonly string[] | undefined;
  args?: readonly string[] | undefined;
  /** The container's environment (CRI's `envs`), in the pod's order after the kubelet's expansion. */
  envs?: readonly { name: string; value: string }[] | undefined;
  /** The hostname the container sees (the pod's `hostname`, else its name). */
  hostname?: string | undefined;
  /** The container keeps a standard input open that clients attach to (`stdin`), a terminal (`tty`). */
  stdin?: boolean | undefined;
  /** The input closes when the first attached client detaches, and stays closed (`stdinOnce`). */
  stdinOnce?: boolean | undefined;
  tty?: boolean | undefined;
  /** Directories and files of the node bind-mounted into the container (CRI's `mounts`). */
  mounts?: readonly Mount[] | undefined;
}

/** A bind mount of a node path into a container (CRI's `Mount`, plus the pod's volume name). */
export interface Mount {
  /** The volume's name in the pod spec. */
  readonly name: string;
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readOnly: boolean;
}

/** How an exec's streams are set up (the `stdin` and `tty` of `kubectl exec -i -t`). */
export interface ExecOptions {
  stdin: boolean;
  tty: boolean;
}

/** A running exec: its standard input, its output, its end. */
export interface ExecSession {
  /** Input from the client (keystrokes under a tty). */
  write(data: Uint8Array): void;
  /** The client closed its input (end of file). */
  closeStdin(): void;
  /** The client's terminal changed size. */
  resize(width: number, height: number): void;
  /** Output as the command writes it; under a tty everything is stdout. */
  onOutput(listener: (stream: "stdout" | "stderr", data: Uint8Array) => void): void;
  /** The exit code, once the command has ended. */
  readonly exited: Promise<number>;
  /** The client went away: the command is stopped. */
  kill(): void;
}

/** What `execSync` answers (CRI's `ExecSyncResponse`). */
export interface ExecResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** An HTTP GET the kubelet sends to a container (a probe or a lifecycle hook). */
export interface HttpGetRequest {
  readonly scheme: "HTTP" | "HTTPS";
  readonly host: string;
  readonly port: number | string;
  readonly path: string;
}

export interface ContainerRecord {
  readonly id: string;
  readonly sandboxId: string;
  readonly podUid: string;
  readonly name: string;
  readonly attempt: number;
  readonly specHash: string;
  /** Normalised image name, e.g. `docker.io/library/nginx:latest`. */
  readonly image: string;
  /** `docker.io/library/nginx@sha256:<64 hex>`. */
  readonly imageRef: string;
  readonly state: ContainerState;
  readonly createdAt: number;
  readonly startedAt: number | undefined;
  readonly finishedAt: number | undefined;
  readonly exitCode: number | undefined;
  /** `Completed`, `Error`, `OOMKilled`, … for exited containers. */
  readonly reason: string | undefined;
  readonly message: string | undefined;
  /** The bind mounts it was created with. */
  readonly mounts: readonly Mount[];
}

export interface ImageRecord {
  /** `sha256:<64 hex>`. */
  readonly id: string;
  readonly repoTags: readonly string[];
  readonly repoDigests: readonly string[];
  readonly size: number;
}

export interface PulledImage {
  readonly imageRef: string;
  readonly size: number;
}

/** One line of a container's log, as CRI log files record them. */
export interface LogLine {
  /** ms since the epoch (the runtime's clock). */
  readonly time: number;
  readonly stream: "stdout" | "stderr";
  readonly text: string;
}

/** The probe kinds of the kubelet's prober. */
export type ProbeType = "startup" | "liveness" | "readiness";

export interface ProbeAnswer {
  readonly success: boolean;
  /** What the prober prints on failure (`HTTP probe failed with statuscode: 503`). */
  readonly output: string;
}

/** A change the runtime saw happen, for an evented PLEG. */
export interface RuntimeEvent {
  readonly type: "ContainerStarted" | "ContainerStopped" | "ContainerCreated" | "ContainerDeleted";
  readonly podUid: string;
  readonly containerId: string;
}

/** The container runtime the kubelet drives. Every failure rejects with a `RuntimeError`. */
export interface ContainerRuntime {
  /** `<runtimeName>://` prefixes container IDs (e.g. `containerd`). */
  readonly runtimeName: string;
  readonly runtimeVersion: string;

  runPodSandbox(config: PodSandboxConfig): Promise<string>;
  /** Stops every container of the sandbox at once (SIGKILL) and marks it not ready. */
  stopPodSandbox(sandboxId: string): Promise<void>;
  removePodSandbox(sandboxId: string): Promise<void>;
  listPodSandboxes(filter?: { podUid?: string | undefined }): readonly PodSandbox[];
  /**
   * A number that changes whenever a sandbox or container is added, changes
   * state or is removed. A runtime that keeps one lets the PLEG skip listing
   * when nothing changed since its last relist; one that does not is listed
   * every time.
   */
  readonly revision?: number | undefined;

  pullImage(image: string, sandbox: PodSandboxConfig): Promise<PulledImage>;
  imageStatus(image: string): ImageRecord | undefined;
  listImages(): readonly ImageRecord[];

  createContainer(sandboxId: string, config: ContainerConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /**
   * SIGTERM, then SIGKILL once `gracePeriodSeconds` have passed; resolves when
   * the container has exited.
   */
  stopContainer(containerId: string, gracePeriodSeconds: number): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  listContainers(filter?: { podUid?: string | undefined }): readonly ContainerRecord[];
  containerStatus(containerId: string): ContainerRecord | undefined;

  /** Every log line of the container so far. */
  readLogs(containerId: string): readonly LogLine[];
  /**
   * Calls `onLine` for each new line and `onEnd` once the container exits or
   * is removed; returns a function that unsubscribes.
   */
  followLogs(containerId: string, onLine: (line: LogLine) => void, onEnd: () => void): () => void;

  /**
   * Runs a command in a running container and waits for it (CRI's
   * `ExecSync`); rejects with a `Timeout` RuntimeError once `timeoutMs` has
   * passed (0: no limit). Runtimes that cannot exec leave it out.
   */
  execSync?(containerId: string, command: readonly string[], timeoutMs: number): Promise<ExecResult>;
  /**
   * Starts a command in a running container with its streams attached (CRI's
   * `Exec`, what `kubectl exec` reaches): input as the client sends it,
   * output as the command writes it, and its exit code. Throws a NotFound or
   * InvalidState RuntimeError for a container that is not running.
   */
  exec?(containerId: string, command: readonly string[], options: ExecOptions): ExecSession;
  /**
   * Attaches to a running container's own process (CRI's `Attach`, what
   * `kubectl attach` and `kubectl run -it` reach): its output from now on,
   * and its standard input if it keeps one open. `kill` detaches.
   */
  attach?(containerId: string): ExecSession;
  /**
   * Sends an HTTP GET to the container, as the kubelet's HTTP lifecycle
   * handler does; resolves with the status code, rejects with the transport
   * error's text (`dial tcp …: connect: connection refused`).
   */
  httpGet?(containerId: string, request: HttpGetRequest): Promise<{ statusCode: number }>;
  /** A file as the container sees it (its own layer or a mount), or undefined. */
  readFile?(containerId: string, path: string): string | undefined;
  /**
   * Answers a probe of a running container, at once or after the time the
   * handler takes (the prober fails it at `timeoutSeconds`). Runtimes that
   * cannot probe leave it out.
   */
  probe?(containerId: string, type: ProbeType): ProbeAnswer | Promise<ProbeAnswer>;
  /** Subscribes to container lifecycle events; returns a function that unsubscribes. */
  onEvent?(listener: (event: RuntimeEvent) => void): () => void;
}

const runtimeErrorMarker = Symbol.for("reconcile.kubelet.runtime-error");

/** The CRI-level failures a runtime names. */
export type RuntimeErrorCode =
  | "NotFound"
  | "ImagePull"
  | "StartError"
  | "InvalidState"
  | "Unsupported"
  | "Timeout";

/**
 * What a runtime rejects with. `code` names the CRI-level failure (the CRI's
 * own names, which the kubelet switches on, rather than the
 * `<package>.<reason>` style of other codes).
 */
export class RuntimeError extends ReconcileError<RuntimeErrorCode> {
  readonly [runtimeErrorMarker] = true;

  constructor(code: RuntimeErrorCode, message: string) {
    super(code, message);
    this.name = "RuntimeError";
  }

  static override isInstance(error: unknown): error is RuntimeError {
    return ReconcileError.hasMarker(error, runtimeErrorMarker);
  }

  /**
   * One made without a stack trace, for a reason nothing reads the stack of
   * (what an exited container's process is aborted with): taking the stack
   * costs more than the rest of a container's exit.
   */
  static withoutStack(code: RuntimeErrorCode, message: string): RuntimeError {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new RuntimeError(code, message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}
