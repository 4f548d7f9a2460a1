// A container runtime that runs nothing but behaves like containerd does,
// deterministically on the injected clock: images are pulled (once per node,
// after a delay), containers start, write log lines, exit with a code, answer
// probes, and honour or ignore SIGTERM. What each container does comes from
// the node's defaults, overridden per pod by annotations (see
// `simulationAnnotationPrefix`); the defaults succeed at once.
import { createHash } from "node:crypto";
import { type Clock, realClock } from "@reconcile/clock";
import { NodeFilesystem, normalisePath } from "../node-filesystem.js";
import {
  type ContainerConfig,
  type ContainerRecord,
  type ContainerRuntime,
  type ExecResult,
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

/** Annotations `sim.reconcile.dev/<key>` (every container) and `sim.reconcile.dev/<key>.<container>` (one). */
export const simulationAnnotationPrefix = "sim.reconcile.dev/";

/** What one simulated container does. Durations in ms; `Infinity` = never. */
export interface ContainerBehaviour {
  /** Time to pull an image not yet on the node. Annotation `pull-delay`. */
  pullDelayMs: number;
  /** A pull fails with this message (ErrImagePull). Annotation `pull-error`. */
  pullError: string | undefined;
  /** Time from StartContainer until the process runs. Annotation `start-delay`. */
  startDelayMs: number;
  /** The process exits this long after it started. Annotation `exit-after`. */
  exitAfterMs: number;
  /** Its exit code. Annotation `exit-code`. */
  exitCode: number;
  /** The termination reason reported on exit; default `Completed` for 0, `Error` otherwise. Annotation `exit-reason`. */
  exitReason: string | undefined;
  /** Readiness probes fail until the container has run this long. Annotation `ready-after`. */
  readyAfterMs: number;
  /** Startup probes fail until the container has run this long. Annotation `startup-after`. */
  startupAfterMs: number;
  /** Liveness probes fail once the container has run this long. Annotation `liveness-fail-after`. */
  livenessFailAfterMs: number;
  /**
   * On SIGTERM: `graceful` exits 0, `default` dies of the signal (143),
   * `ignore` runs on until SIGKILL at the grace period's end (137).
   * Annotation `termination`.
   */
  termination: "graceful" | "default" | "ignore";
  /** Time the process needs to exit after SIGTERM (SIGKILL still ends it at the grace period). Annotation `termination-delay`. */
  terminationDelayMs: number;
  /** Lines written to stdout at start, separated by newlines. Annotation `log`. Default: one line saying the container started. */
  log: string | undefined;
  /** A `tick <n>` line every this long while running. Annotation `log-every`. */
  logEveryMs: number;
  /** Every probe handler takes this long to answer (over `timeoutSeconds` it fails). Annotation `probe-delay`. */
  probeDelayMs: number;
  /** An HTTP GET (a lifecycle hook's) takes this long to answer. Annotation `http-delay`. */
  httpDelayMs: number;
  /** Nothing listens: HTTP GETs fail with "connection refused". Annotation `http-refused` (`true`). */
  httpRefused: boolean;
}

export const defaultContainerBehaviour: Readonly<ContainerBehaviour> = Object.freeze({
  pullDelayMs: 0,
  pullError: undefined,
  startDelayMs: 0,
  exitAfterMs: Number.POSITIVE_INFINITY,
  exitCode: 0,
  exitReason: undefined,
  readyAfterMs: 0,
  startupAfterMs: 0,
  livenessFailAfterMs: Number.POSITIVE_INFINITY,
  termination: "graceful",
  terminationDelayMs: 0,
  log: undefined,
  logEveryMs: Number.POSITIVE_INFINITY,
  probeDelayMs: 0,
  httpDelayMs: 0,
  httpRefused: false,
});

export interface SimulatedRuntimeOptions {
  /** Seeds container and sandbox IDs, so that two nodes never share one. Default "sim". */
  seed?: string | undefined;
  /** The node's pod CIDR; pods get addresses from .2 up, as host-local IPAM hands them out. Default "10.244.0.0/24". */
  podCIDR?: string | undefined;
  /** The node's behaviour defaults, before pod annotations. Default: {@link defaultContainerBehaviour}. */
  defaults?: Partial<ContainerBehaviour> | undefined;
  /** Images already on the node (no pull needed). Default: none. */
  preloadedImages?: readonly string[] | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Runtime name in container IDs and `containerRuntimeVersion`. Default "containerd". */
  runtimeName?: string | undefined;
  /** Default "1.7.13-sim". */
  runtimeVersion?: string | undefined;
  /** The node's files, which mounts expose to containers. Default: an empty one. */
  filesystem?: NodeFilesystem | undefined;
}

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
  readonly #sandboxes = new Map<string, SandboxEntry>();
  readonly #containers = new Map<string, ContainerEntry>();
  readonly #images = new Map<string, ImageRecord>();
  readonly #pulls = new Map<string, Promise<PulledImage>>();
  readonly #listeners = new Set<(event: RuntimeEvent) => void>();
  readonly #ipBase: number;
  readonly #ipCount: number;
  readonly #ipsInUse = new Set<number>();
  #nextIp = 2;
  #counter = 0;
  readonly #idPrefixes: Record<string, string> = {};

  constructor(options: SimulatedRuntimeOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#seed = options.seed ?? "sim";
    this.runtimeName = options.runtimeName ?? "containerd";
    this.runtimeVersion = options.runtimeVersion ?? "1.7.13-sim";
    this.#defaults = { ...defaultContainerBehaviour, ...options.defaults };
    this.filesystem = options.filesystem ?? new NodeFilesystem();
    const [base, count] = parseCIDR(options.podCIDR ?? "10.244.0.0/24");
    this.#ipBase = base;
    this.#ipCount = count;
    for (const image of options.preloadedImages ?? []) this.#recordImage(normaliseImage(image));
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const id = this.#newId("sandbox");
    const ip = config.hostNetwork ? undefined : this.#allocateIp();
    const sandbox: PodSandbox = {
      id,
      podUid: config.podUid,
      name: config.name,
      namespace: config.namespace,
      attempt: config.attempt,
      state: "ready",
      createdAt: this.#clock.now(),
      ip,
    };
    this.#sandboxes.set(id, { sandbox, config, containers: new Set() });
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
      this.#releaseIp(entry.sandbox.ip);
    }
  }

  async removePodSandbox(sandboxId: string): Promise<void> {
    const entry = this.#sandboxes.get(sandboxId);
    if (entry === undefined) return;
    await this.stopPodSandbox(sandboxId);
    for (const containerId of [...entry.containers]) await this.removeContainer(containerId);
    this.#sandboxes.delete(sandboxId);
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
      behaviour: behaviourFor(this.#defaults, sandbox.config.annotations, config.name),
      lines: [],
      followers: new Set(),
      timers: new Set(),
      stopping: undefined,
      layer: undefined,
      ip: sandbox.sandbox.ip,
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
    const now = this.#clock.now();
    entry.record = { ...entry.record, state: "running", startedAt: now };
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
      const answer = this.#probeAnswer(entry, type);
      return this.#clock.sleep(behaviour.probeDelayMs).then(() => answer);
    }
    return this.#probeAnswer(entry, type);
  }

  /**
   * Runs a command of a small shell in the container: `sh -c` scripts of
   * commands joined by `;`, `&&` and `||`; `true`, `false`, `exit N`,
   * `sleep N` (on the clock), `echo … [> file | >> file]`, `cat`, `ls`,
   * `test`/`[ -e|-f|-d path ]`, `touch`, `mkdir -p`, `rm [-rf]`. Paths resolve
   * through the container's mounts (read-only ones refuse writes), else to its
   * own layer. Anything else exits 127.
   */
  async execSync(containerId: string, command: readonly string[], timeoutMs: number): Promise<ExecResult> {
    const entry = this.#entry(containerId);
    if (entry.record.state !== "running")
      throw new RuntimeError("InvalidState", `container ${containerId} is not running`);
    const run = runShell(command, {
      clock: this.#clock,
      resolve: (path) => this.#resolve(entry, path),
    });
    if (!(timeoutMs > 0)) return run;
    const stop = new AbortController();
    const timeout = this.#clock.sleep(timeoutMs, { signal: stop.signal }).then(
      () => {
        throw new RuntimeError("Timeout", `command ${JSON.stringify(command.join(" "))} timed out`);
      },
      () => new Promise<never>(() => {}),
    );
    try {
      return await Promise.race([run, timeout]);
    } finally {
      stop.abort();
    }
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
      entry.layer ??= new NodeFilesystem();
      return { filesystem: entry.layer, path: normal, readOnly: false };
    }
    const rest = normal.slice(normalisePath(best.containerPath).length);
    return {
      filesystem: this.filesystem,
      path: normalisePath(`${best.hostPath}/${rest}`),
      readOnly: best.readOnly,
    };
  }

  #probeAnswer(entry: ContainerEntry, type: ProbeType): ProbeAnswer {
    const { record, behaviour } = entry;
    const ranMs = this.#clock.now() - (record.startedAt ?? record.createdAt);
    switch (type) {
      case "readiness":
        return ranMs >= behaviour.readyAfterMs
          ? { success: true, output: "" }
          : { success: false, output: "HTTP probe failed with statuscode: 503" };
      case "startup":
        return ranMs >= behaviour.startupAfterMs
          ? { success: true, output: "" }
          : { success: false, output: "HTTP probe failed with statuscode: 503" };
      case "liveness":
        return ranMs < behaviour.livenessFailAfterMs
          ? { success: true, output: "" }
          : { success: false, output: "HTTP probe failed with statuscode: 500" };
    }
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

  #exit(entry: ContainerEntry, exitCode: number, reason: string | undefined): void {
    entry.record = {
      ...entry.record,
      state: "exited",
      finishedAt: this.#clock.now(),
      exitCode,
      reason: reason ?? (exitCode === 0 ? "Completed" : "Error"),
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

  #emit(type: RuntimeEvent["type"], record: ContainerRecord): void {
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
    if (image === undefined) {
      const digest = sha256Hex(name);
      image = {
        id: `sha256:${sha256Hex(`config:${name}`)}`,
        repoTags: [name],
        repoDigests: [`${repositoryOf(name)}@sha256:${digest}`],
        // A stable, plausible size: 5–100 MB.
        size: 5_000_000 + (Number.parseInt(digest.slice(0, 8), 16) % 95_000_000),
      };
      this.#images.set(name, image);
    }
    return image;
  }

  #allocateIp(): string {
    // host-local IPAM: .0 is the network, .1 the gateway, the last the broadcast.
    const usable = this.#ipCount - 3;
    for (let i = 0; i < usable; i++) {
      const offset = 2 + ((this.#nextIp - 2 + i) % usable);
      if (!this.#ipsInUse.has(offset)) {
        this.#ipsInUse.add(offset);
        this.#nextIp = offset + 1;
        return formatIPv4(this.#ipBase + offset);
      }
    }
    throw new RuntimeError("StartError", "failed to allocate an IP: the node's pod CIDR is exhausted");
  }

  #releaseIp(ip: string | undefined): void {
    if (ip !== undefined) this.#ipsInUse.delete(parseIPv4(ip) - this.#ipBase);
  }
}

