// A container runtime that behaves like containerd does, deterministically
// on the injected clock, with no host process: images are pulled (once per
// node, after a delay), containers start, run their command in a built-in
// shell (see `shell/`) or, for images it does not know, run until stopped,
// write log lines, exit with a code, answer probes, exec and attach, and
// honour or ignore SIGTERM. The node's defaults, overridden per pod by
// annotations (see `simulationAnnotationPrefix`), can script all of that
// instead; the defaults succeed at once.
import { type Clock, realClock } from "@reconcile/clock";
import { NodeFilesystem, normalisePath } from "../node-filesystem.js";
import {
  behaviourFor,
  type ContainerBehaviour,
  defaultContainerBehaviour,
  probeAnswer,
} from "./container-behaviour.js";
import {
  argvFor,
  execCollect,
  missingProgram,
  type ProcessSpec,
  scriptedByBehaviour,
} from "./container-process.js";
import { attachTo, startContainerProcess, startExecSession } from "./exec-session.js";
import {
  type ContainerConfig,
  type ContainerRecord,
  type ContainerRuntime,
  type ExecOptions,
  type ExecResult,
  type ExecSession,
  type HttpGetRequest,
  type ImageRecord,
  type LogLine,
  type PodSandbox,
  type PodSandboxConfig,
  type ProbeAnswer,
  type ProbeType,
  type PulledImage,
  RuntimeError,
  type RuntimeEvent,
} from "./runtime.js";
import type { ResolvedPath, ShellHost } from "./shell/index.js";
import { imageLayer, imageRecord, normaliseImage, PodIPs, pulled, sha256Hex } from "./simulated-images.js";
import type { SimulatedRuntimeOptions } from "./simulated-runtime-options.js";

export {
  behaviourFor,
  type ContainerBehaviour,
  defaultContainerBehaviour,
  simulationAnnotationPrefix,
} from "./container-behaviour.js";
export { normaliseImage } from "./simulated-images.js";
export type { ContainerIdentity, SimulatedRuntimeOptions } from "./simulated-runtime-options.js";

const encoder = new TextEncoder();
/** The signal that ends a container's script, made when something first needs it. */
const killSignal = (entry: { kill: AbortController | undefined }) =>
  (entry.kill ??= new AbortController()).signal;

interface SandboxEntry {
  sandbox: PodSandbox;
  config: PodSandboxConfig;
  containers: Set<string>;
}

interface ContainerEntry {
  record: ContainerRecord;
  behaviour: ContainerBehaviour;
  lines: LogLine[];
  followers: Set<{ onLine: (line: LogLine) => void; onEnd: () => void }>;
  timers: Set<unknown>;
  /** A stop in progress: later stops join it. */
  stopping: Promise<void> | undefined;
  /** The container's own writable layer: files written outside its mounts (made on first use). */
  layer: NodeFilesystem | undefined;
  /** The sandbox's IP, for the HTTP GETs it answers. */
  ip: string | undefined;
  /** What the process runs and with which environment. */
  process: ProcessSpec;
  /** Aborted when the process is killed: its script stops. Made on first use (most containers run no script). */
  kill: AbortController | undefined;
  /** The process of a container with `stdin`, which clients attach to. */
  session: ExecSession | undefined;
  stdin: { open: boolean; once: boolean; tty: boolean };
}

/** See the file comment. */
export class SimulatedRuntime implements ContainerRuntime {
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  /** The node's files: what the kubelet mounts, containers see. */
  readonly filesystem: NodeFilesystem;
  readonly #clock: Clock;
  readonly #seed: string;
  readonly #defaults: ContainerBehaviour;
  readonly #behaviour: SimulatedRuntimeOptions["behaviour"];
  readonly #sandboxes = new Map<string, SandboxEntry>();
  readonly #containers = new Map<string, ContainerEntry>();
  readonly #images = new Map<string, ImageRecord>();
  readonly #pulls = new Map<string, Promise<PulledImage>>();
  readonly #listeners = new Set<(event: RuntimeEvent) => void>();
  readonly #ips: PodIPs;
  #counter = 0;
  #revision = 0;
  readonly #idPrefixes: Record<string, string> = {};

