import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { errorMessage, ReconcileError } from "@reconcile/api";
import { createHttpClient, type HttpClient } from "@reconcile/client";
import {
  delegatedAuthorizer,
  jsonLogger,
  LeaderElectionLostError,
  prometheusRestClientMetrics,
} from "@reconcile/runtime";
import { collectDefaultMetrics, Registry } from "prom-client";
import { ControllerManager } from "./controller-manager.js";
import { newControllerDescriptors } from "./default-controllers.js";

/** The flags of the `reconcile-controller-manager` command, parsed. */
export interface ControllerManagerFlags {
  kubeconfig: string | undefined;
  controllers: string;
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  leaseNamespace: string;
  leaseName: string;
  bindAddress: string;
  port: number;
  /** Paths served without a reviewed token (`--authorization-always-allow-paths`). */
  alwaysAllowPaths: string[];
  kubeApiQps: number;
  kubeApiBurst: number;
  /** `--cluster-signing-cert-file` and `--cluster-signing-key-file`: the CA the CSR signer signs with. */
  clusterSigningCertFile: string | undefined;
  clusterSigningKeyFile: string | undefined;
  /** `--cluster-signing-duration`: the longest certificate signed. */
  clusterSigningDurationMs: number;
  help: boolean;
}

const flagErrorMarker = Symbol.for("reconcile.controller-manager.invalid-flag");

/** A flag was wrong; the command prints it and exits 1. `code` is `"controller-manager.invalid-flag"`. */
export class FlagError extends ReconcileError<"controller-manager.invalid-flag"> {
  readonly [flagErrorMarker] = true;
  constructor(message: string) {
    super("controller-manager.invalid-flag", message);
    this.name = "FlagError";
  }

  static override isInstance(error: unknown): error is FlagError {
    return ReconcileError.hasMarker(error, flagErrorMarker);
  }
}

/**
 * Parses kube-controller-manager's flags that apply here, with its defaults:
 * `--kubeconfig`, `--controllers` (`*`), `--leader-elect` (true),
 * `--leader-elect-lease-duration` (15s), `--leader-elect-renew-deadline`
 * (10s), `--leader-elect-retry-period` (2s),
 * `--leader-elect-resource-namespace` (kube-system),
 * `--leader-elect-resource-name` (kube-controller-manager), `--bind-address`,
 * `--port` (10257, plain HTTP), `--kube-api-qps` (20), `--kube-api-burst` (30).
 * Positional arguments are refused, as upstream refuses them.
 */
export function parseControllerManagerFlags(argv: readonly string[]): ControllerManagerFlags {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new FlagError(errorMessage(error));
  }
  const { values, positionals } = parsed;
  if (positionals.length > 0) {
    throw new FlagError(
      `"kube-controller-manager" does not take any arguments, got ${JSON.stringify(positionals)}`,
    );
  }
  const flags: ControllerManagerFlags = {
    kubeconfig: values.kubeconfig,
    controllers: values.controllers ?? "*",
    leaderElect: parseBool("--leader-elect", values["leader-elect"] ?? "true"),
    leaseDurationMs: parseDuration(
      "--leader-elect-lease-duration",
      values["leader-elect-lease-duration"] ?? "15s",
    ),
    renewDeadlineMs: parseDuration(
      "--leader-elect-renew-deadline",
      values["leader-elect-renew-deadline"] ?? "10s",
    ),
    retryPeriodMs: parseDuration("--leader-elect-retry-period", values["leader-elect-retry-period"] ?? "2s"),
    leaseNamespace: values["leader-elect-resource-namespace"] ?? "kube-system",
    leaseName: values["leader-elect-resource-name"] ?? "kube-controller-manager",
    bindAddress: values["bind-address"] ?? "127.0.0.1",
    port: parseNumber("--port", values.port ?? "10257", { integer: true, min: 0, max: 65535 }),
    alwaysAllowPaths: (values["authorization-always-allow-paths"] ?? "/healthz,/readyz,/livez")
      .split(",")
      .map((path) => path.trim())
      .filter(Boolean),
    kubeApiQps: parseNumber("--kube-api-qps", values["kube-api-qps"] ?? "20", { min: 0 }),
    kubeApiBurst: parseNumber("--kube-api-burst", values["kube-api-burst"] ?? "30", {
      integer: true,
      min: 1,
    }),
    clusterSigningCertFile: values["cluster-signing-cert-file"],
    clusterSigningKeyFile: values["cluster-signing-key-file"],
    clusterSigningDurationMs: parseDuration(
      "--cluster-signing-duration",
      values["cluster-signing-duration"] ?? "8760h0m0s",
    ),
    help: values.help === true,
  };
  if ((flags.clusterSigningCertFile === undefined) !== (flags.clusterSigningKeyFile === undefined))
    throw new FlagError("--cluster-signing-cert-file and --cluster-signing-key-file must be given together");
  return flags;
}

/**
 * The command: builds an `HttpClient` from the kubeconfig, serves
 * `/healthz`, `/readyz` and `/metrics`, and runs the manager until SIGINT or
 * SIGTERM (or `signal`). Resolves with the exit code: 0 after a clean stop,
 * 1 on a flag error or when leadership is lost (as kube-controller-manager).
 */