/**
 * The behaviour of container `container` (undefined: pod-wide keys only) of a
 * pod with `annotations`, over `defaults`. Unparseable values are ignored.
 */
export function behaviourFor(
  defaults: Readonly<ContainerBehaviour>,
  annotations: Readonly<Record<string, string>>,
  container: string | undefined,
): ContainerBehaviour {
  const behaviour = { ...defaults };
  // Most pods carry no simulation annotation: nothing to read then.
  let annotated = false;
  for (const key in annotations) {
    if (key.startsWith(simulationAnnotationPrefix)) {
      annotated = true;
      break;
    }
  }
  if (!annotated) return behaviour;
  const read = (key: string): string | undefined =>
    (container !== undefined ? annotations[`${simulationAnnotationPrefix}${key}.${container}`] : undefined) ??
    annotations[`${simulationAnnotationPrefix}${key}`];
  const duration = (key: string, field: keyof ContainerBehaviour) => {
    const value = read(key);
    if (value === undefined) return;
    const ms = parseDuration(value);
    if (ms !== undefined) (behaviour as Record<string, unknown>)[field] = ms;
  };
  duration("pull-delay", "pullDelayMs");
  duration("start-delay", "startDelayMs");
  duration("exit-after", "exitAfterMs");
  duration("ready-after", "readyAfterMs");
  duration("startup-after", "startupAfterMs");
  duration("liveness-fail-after", "livenessFailAfterMs");
  duration("termination-delay", "terminationDelayMs");
  duration("log-every", "logEveryMs");
  duration("probe-delay", "probeDelayMs");
  duration("http-delay", "httpDelayMs");
  const httpRefused = read("http-refused");
  if (httpRefused === "true" || httpRefused === "false") behaviour.httpRefused = httpRefused === "true";
  const pullError = read("pull-error");
  if (pullError !== undefined) behaviour.pullError = pullError;
  const exitCode = read("exit-code");
  if (exitCode !== undefined && /^\d{1,3}$/.test(exitCode)) behaviour.exitCode = Number(exitCode);
  const exitReason = read("exit-reason");
  if (exitReason !== undefined) behaviour.exitReason = exitReason;
  const termination = read("termination");
  if (termination === "graceful" || termination === "default" || termination === "ignore")
    behaviour.termination = termination;
  const log = read("log");
  if (log !== undefined) behaviour.log = log;
  return behaviour;
}

