import { spawn } from "node:child_process";
import type { ExecConfig, KubeConfigCluster } from "./document.js";

/** What an exec plugin hands back: a bearer token, or a client certificate and key. */
export interface ExecCredential {
  token?: string | undefined;
  clientCertificateData?: string | undefined;
  clientKeyData?: string | undefined;
  /** When the credential expires (ms since the epoch); undefined: it does not. */
  expiresAt?: number | undefined;
}

const supportedVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];

export interface ExecCredentialOptions {
  /** Whether standard input is a terminal the plugin may use. Default: `process.stdin.isTTY`. */
  stdinIsTerminal?: boolean | undefined;
  /** Where the plugin's standard error goes. Default: this process's. */
  stderr?: "inherit" | "ignore" | undefined;
  now?: (() => number) | undefined;
}

/**
 * client-go's exec credential provider (`plugin/pkg/client/auth/exec`): runs
 * the kubeconfig's command with `KUBERNETES_EXEC_INFO`, reads an
 * `ExecCredential` from its standard output, and keeps it until its
 * `expirationTimestamp` (for ever without one) or until {@link invalidate}
 * (a 401 from the server). Concurrent requests share one run. The plugin's
 * standard error passes through; standard input is the plugin's only when
 * `interactiveMode` allows it and it is a terminal.
 */
export class ExecCredentialProvider {
  readonly #config: ExecConfig;
  readonly #cluster: KubeConfigCluster | undefined;
  readonly #options: ExecCredentialOptions;
  #cached: ExecCredential | undefined;
  #running: Promise<ExecCredential> | undefined;

  constructor(
    config: ExecConfig,
    cluster: KubeConfigCluster | undefined,
    options: ExecCredentialOptions = {},
  ) {
    if (!supportedVersions.includes(config.apiVersion)) {
      throw new TypeError(
        `exec plugin: invalid apiVersion ${JSON.stringify(config.apiVersion)} (supported: ${supportedVersions.join(", ")})`,
      );
    }
    const mode = config.interactiveMode ?? "IfAvailable";
    if (mode !== "Never" && mode !== "IfAvailable" && mode !== "Always") {
      throw new TypeError(
        `exec plugin: invalid interactiveMode ${JSON.stringify(mode)} (one of "Never", "IfAvailable", "Always")`,
      );
    }
    if (typeof config.command !== "string" || config.command === "") {
      throw new TypeError("exec plugin: the command is missing");
    }
    this.#config = config;
    this.#cluster = config.provideClusterInfo ? cluster : undefined;
    this.#options = options;
  }

  /** The current credential, running the plugin when there is none or it has expired. */
  async credential(): Promise<ExecCredential> {
    const now = (this.#options.now ?? Date.now)();
    const cached = this.#cached;
    if (cached !== undefined && (cached.expiresAt === undefined || cached.expiresAt > now)) return cached;
    this.#running ??= this.#run().then(
      (credential) => {
        this.#cached = credential;
        this.#running = undefined;
        return credential;
      },
      (error: unknown) => {
        this.#running = undefined;
        throw error;
      },
    );
    return this.#running;
  }

  /** Forgets the credential `used`, if it is still the current one: the next request runs the plugin again. */
  invalidate(used?: ExecCredential): void {
    if (used === undefined || this.#cached === used) this.#cached = undefined;
  }

  async #run(): Promise<ExecCredential> {
    const config = this.#config;
    const mode = config.interactiveMode ?? "IfAvailable";
    const terminal = this.#options.stdinIsTerminal ?? process.stdin.isTTY === true;
    if (mode === "Always" && !terminal) {
      throw new Error("exec plugin cannot support interactive mode: standard input is not a terminal");
    }
    const interactive = mode !== "Never" && terminal;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const { name, value } of config.env ?? []) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(this.#execInfo(interactive));
    const { code, stdout, notFound } = await runPlugin(
      config,
      env,
      interactive,
      this.#options.stderr ?? "inherit",
    );
    if (notFound) {
      const hint = config.installHint ? `\n\n${config.installHint}` : "";
      throw new Error(`exec: executable ${config.command} not found${hint}`);
    }
    if (code !== 0) throw new Error(`exec: executable ${config.command} failed with exit code ${code}`);
    return parseCredential(stdout, config.apiVersion);
  }

  #execInfo(interactive: boolean): Record<string, unknown> {
    const spec: Record<string, unknown> = { interactive };
    const cluster = this.#cluster;
    if (cluster !== undefined) {
      spec.cluster = {
        server: cluster.server,
        "tls-server-name": cluster["tls-server-name"],
        "insecure-skip-tls-verify": cluster["insecure-skip-tls-verify"],
        "certificate-authority-data": cluster["certificate-authority-data"],
        "proxy-url": cluster["proxy-url"],
      };
    }
    return { kind: "ExecCredential", apiVersion: this.#config.apiVersion, spec };
  }
}

function runPlugin(
  config: ExecConfig,
  env: NodeJS.ProcessEnv,
  interactive: boolean,
  stderr: "inherit" | "ignore",
): Promise<{ code: number | null; stdout: string; notFound: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(config.command, config.args ?? [], {
      env,
      stdio: [interactive ? "inherit" : "ignore", "pipe", stderr],
    });
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") resolve({ code: null, stdout: "", notFound: true });
      else reject(new Error(`exec: executable ${config.command}: ${error.message}`));
    });
    child.once("close", (code) =>
      resolve({ code, stdout: Buffer.concat(chunks).toString("utf8"), notFound: false }),
    );
  });
}

/** Reads a plugin's `ExecCredential`, with client-go's checks and messages. */
export function parseCredential(stdout: string, apiVersion: string): ExecCredential {
  let output: {
    kind?: unknown;
    apiVersion?: unknown;
    status?: {
      token?: unknown;
      clientCertificateData?: unknown;
      clientKeyData?: unknown;
      expirationTimestamp?: unknown;
    };
  };
  try {
    output = JSON.parse(stdout);
  } catch (error) {
    throw new Error(`exec plugin: decoding stdout: ${(error as Error).message}`);
  }
  if (output?.kind !== "ExecCredential" || output.apiVersion !== apiVersion) {
    throw new Error(
      `exec plugin is configured to use API version ${apiVersion}, plugin returned version ${String(output?.apiVersion)}`,
    );
  }
  const status = output.status;
  if (status === undefined || status === null) throw new Error("exec plugin didn't return a status field");
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  const token = text(status.token);
  const cert = text(status.clientCertificateData);
  const key = text(status.clientKeyData);
  if (token === undefined && cert === undefined && key === undefined) {
    throw new Error("exec plugin didn't return a token or cert/key pair");
  }
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error("exec plugin returned only certificate or key, not both");
  }
  let expiresAt: number | undefined;
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    expiresAt = Date.parse(String(status.expirationTimestamp));
    if (Number.isNaN(expiresAt)) {
      throw new Error(
        `exec plugin: invalid expirationTimestamp ${JSON.stringify(status.expirationTimestamp)}`,
      );
    }
  }
  return { token, clientCertificateData: cert, clientKeyData: key, expiresAt };
}