export async function runControllerManagerCommand(
  argv: readonly string[],
  options: { signal?: AbortSignal; write?: (line: string) => void; out?: (text: string) => void } = {},
): Promise<number> {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const logger = jsonLogger({ write, bindings: { component: "kube-controller-manager" } });
  let flags: ControllerManagerFlags;
  let manager: ControllerManager;
  let client: HttpClient;
  const registry = new Registry();
  try {
    flags = parseControllerManagerFlags(argv);
    if (flags.help) {
      (options.out ?? ((text: string) => process.stdout.write(text)))(usage(newControllerDescriptors()));
      return 0;
    }
    client = await createHttpClient({
      path: flags.kubeconfig,
      qps: flags.kubeApiQps,
      burst: flags.kubeApiBurst,
      userAgent: "kube-controller-manager/reconcile",
      metrics: prometheusRestClientMetrics(registry),
    });
    const clusterSigning =
      flags.clusterSigningCertFile === undefined || flags.clusterSigningKeyFile === undefined
        ? undefined
        : {
            cert: readFileSync(flags.clusterSigningCertFile, "utf8"),
            key: readFileSync(flags.clusterSigningKeyFile, "utf8"),
            durationMs: flags.clusterSigningDurationMs,
          };
    manager = new ControllerManager({
      client,
      controllers: flags.controllers,
      descriptors: newControllerDescriptors({ clusterSigning }),
      leaderElection: flags.leaderElect && {
        namespace: flags.leaseNamespace,
        name: flags.leaseName,
        leaseDurationMs: flags.leaseDurationMs,
        renewDeadlineMs: flags.renewDeadlineMs,
        retryPeriodMs: flags.retryPeriodMs,
      },
      logger,
      registry,
    });
  } catch (error) {
    write(`Error: ${errorMessage(error)}\n`);
    return 1;
  }
  collectDefaultMetrics({ register: registry });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  options.signal?.addEventListener("abort", onSignal, { once: true });
  // /metrics as kube-controller-manager serves it: the caller's token reviewed by the API server.
  const authorizer = delegatedAuthorizer({ client, alwaysAllowPaths: flags.alwaysAllowPaths });
  const server = await manager.listen({ host: flags.bindAddress, port: flags.port, authorizer });
  logger.info({ url: server.url, controllers: manager.enabledControllers }, "Serving healthz and metrics");
  try {
    await manager.run({ signal: stop.signal });
    return 0;
  } catch (error) {
    if (!LeaderElectionLostError.isInstance(error)) logger.error({ err: error }, "controller manager failed");
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await server.close();
  }
}

/** The `--help` text; `--controllers` is described as upstream describes it. */
export function usage(descriptors: ReturnType<typeof newControllerDescriptors>): string {
  return `reconcile-controller-manager: kube-controller-manager's control loops against any API server.

Flags:
  --kubeconfig string                        kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)
  --controllers string                       A list of controllers to enable. '*' enables all on-by-default controllers,
                                             'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.
                                             All controllers: ${descriptors.knownControllers().join(", ")}
                                             Disabled-by-default controllers: ${descriptors.disabledByDefaultControllers().join(", ") || "none"} (default "*")
  --leader-elect                             elect a leader on a Lease before running the controllers (default true)
  --leader-elect-lease-duration duration     (default 15s)
  --leader-elect-renew-deadline duration     (default 10s)
  --leader-elect-retry-period duration       (default 2s)
  --leader-elect-resource-namespace string   (default "kube-system")
  --leader-elect-resource-name string        (default "kube-controller-manager")
  --bind-address string                      where /healthz, /readyz and /metrics are served (default "127.0.0.1")
  --port int                                 their port, plain HTTP; 0 picks a free one (default 10257)
  --authorization-always-allow-paths strings paths served to anyone; every other path needs a bearer token that
                                             the API server accepts (TokenReview) and allows to get the path
                                             (SubjectAccessReview) (default "/healthz,/readyz,/livez")
  --kube-api-qps float                       (default 20)
  --kube-api-burst int                       (default 30)
  --cluster-signing-cert-file string         PEM CA certificate the CSR signing controller signs with; it runs only with one
  --cluster-signing-key-file string          its PEM private key
  --cluster-signing-duration duration        the longest certificate signed (default 8760h0m0s)
  -h, --help                                 this text
`;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      kubeconfig: { type: "string" },
      controllers: { type: "string" },
      "leader-elect": { type: "string" },
      "leader-elect-lease-duration": { type: "string" },
      "leader-elect-renew-deadline": { type: "string" },
      "leader-elect-retry-period": { type: "string" },
      "leader-elect-resource-namespace": { type: "string" },
      "leader-elect-resource-name": { type: "string" },
      "bind-address": { type: "string" },
      port: { type: "string" },
      "authorization-always-allow-paths": { type: "string" },
      "kube-api-qps": { type: "string" },
      "kube-api-burst": { type: "string" },
      "cluster-signing-cert-file": { type: "string" },
      "cluster-signing-key-file": { type: "string" },
      "cluster-signing-duration": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function parseBool(flag: string, value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new FlagError(`invalid argument "${value}" for "${flag}" flag: must be true or false`);
}

/** A Go duration: one or more numbers with units, `15s`, `500ms`, `1m30s`, `8760h0m0s`. */
function parseDuration(flag: string, value: string): number {
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(value))
    throw new FlagError(`invalid argument "${value}" for "${flag}" flag: not a duration like 15s`);
  const units = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    total += Number(amount) * units[unit as keyof typeof units];
  return total;
}

function parseNumber(
  flag: string,
  value: string,
  rule: { integer?: boolean; min?: number; max?: number },
): number {
  const n = Number(value);
  const ok =
    value.trim() !== "" &&
    Number.isFinite(n) &&
    (!rule.integer || Number.isInteger(n)) &&
    (rule.min === undefined || n >= rule.min) &&
    (rule.max === undefined || n <= rule.max);
  if (!ok) throw new FlagError(`invalid argument "${value}" for "${flag}" flag`);
  return n;
}