/** Go-style durations (`500ms`, `2s`, `1m30s`, `1h`), or `never`. */
export function parseDuration(value: string): number | undefined {
  if (value === "never") return Number.POSITIVE_INFINITY;
  if (value === "0") return 0;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (const match of value.matchAll(pattern)) {
    total += Number(match[1]) * units[match[2] as string]!;
    consumed += match[0].length;
  }
  return consumed === value.length && consumed > 0 ? total : undefined;
}

/** `nginx` → `docker.io/library/nginx:latest`, as containerd names images. */
export function normaliseImage(image: string): string {
  let name = image;
  const firstSlash = name.indexOf("/");
  const first = firstSlash === -1 ? "" : name.slice(0, firstSlash);
  if (firstSlash === -1) name = `docker.io/library/${name}`;
  else if (!first.includes(".") && !first.includes(":") && first !== "localhost") name = `docker.io/${name}`;
  const lastSlash = name.lastIndexOf("/");
  if (!name.includes("@") && !name.slice(lastSlash).includes(":")) name = `${name}:latest`;
  return name;
}

function repositoryOf(name: string): string {
  const at = name.indexOf("@");
  if (at !== -1) return name.slice(0, at);
  const lastSlash = name.lastIndexOf("/");
  const colon = name.indexOf(":", lastSlash);
  return colon === -1 ? name : name.slice(0, colon);
}