  constructor(options: SimulatedRuntimeOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#seed = options.seed ?? "sim";
    this.runtimeName = options.runtimeName ?? "containerd";
    this.runtimeVersion = options.runtimeVersion ?? "1.7.13-sim";
    this.#defaults = { ...defaultContainerBehaviour, ...options.defaults };
    this.#behaviour = options.behaviour;
    this.filesystem = options.filesystem ?? new NodeFilesystem();
    this.#ips = new PodIPs(options.podCIDR ?? "10.244.0.0/24");
    for (const image of options.preloadedImages ?? []) this.#recordImage(normaliseImage(image));
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const id = this.#newId("sandbox");
    const ips = config.hostNetwork ? [] : this.#ips.allocate();
    const sandbox: PodSandbox = {
      id,
      podUid: config.podUid,
      name: config.name,
      namespace: config.namespace,
      attempt: config.attempt,
      state: "ready",
      createdAt: this.#clock.now(),
      ip: ips[0],
      ...(ips.length > 1 ? { additionalIPs: ips.slice(1) } : {}),
    };
    this.#sandboxes.set(id, { sandbox, config, containers: new Set() });
    this.#revision++;
    return id;
  }

  async stopPodSandbox(sandboxId: string): Promise<void> {
    const entry = this.#sandboxes.get(sandboxId);
    if (entry === undefined) return; // stopping is idempotent in CRI
    for (const containerId of entry.containers) {
      const container = this.#containers.get(containerId);
      if (container?.record.state === "running") this.#exit(container, 137, "Error");
    }
    if (entry.sandbox.state === "ready") {
      entry.sandbox = { ...entry.sandbox, state: "notready" };
      this.#revision++;
      this.#ips.release([entry.sandbox.ip, ...(entry.sandbox.additionalIPs ?? [])]);
    }
  }

  async removePodSandbox(sandboxId: string): Promise<void> {
    const entry = this.#sandboxes.get(sandboxId);
    if (entry === undefined) return;
    await this.stopPodSandbox(sandboxId);
    for (const containerId of [...entry.containers]) await this.removeContainer(containerId);
    this.#sandboxes.delete(sandboxId);
    this.#revision++;
  }

  /** Goes up with every change to a sandbox or container (see {@link ContainerRuntime.revision}). */
  get revision(): number {
    return this.#revision;
  }

  listPodSandboxes(filter?: { podUid?: string | undefined }): readonly PodSandbox[] {
    const result: PodSandbox[] = [];
    for (const { sandbox } of this.#sandboxes.values()) {
      if (filter?.podUid === undefined || sandbox.podUid === filter.podUid) result.push(sandbox);
    }
    return result;
  }

