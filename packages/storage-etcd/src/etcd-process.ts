import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface EtcdProcessOptions {
  /** Where etcd keeps its data. Default: a new temporary directory, removed by `stop()`. */
  dataDir?: string | undefined;
  /** The etcd executable. Default: `etcd` on the PATH. */
  binary?: string | undefined;
  /**
   * Skip fsync (much faster; a machine crash may lose the last writes, a killed
   * process does not). Default: true for a temporary directory, false otherwise.
   */
  unsafeNoFsync?: boolean | undefined;
  /** etcd's `--experimental-watch-progress-notify-interval`, in ms. Default: etcd's (10 minutes). */
  progressNotifyIntervalMs?: number | undefined;
  /** etcd's `--quota-backend-bytes`. Default: etcd's (2 GiB). */
  quotaBackendBytes?: number | undefined;
  /**
   * etcd's `--snapshot-count`: how many applied entries its raft log keeps in
   * memory before a snapshot lets it drop them. Default: etcd's (100,000 in
   * 3.4; 3.6 lowered it to 10,000 for memory).
   */
  snapshotCount?: number | undefined;
  /** Raft heartbeat and election timeout, in ms. Default: 50 and 500. */
  heartbeatMs?: number | undefined;
  electionMs?: number | undefined;
  /** How long to wait for `/health` to answer true. Default: 20,000 ms. */
  startTimeoutMs?: number | undefined;
}

/** One running etcd member started by {@link startEtcd} or {@link startEtcdCluster}. */
export interface EtcdProcess {
  readonly name: string;
  /** `http://127.0.0.1:<client port>`. */
  readonly clientUrl: string;
  readonly dataDir: string;
  /** The process id while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
  shutdown(): Promise<void>;
  /** SIGKILL at once; resolves once the process has exited. */
  kill(): Promise<void>;
  /** Starts the member again over the same data directory and ports. */
  restart(): Promise<void>;
}

export interface EtcdCluster {
  readonly members: readonly EtcdProcess[];
  /** Every member's client URL, for a client's endpoint list. */
  readonly endpoints: string[];
  /** Stops every member and removes the directories this call created. */
  stop(): Promise<void>;
}

/**
 * Starts a single-member etcd on loopback and resolves once it reports
 * healthy. `stop()` ends it and removes its data directory if it was a
 * temporary one. Retries on another port if the chosen one is taken.
 */
export async function startEtcd(options: EtcdProcessOptions = {}): Promise<EtcdCluster> {
  return startEtcdCluster({ ...options, members: 1 });
}

/**
 * Starts a cluster of `members` etcd processes on loopback (distinct client
 * and peer ports, one fresh cluster token) and resolves once every member is
 * healthy.
 */
export async function startEtcdCluster(
  options: EtcdProcessOptions & { members: number },
): Promise<EtcdCluster> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    const ownDirs: string[] = [];
    const members: Member[] = [];
    try {
      const count = options.members;
      const ports = await freePorts(count * 2);
      const start = `${process.pid}-${++starts}`;
      const token = `reconcile-${start}-${Date.now()}`;
      // Names unique to this start: a member that finds another process's etcd
      // on its ports (chosen free, then released) must not take it for itself.
      const names = Array.from({ length: count }, (_, i) => `${count === 1 ? "s1" : `m${i + 1}`}-${start}`);
      const initialCluster = names.map((name, i) => `${name}=http://127.0.0.1:${ports[count + i]}`).join(",");
      for (let i = 0; i < count; i++) {
        let dataDir = options.dataDir !== undefined && count === 1 ? options.dataDir : undefined;
        if (dataDir === undefined) {
          dataDir = mkdtempSync(join(tmpdir(), "reconcile-etcd-"));
          ownDirs.push(dataDir);
        }
        members.push(
          new Member({
            name: names[i]!,
            binary: options.binary ?? "etcd",
            dataDir,
            clientPort: ports[i]!,
            peerPort: ports[count + i]!,
            initialCluster,
            token,
            unsafeNoFsync: options.unsafeNoFsync ?? ownDirs.includes(dataDir),
            progressNotifyIntervalMs: options.progressNotifyIntervalMs,
            quotaBackendBytes: options.quotaBackendBytes,
            snapshotCount: options.snapshotCount,
            heartbeatMs: options.heartbeatMs ?? 50,
            electionMs: options.electionMs ?? 500,
            startTimeoutMs: options.startTimeoutMs ?? 20_000,
          }),
        );
      }
      await Promise.all(members.map((member) => member.start()));
      return {
        members,
        endpoints: members.map((member) => member.clientUrl),
        stop: async () => {
          await Promise.all(members.map((member) => member.shutdown()));
          for (const dir of ownDirs) rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await Promise.all(members.map((member) => member.kill()));
      for (const dir of ownDirs) rmSync(dir, { recursive: true, force: true });
      lastError = error;
      if (!String(error).includes("address already in use")) throw error;
    }
  }
  throw lastError;
}