function pulled(image: ImageRecord): PulledImage {
  return { imageRef: image.repoDigests[0] ?? image.id, size: image.size };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function parseCIDR(cidr: string): [base: number, count: number] {
  const match = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
  const bits = match ? Number(match[2]) : Number.NaN;
  if (!match || !(bits >= 8 && bits <= 30))
    throw new TypeError(
      `SimulatedRuntime: podCIDR must be an IPv4 CIDR from /8 to /30, got ${JSON.stringify(cidr)}`,
    );
  const size = 2 ** (32 - bits);
  const base = parseIPv4(match[1] as string);
  return [base - (base % size), size];
}

function parseIPv4(ip: string): number {
  return ip.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
}

function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/** A container path resolved to the filesystem that holds it. */
interface ResolvedPath {
  filesystem: NodeFilesystem;
  path: string;
  readOnly: boolean;
}

interface ShellContext {
  clock: Clock;
  resolve: (path: string) => ResolvedPath;
}

/** See `SimulatedRuntime.execSync`. */
async function runShell(command: readonly string[], context: ShellContext): Promise<ExecResult> {
  const [program, flag, script] = command;
  if (
    (program === "sh" || program === "/bin/sh" || program === "bash" || program === "/bin/bash") &&
    flag === "-c"
  )
    return runScript(script ?? "", context);
  return runCommand([...command], context);
}

async function runScript(script: string, context: ShellContext): Promise<ExecResult> {
  let stdout = "";
  let stderr = "";
  let exitCode = 0;
  let skip: "&&" | "||" | undefined;
  for (const { words, next } of parseScript(script)) {
    const runs = skip === undefined || (skip === "&&" ? exitCode === 0 : exitCode !== 0);
    if (runs && words.length > 0) {
      if (words[0] === "exit") {
        return { exitCode: Number(words[1] ?? exitCode) || 0, stdout, stderr };
      }
      const result = await runCommand(words, context);
      stdout += result.stdout;
      stderr += result.stderr;
      exitCode = result.exitCode;
    }
    skip = next === ";" ? undefined : next;
  }
  return { exitCode, stdout, stderr };
}

/** Splits a script into commands (words, quotes honoured) and the operator after each. */
function parseScript(script: string): { words: string[]; next: ";" | "&&" | "||" | undefined }[] {
  const commands: { words: string[]; next: ";" | "&&" | "||" | undefined }[] = [];
  let words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < script.length; i++) {
    const char = script[i] as string;
    const pair = script.slice(i, i + 2);
    if (char === "'" || char === '"') {
      const end = script.indexOf(char, i + 1);
      word = (word ?? "") + script.slice(i + 1, end === -1 ? script.length : end);
      i = end === -1 ? script.length : end;
    } else if (pair === "&&" || pair === "||" || char === ";" || char === "\n") {
      if (word !== undefined) words.push(word);
      word = undefined;
      commands.push({ words, next: pair === "&&" || pair === "||" ? pair : ";" });
      words = [];
      if (pair === "&&" || pair === "||") i++;
    } else if (char === " " || char === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === ">") {
      if (word !== undefined) words.push(word);
      word = undefined;
      if (script[i + 1] === ">") {
        words.push(">>");
        i++;
      } else words.push(">");
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  commands.push({ words, next: undefined });
  return commands;
}

async function runCommand(argv: string[], context: ShellContext): Promise<ExecResult> {
  const ok = (stdout = ""): ExecResult => ({ exitCode: 0, stdout, stderr: "" });
  const fail = (stderr: string, exitCode = 1): ExecResult => ({
    exitCode,
    stdout: "",
    stderr: `${stderr}\n`,
  });
  const [name = "", ...args] = argv;
  const program = name.slice(name.lastIndexOf("/") + 1);
  switch (program) {
    case "true":
    case ":":
      return ok();
    case "false":
      return { exitCode: 1, stdout: "", stderr: "" };
    case "sleep": {
      const seconds = Number(args[0]);
      if (!(seconds >= 0)) return fail(`sleep: invalid time interval '${args[0] ?? ""}'`);
      await context.clock.sleep(seconds * 1000);
      return ok();
    }
    case "echo": {
      const redirect = args.findIndex((a) => a === ">" || a === ">>");
      const text = `${(redirect === -1 ? args : args.slice(0, redirect)).join(" ")}\n`;
      if (redirect === -1) return ok(text);
      const file = args[redirect + 1];
      if (file === undefined) return fail("sh: syntax error: unexpected newline", 2);
      const target = context.resolve(file);
      if (target.readOnly) return fail(`sh: can't create ${file}: Read-only file system`);
      const before =
        args[redirect] === ">>" ? new TextDecoder().decode(target.filesystem.readFile(target.path)) : "";
      target.filesystem.writeFile(target.path, before + text);
      return ok();
    }
    case "cat": {
      let stdout = "";
      for (const file of args) {
        const target = context.resolve(file);
        const data = target.filesystem.readFile(target.path);
        if (data === undefined)
          return {
            exitCode: 1,
            stdout,
            stderr: target.filesystem.isDirectory(target.path)
              ? `cat: read error: Is a directory\n`
              : `cat: can't open '${file}': No such file or directory\n`,
          };
        stdout += new TextDecoder().decode(data);
      }
      return ok(stdout);
    }
    case "ls": {
      const dir = args.find((a) => !a.startsWith("-")) ?? "/";
      const target = context.resolve(dir);
      if (target.filesystem.readFile(target.path) !== undefined) return ok(`${dir}\n`);
      const names = target.filesystem.list(target.path);
      if (names === undefined) return fail(`ls: ${dir}: No such file or directory`);
      return ok(names.map((n) => `${n}\n`).join(""));
    }
    case "test":
    case "[": {
      const operands = program === "[" ? args.slice(0, -1) : args;
      const [test, path] = operands;
      if (path === undefined) return { exitCode: 1, stdout: "", stderr: "" };
      const target = context.resolve(path);
      const holds =
        test === "-d"
          ? target.filesystem.isDirectory(target.path)
          : test === "-f"
            ? target.filesystem.readFile(target.path) !== undefined
            : target.filesystem.exists(target.path);
      return { exitCode: holds ? 0 : 1, stdout: "", stderr: "" };
    }
    case "touch":
    case "mkdir":
    case "rm": {
      for (const path of args.filter((a) => !a.startsWith("-"))) {
        const target = context.resolve(path);
        if (target.readOnly) return fail(`${program}: ${path}: Read-only file system`);
        if (program === "touch") {
          if (target.filesystem.readFile(target.path) === undefined)
            target.filesystem.writeFile(target.path, "");
        } else if (program === "mkdir") target.filesystem.mkdir(target.path);
        else if (target.filesystem.exists(target.path) || !args.includes("-f")) {
          if (!target.filesystem.exists(target.path))
            return fail(`rm: can't remove '${path}': No such file or directory`);
          target.filesystem.remove(target.path);
        }
      }
      return ok();
    }
    default:
      return fail(`sh: ${name}: not found`, 127);
  }
}