  pullImage(image: string, sandbox: PodSandboxConfig): Promise<PulledImage> {
    const behaviour = behaviourFor(this.#defaults, sandbox.annotations, undefined);
    if (behaviour.pullError !== undefined) {
      return Promise.reject(
        new RuntimeError(
          "ImagePull",
          `rpc error: code = NotFound desc = failed to pull and unpack image "${normaliseImage(image)}": ${behaviour.pullError}`,
        ),
      );
    }
    const name = normaliseImage(image);
    const present = this.#images.get(name);
    if (present !== undefined) return Promise.resolve(pulled(present));
    // Concurrent pulls of one image share one download, as containerd's do.
    let pull = this.#pulls.get(name);
    if (pull === undefined) {
      pull = (async () => {
        if (behaviour.pullDelayMs > 0) await this.#clock.sleep(behaviour.pullDelayMs);
        this.#pulls.delete(name);
        return pulled(this.#recordImage(name));
      })();
      this.#pulls.set(name, pull);
    }
    return pull;
  }

  imageStatus(image: string): ImageRecord | undefined {
    return this.#images.get(normaliseImage(image));
  }

  listImages(): readonly ImageRecord[] {
    return [...this.#images.values()];
  }

  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    const sandbox = this.#sandboxes.get(sandboxId);
    if (sandbox === undefined) throw new RuntimeError("NotFound", `sandbox ${sandboxId} not found`);
    if (sandbox.sandbox.state !== "ready")
      throw new RuntimeError("InvalidState", `sandbox ${sandboxId} is not ready`);
    const name = normaliseImage(config.image);
    const image = this.#images.get(name);
    if (image === undefined)
      throw new RuntimeError("NotFound", `image "${name}" not found: pull it before creating a container`);
    const id = this.#newId("container");
    const record: ContainerRecord = {
      id,
      sandboxId,
      podUid: sandbox.sandbox.podUid,
      name: config.name,
      attempt: config.attempt,
      specHash: config.specHash,
      image: name,
      imageRef: pulled(image).imageRef,
      state: "created",
      createdAt: this.#clock.now(),
      startedAt: undefined,
      finishedAt: undefined,
      exitCode: undefined,
      reason: undefined,
      message: undefined,
      mounts: config.mounts ?? [],
    };
    this.#containers.set(id, {
      record,
      // behaviourFor answers a new object: the configured behaviour is assigned onto it.
      behaviour: Object.assign(
        behaviourFor(this.#defaults, sandbox.config.annotations, config.name),
        this.#behaviour?.({
          podUid: sandbox.sandbox.podUid,
          pod: `${sandbox.config.namespace}/${sandbox.config.name}`,
          name: config.name,
          attempt: config.attempt,
          image: name,
        }),
      ),
      lines: [],
      followers: new Set(),
      timers: new Set(),
      stopping: undefined,
      layer: undefined,
      ip: sandbox.sandbox.ip,
      process: {
        image: name,
        command: config.command,
        args: config.args,
        env: config.envs,
        hostname: config.hostname ?? sandbox.config.name,
      },
      kill: undefined,
      session: undefined,
      stdin: { open: config.stdin === true, once: config.stdinOnce === true, tty: config.tty === true },
    });
    sandbox.containers.add(id);
    this.#emit("ContainerCreated", record);
    return id;
  }

  async startContainer(containerId: string): Promise<void> {
    const entry = this.#entry(containerId);
    if (entry.record.state !== "created")
      throw new RuntimeError(
        "InvalidState",
        `container ${containerId} is ${entry.record.state}, not created`,
      );
    const { behaviour } = entry;
    if (behaviour.startDelayMs > 0) await this.#clock.sleep(behaviour.startDelayMs);
    if (entry.record.state !== "created") return; // stopped while starting
    const argv = scriptedByBehaviour(behaviour) ? undefined : argvFor(entry.process);
    const missing = argv === undefined ? undefined : missingProgram(argv);
    if (missing !== undefined) {
      this.#exit(entry, 128, "StartError", missing);
      return;
    }
    const now = this.#clock.now();
    entry.record = { ...entry.record, state: "running", startedAt: now };
    if (argv !== undefined) {
      this.#emit("ContainerStarted", entry.record);
      this.#runProcess(entry, argv);
      return;
    }
    const greeting = `simulated container ${entry.record.name} started (image ${entry.record.image})`;
    for (const text of (behaviour.log ?? greeting).split("\n")) {
      if (text !== "") this.#write(entry, "stdout", text);
    }
    if (Number.isFinite(behaviour.exitAfterMs)) {
      this.#after(entry, behaviour.exitAfterMs, () => {
        if (entry.record.state !== "running") return;
        this.#write(
          entry,
          behaviour.exitCode === 0 ? "stdout" : "stderr",
          `exiting with code ${behaviour.exitCode}`,
        );
        this.#exit(entry, behaviour.exitCode, behaviour.exitReason);
      });
    }
    if (Number.isFinite(behaviour.logEveryMs) && behaviour.logEveryMs > 0) this.#scheduleTick(entry, 1);
    this.#emit("ContainerStarted", entry.record);
  }

  stopContainer(containerId: string, gracePeriodSeconds: number): Promise<void> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined || entry.record.state === "exited") return Promise.resolve();
    if (entry.record.state !== "running") {
      this.#exit(entry, 0, "Completed");
      return Promise.resolve();
    }
    if (entry.stopping !== undefined) return entry.stopping;
    const graceMs = Math.max(0, gracePeriodSeconds) * 1000;
    const { behaviour } = entry;
    entry.stopping = new Promise<void>((resolve) => {
      this.#write(entry, "stdout", "received SIGTERM");
      const exitsAt =
        behaviour.termination === "ignore" ? Number.POSITIVE_INFINITY : behaviour.terminationDelayMs;
      const finish = (code: number) => {
        if (entry.record.state === "running") this.#exit(entry, code, code === 0 ? "Completed" : "Error");
        resolve();
      };
      if (exitsAt <= graceMs) {
        const code = behaviour.termination === "graceful" ? 0 : 143;
        if (exitsAt === 0) finish(code);
        else this.#after(entry, exitsAt, () => finish(code));
      } else if (graceMs === 0) {
        finish(137);
      } else {
        this.#after(entry, graceMs, () => finish(137));
      }
    });
    return entry.stopping;
  }

  async removeContainer(containerId: string): Promise<void> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return;
    if (entry.record.state === "running") this.#exit(entry, 137, "Error");
    for (const timer of entry.timers) this.#clock.clearTimeout(timer);
    this.#containers.delete(containerId);
    this.#sandboxes.get(entry.record.sandboxId)?.containers.delete(containerId);
    this.#emit("ContainerDeleted", entry.record);
  }

  listContainers(filter?: { podUid?: string | undefined }): readonly ContainerRecord[] {
    const result: ContainerRecord[] = [];
    if (filter?.podUid !== undefined) {
      for (const sandbox of this.#sandboxes.values()) {
        if (sandbox.sandbox.podUid !== filter.podUid) continue;
        for (const id of sandbox.containers) {
          const entry = this.#containers.get(id);
          if (entry !== undefined) result.push(entry.record);
        }
      }
      return result;
    }
    for (const entry of this.#containers.values()) result.push(entry.record);
    return result;
  }

  containerStatus(containerId: string): ContainerRecord | undefined {
    return this.#containers.get(containerId)?.record;
  }

  readLogs(containerId: string): readonly LogLine[] {
    return this.#entry(containerId).lines;
  }

  followLogs(containerId: string, onLine: (line: LogLine) => void, onEnd: () => void): () => void {
    const entry = this.#containers.get(containerId);
    if (entry === undefined || entry.record.state === "exited") {
      queueMicrotask(onEnd);
      return () => {};
    }
    const follower = { onLine, onEnd };
    entry.followers.add(follower);
    return () => entry.followers.delete(follower);
  }

  probe(containerId: string, type: ProbeType): ProbeAnswer | Promise<ProbeAnswer> {
    const entry = this.#entry(containerId);
    const { record, behaviour } = entry;
    if (record.state !== "running" || record.startedAt === undefined)
      return { success: false, output: `container ${record.name} is not running` };
    if (behaviour.probeDelayMs > 0) {
      // The handler answers what it would have answered when it was asked.
      const answer = probeAnswer(
        entry.behaviour,
        this.#clock.now() - (entry.record.startedAt ?? entry.record.createdAt),
        type,
      );
      return this.#clock.sleep(behaviour.probeDelayMs).then(() => answer);
    }
    return probeAnswer(
      entry.behaviour,
      this.#clock.now() - (entry.record.startedAt ?? entry.record.createdAt),
      type,
    );
  }

  /**
   * Runs a command in the container through the built-in shell (see
   * `shell/`): files resolve through the container's mounts (read-only ones
   * refuse writes), else to its own layer; time is the runtime's clock. A
   * program the shell does not have exits 127.
   */
  async execSync(containerId: string, command: readonly string[], timeoutMs: number): Promise<ExecResult> {
    const entry = this.#entry(containerId);
    if (entry.record.state !== "running")
      throw new RuntimeError("InvalidState", `container ${containerId} is not running`);
    return execCollect(command, entry.process, this.#shellHost(entry), timeoutMs);
  }

  exec(containerId: string, command: readonly string[], options: ExecOptions): ExecSession {
    const entry = this.#entry(containerId);
    if (entry.record.state !== "running")
      throw new RuntimeError("InvalidState", `container ${containerId} is not running`);
    return startExecSession(command, entry.process, this.#shellHost(entry), options);
  }

  attach(containerId: string): ExecSession {
    const entry = this.#entry(containerId);
    if (entry.record.state !== "running")
      throw new RuntimeError("InvalidState", `container ${containerId} is not running`);
    const follow = (listener: (stream: LogLine["stream"], data: Uint8Array) => void) =>
      this.followLogs(
        containerId,
        (line) => listener(line.stream, encoder.encode(`${line.text}\n`)),
        () => {},
      );
    const exitCode = () => entry.record.exitCode ?? 0;
    return attachTo(entry.session, follow, killSignal(entry), exitCode, entry.stdin.once);
  }

  async httpGet(containerId: string, request: HttpGetRequest): Promise<{ statusCode: number }> {
    const entry = this.#entry(containerId);
    const host = request.host || entry.ip || "127.0.0.1";
    const url = `${request.scheme.toLowerCase()}://${host}:${request.port}${request.path.startsWith("/") ? "" : "/"}${request.path}`;
    if (entry.behaviour.httpDelayMs > 0) await this.#clock.sleep(entry.behaviour.httpDelayMs);
    if (entry.record.state !== "running" || entry.behaviour.httpRefused)
      throw new RuntimeError(
        "Unsupported",
        `Get "${url}": dial tcp ${host}:${request.port}: connect: connection refused`,
      );
    return { statusCode: 200 };
  }

  readFile(containerId: string, path: string): string | undefined {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return undefined;
    const target = this.#resolve(entry, path);
    const data = target.filesystem.readFile(target.path);
    return data === undefined ? undefined : new TextDecoder().decode(data);
  }

  /** Where a container path lives: under the deepest mount that holds it, else in the container's layer. */
  #resolve(entry: ContainerEntry, path: string): ResolvedPath {
    const normal = normalisePath(path);
    let best: ContainerRecord["mounts"][number] | undefined;
    for (const mount of entry.record.mounts) {
      const root = normalisePath(mount.containerPath);
      if (
        (normal === root || normal.startsWith(`${root}/`) || root === "/") &&
        (best === undefined || root.length > normalisePath(best.containerPath).length)
      )
        best = mount;
    }
    if (best === undefined) {
      entry.layer ??= imageLayer(entry.process.hostname);
      return { filesystem: entry.layer, path: normal, readOnly: false };
    }
    const rest = normal.slice(normalisePath(best.containerPath).length);
    return {
      filesystem: this.filesystem,
      path: normalisePath(`${best.hostPath}/${rest}`),
      readOnly: best.readOnly,
    };
  }

  onEvent(listener: (event: RuntimeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Clears every timer (exits, ticks, stops in progress); the runtime is unusable afterwards. */
  close(): void {
    for (const entry of this.#containers.values()) {
      for (const timer of entry.timers) this.#clock.clearTimeout(timer);
      entry.timers.clear();
    }
  }

  #entry(containerId: string): ContainerEntry {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) throw new RuntimeError("NotFound", `container ${containerId} not found`);
    return entry;
  }

  /** Runs the container's program; its end is the container's exit. */
  #runProcess(entry: ContainerEntry, argv: readonly string[]): void {
    const started = startContainerProcess(
      argv,
      entry.process,
      this.#shellHost(entry),
      entry.stdin,
      (stream, text) => this.#write(entry, stream, text),
    );
    entry.session = started.session;
    // A killed process (stop, removal) has its exit recorded by what killed it.
    started.exited.then(
      (code) => {
        if (entry.record.state === "running") this.#exit(entry, code, undefined);
      },
      () => {},
    );
  }

  #shellHost(entry: ContainerEntry): ShellHost {
    return {
      clock: this.#clock,
      resolve: (path) => this.#resolve(entry, path),
      hostname: entry.process.hostname,
      signal: killSignal(entry),
    };
  }

  #exit(entry: ContainerEntry, exitCode: number, reason: string | undefined, message?: string): void {
    entry.kill?.abort(RuntimeError.withoutStack("InvalidState", `container ${entry.record.id} exited`));
    entry.record = {
      ...entry.record,
      state: "exited",
      finishedAt: this.#clock.now(),
      exitCode,
      reason: reason ?? (exitCode === 0 ? "Completed" : "Error"),
      message,
    };
    for (const timer of entry.timers) this.#clock.clearTimeout(timer);
    entry.timers.clear();
    for (const follower of entry.followers) follower.onEnd();
    entry.followers.clear();
    this.#emit("ContainerStopped", entry.record);
  }

  #write(entry: ContainerEntry, stream: LogLine["stream"], text: string): void {
    const line: LogLine = { time: this.#clock.now(), stream, text };
    entry.lines.push(line);
    for (const follower of entry.followers) follower.onLine(line);
  }

  #scheduleTick(entry: ContainerEntry, n: number): void {
    this.#after(entry, entry.behaviour.logEveryMs, () => {
      if (entry.record.state !== "running") return;
      this.#write(entry, "stdout", `tick ${n}`);
      this.#scheduleTick(entry, n + 1);
    });
  }

  #after(entry: ContainerEntry, ms: number, callback: () => void): void {
    const timer = this.#clock.setTimeout(() => {
      entry.timers.delete(timer);
      callback();
    }, ms);
    entry.timers.add(timer);
  }

  /** Every container change is emitted, so it is counted here. */
  #emit(type: RuntimeEvent["type"], record: ContainerRecord): void {
    this.#revision++;
    if (this.#listeners.size === 0) return;
    const event: RuntimeEvent = { type, podUid: record.podUid, containerId: record.id };
    for (const listener of this.#listeners) listener(event);
  }

  #newId(kind: string): string {
    this.#counter++;
    // 64 hex digits, unique per seed: a hash of the seed and kind, then the counter.
    const prefix = (this.#idPrefixes[kind] ??= sha256Hex(`${this.#seed}/${kind}`).slice(0, 48));
    return prefix + this.#counter.toString(16).padStart(16, "0");
  }

  #recordImage(name: string): ImageRecord {
    let image = this.#images.get(name);
    if (image === undefined) this.#images.set(name, (image = imageRecord(name)));
    return image;
  }
}