interface MemberConfig {
  name: string;
  binary: string;
  dataDir: string;
  clientPort: number;
  peerPort: number;
  initialCluster: string;
  token: string;
  unsafeNoFsync: boolean;
  progressNotifyIntervalMs: number | undefined;
  quotaBackendBytes: number | undefined;
  snapshotCount: number | undefined;
  heartbeatMs: number;
  electionMs: number;
  startTimeoutMs: number;
}

class Member implements EtcdProcess {
  readonly #config: MemberConfig;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #log = "";

  constructor(config: MemberConfig) {
    this.#config = config;
  }

  get name(): string {
    return this.#config.name;
  }

  get clientUrl(): string {
    return `http://127.0.0.1:${this.#config.clientPort}`;
  }

  get dataDir(): string {
    return this.#config.dataDir;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  async start(): Promise<void> {
    const c = this.#config;
    const peerUrl = `http://127.0.0.1:${c.peerPort}`;
    const args = [
      `--name=${c.name}`,
      `--data-dir=${c.dataDir}`,
      `--listen-client-urls=${this.clientUrl}`,
      `--advertise-client-urls=${this.clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${c.initialCluster}`,
      "--initial-cluster-state=new",
      `--initial-cluster-token=${c.token}`,
      "--logger=zap",
      "--log-level=warn",
      `--heartbeat-interval=${c.heartbeatMs}`,
      `--election-timeout=${c.electionMs}`,
    ];
    if (c.unsafeNoFsync) args.push("--unsafe-no-fsync");
    if (c.progressNotifyIntervalMs !== undefined)
      args.push(`--experimental-watch-progress-notify-interval=${c.progressNotifyIntervalMs}ms`);
    if (c.quotaBackendBytes !== undefined) args.push(`--quota-backend-bytes=${c.quotaBackendBytes}`);
    if (c.snapshotCount !== undefined) args.push(`--snapshot-count=${c.snapshotCount}`);
    this.#log = "";
    const child = spawn(c.binary, args, { stdio: ["ignore", "ignore", "pipe"] });
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.once("exit", () => {
        if (this.#child === child) this.#child = undefined;
        resolve();
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        this.#log +=
          error.code === "ENOENT"
            ? `\n${c.binary} is not installed (not on the PATH); on Debian: apt-get install etcd-server`
            : `\n${error.message}`;
        if (this.#child === child) this.#child = undefined;
        resolve();
      });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.#log = (this.#log + chunk.toString("utf8")).slice(-8192);
    });
    // The member must not outlive the process that started it (a test run that fails hard).
    running.add(child);
    child.once("exit", () => running.delete(child));
    await this.#waitHealthy(child);
  }

  async restart(): Promise<void> {
    if (this.#child !== undefined) await this.shutdown();
    await this.start();
  }

  async shutdown(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await this.#exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill("SIGKILL");
    await this.#exited;
  }

  /**
   * Whether the server on the client port is this member: another test
   * process may have started its etcd on the same port first (ports are
   * chosen free, then released), and this member then exits with "address
   * already in use" while the other answers every health check. Member
   * names are unique to each start, so the other's member list never names
   * this one.
   */
  async #answersAsItself(): Promise<boolean> {
    const response = await fetch(`${this.clientUrl}/v3/cluster/member/list`, {
      method: "POST",
      body: "{}",
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { members?: { name?: string; peerURLs?: string[] }[] };
    const peerUrl = `http://127.0.0.1:${this.#config.peerPort}`;
    return (body.members ?? []).some((m) => m.name === this.name && m.peerURLs?.includes(peerUrl) === true);
  }

  async #waitHealthy(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.#config.startTimeoutMs;
    while (Date.now() < deadline) {
      if (this.#child !== child) {
        throw new Error(`etcd ${this.name} exited during start: ${this.#log.trim() || "no output"}`);
      }
      try {
        const response = await fetch(`${this.clientUrl}/health`, { signal: AbortSignal.timeout(1_000) });
        const body = (await response.json()) as { health?: string };
        if (body.health === "true" && (await this.#answersAsItself())) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.kill();
    throw new Error(
      `etcd ${this.name} was not healthy within ${this.#config.startTimeoutMs} ms: ${this.#log.trim()}`,
    );
  }
}

/** How many clusters this process has started, for unique member names. */
let starts = 0;

/** Every member this process started and that still runs: killed if the process exits first. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Free loopback ports, each held until all are chosen so that none repeats. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
