// `npm run demo -- serve [--nodes N] [--plain-http] [--service-cluster-ip-range R] [--audit-policy-file F …]`: the cluster (controller
// manager, scheduler, N simulated nodes) behind a real Kubernetes REST API on
// 127.0.0.1, for kubectl: HTTPS with a generated CA and bearer token (plain
// HTTP on loopback only when asked). Writes a kubeconfig, prints how to use
// it, and runs until Ctrl-C (or SIGTERM), then stops everything cleanly.
// `PORT` sets the API server's port, `MANAGER_PORT` the controller
// manager's health and metrics port and `DASHBOARD_PORT` the web view's
// (free ones by default). `--audit-policy-file` audits requests as kube-apiserver
// does, to `--audit-log-path` (default: audit.log beside the kubeconfig; `-` for stdout) or to the
// webhook a kubeconfig file names (`--audit-webhook-config-file`); `--audit-log-maxsize` (MB, default
// 100), `--audit-log-maxbackup` and `--audit-log-maxage` (days) rotate the log as kube-apiserver's do.
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorMessage } from "@reconcile/api";
import {
  auditLogBackend,
  auditWebhookBackend,
  ClusterIPAllocator,
  generateServingCertificates,
  loadAuditPolicy,
} from "@reconcile/apiserver";
import { loadKubeConfig } from "@reconcile/client";
import { jsonLogger, prometheusApiServerMetrics } from "@reconcile/controller-manager";
import { CausalityRecorder } from "@reconcile/dashboard";
import { clusterCertificateAuthority, newApiServer, startCluster } from "./cluster.js";
import { openDashboard, untilInterrupted } from "./dashboard.js";
import { etcdFromArgs } from "./etcd-flags.js";

export async function serve(): Promise<boolean> {
  const port = portFromEnv("PORT");
  const managerPort = portFromEnv("MANAGER_PORT");
  const dashboardPort = portFromEnv("DASHBOARD_PORT");
  if (port === undefined || managerPort === undefined || dashboardPort === undefined) return false;
  const args = process.argv.slice(3);
  const flags = parseServeFlags(args);
  if (typeof flags === "string") {
    console.error(flags);
    return false;
  }
  const { nodeCount, plainHttp, auditPolicyFile } = flags;
  if (flags.auditWebhookConfigFile !== undefined) {
    try {
      await loadKubeConfig({ path: flags.auditWebhookConfigFile });
    } catch (error) {
      console.error(`--audit-webhook-config-file ${flags.auditWebhookConfigFile}: ${errorMessage(error)}`);
      return false;
    }
  }
  let auditPolicy: string | undefined;
  if (auditPolicyFile !== undefined) {
    try {
      auditPolicy = readFileSync(auditPolicyFile, "utf8");
      loadAuditPolicy(auditPolicy);
    } catch (error) {
      console.error(`--audit-policy-file ${auditPolicyFile}: ${errorMessage(error)}`);
      return false;
    }
  }
  const etcd = await etcdFromArgs(args);
  if (typeof etcd === "string") {
    console.error(etcd);
    return false;
  }
  // The first line says what starts, before the components' own log lines.
  console.log(
    `Starting the API server, the controller manager, the scheduler and ${nodeCount} simulated node${nodeCount === 1 ? "" : "s"}. ${etcd.description}`,
  );
  const server = newApiServer({ storage: etcd.storage, serviceClusterIPRange: flags.serviceClusterIPRange });
  // kubectl sends a bearer token only over HTTPS: by default the server makes a CA and a token,
  // the CA first, so that the controller manager publishes it in every namespace (kube-root-ca.crt).
  const certificates = plainHttp ? undefined : await generateServingCertificates();
  // The same CA signs approved CertificateSigningRequests (`kubectl certificate approve`).
  const ca = certificates?.ca ?? (await clusterCertificateAuthority());
  // What the dashboard's trace steps through: every component's writes and reconciles.
  const causality = new CausalityRecorder();
  const controlPlane = startCluster(server, {
    nodes: nodeCount,
    rootCA: ca.cert,
    clusterSigning: ca,
    causality,
    // A dual-stack Service range goes with a dual-stack pod network.
    dualStack: server.serviceIPs.families.length === 2,
  });
  const dir = mkdtempSync(join(tmpdir(), "reconcile-demo-"));
  // The API server's request log (one pino-shaped JSON line per request) goes to a file, off the console.
  const requestLogPath = join(dir, "apiserver-requests.log");
  const auditWebhook = flags.auditWebhookConfigFile;
  const auditLogPath =
    auditPolicy === undefined || auditWebhook !== undefined
      ? undefined
      : (flags.auditLogPath ?? join(dir, "audit.log"));
  const security =
    certificates === undefined
      ? {}
      : {
          tls: { ...certificates.serving, ca: certificates.ca.cert, caKey: certificates.ca.key },
          token: randomBytes(24).toString("base64url"),
        };
  const listening = await server.listen({
    port,
    ...security,
    kubeletConnection: controlPlane.kubeletConnection(),
    metrics: prometheusApiServerMetrics(),
    requestLog: jsonLogger({
      bindings: { component: "kube-apiserver" },
      write: (line) => appendFileSync(requestLogPath, line),
    }),
    audit:
      auditPolicy === undefined
        ? undefined
        : {
            policy: auditPolicy,
            backend:
              auditWebhook !== undefined
                ? auditWebhookBackend({ kubeconfig: { path: auditWebhook } })
                : auditLogBackend(auditLogPath ?? "-", flags.auditLogRotation),
          },
  });
  const managerHealth = await controlPlane.controllerManagers[0]!.manager.listen({ port: managerPort });
  await controlPlane.synced;
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, listening.kubeconfig(), { mode: 0o600 });
  // The web view reads the cluster as kubectl does, through the same kubeconfig, and the
  // components' machinery in process.
  const dashboard = await openDashboard({
    kubeconfig: listening.kubeconfig(),
    cluster: controlPlane,
    causality,
    port: dashboardPort,
  });

  console.log(usage(listening.url, managerHealth.url, dashboard.url, nodeCount, kubeconfig, requestLogPath));
  if (auditLogPath !== undefined && auditLogPath !== "-")
    console.log(`  tail -f ${auditLogPath}   # the audit log (--audit-policy-file ${auditPolicyFile})\n`);

  await untilInterrupted();
  console.log("\nstopping…");
  await dashboard.close();
  await managerHealth.close();
  await controlPlane.stop();
  await server.close();
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
  return true;
}

/** A port number from the environment variable `name` (0, a free one, when unset); undefined after saying what is wrong. */
function portFromEnv(name: string): number | undefined {
  const port = Number(process.env[name] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(
      `${name} must be a port number (0 for a free one), got ${JSON.stringify(process.env[name])}`,
    );
    return undefined;
  }
  return port;
}

/** The flags of `serve` beside the etcd ones. */
interface ServeFlags {
  nodeCount: number;
  plainHttp: boolean;
  /** `--service-cluster-ip-range`: one range, or two of different families for a dual-stack cluster. */
  serviceClusterIPRange?: string;
  auditPolicyFile?: string;
  auditLogPath?: string;
  auditWebhookConfigFile?: string;
  /** `--audit-log-maxsize`, `--audit-log-maxbackup`, `--audit-log-maxage`. */
  auditLogRotation?: { maxSizeMB?: number; maxBackups?: number; maxAgeDays?: number };
}

/**
 * `--nodes N`, `--plain-http`, `--service-cluster-ip-range R`,
 * `--audit-policy-file F`, `--audit-log-path P`,
 * `--audit-webhook-config-file K` and `--audit-log-max{size,backup,age} N`,
 * taken out of `args` (the etcd flags stay); a string says what is wrong.
 */
function parseServeFlags(args: string[]): ServeFlags | string {
  const nodes = takeValue(args, "--nodes");
  let nodeCount = 3;
  if (nodes !== undefined) {
    nodeCount = Number(nodes.value);
    if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > 5_000) {
      return `${nodes.flag} needs a whole number of nodes from 1 to 5000, got ${JSON.stringify(nodes.value ?? "")}`;
    }
  }
  const plainAt = args.indexOf("--plain-http");
  const plainHttp = plainAt !== -1;
  if (plainHttp) args.splice(plainAt, 1);
  const flags: ServeFlags = { nodeCount, plainHttp };
  const range = takeValue(args, "--service-cluster-ip-range");
  if (range !== undefined) {
    try {
      new ClusterIPAllocator(range.value ?? "");
    } catch (error) {
      return `${range.flag}: ${errorMessage(error)}`;
    }
    flags.serviceClusterIPRange = range.value!;
  }
  for (const [flag, key] of [
    ["--audit-policy-file", "auditPolicyFile"],
    ["--audit-log-path", "auditLogPath"],
    ["--audit-webhook-config-file", "auditWebhookConfigFile"],
  ] as const) {
    const taken = takeValue(args, flag);
    if (taken === undefined) continue;
    if (!taken.value) return `${flag} needs a path`;
    flags[key] = taken.value;
  }
  for (const [flag, key] of [
    ["--audit-log-maxsize", "maxSizeMB"],
    ["--audit-log-maxbackup", "maxBackups"],
    ["--audit-log-maxage", "maxAgeDays"],
  ] as const) {
    const taken = takeValue(args, flag);
    if (taken === undefined) continue;
    const value = Number(taken.value);
    if (!Number.isInteger(value) || value < 0)
      return `${flag} needs a whole number, 0 or more, got ${JSON.stringify(taken.value ?? "")}`;
    flags.auditLogRotation = {
      ...flags.auditLogRotation,
      [key]: value === 0 && key === "maxSizeMB" ? undefined : value,
    };
  }
  for (const [flag, given] of [
    ["--audit-log-path", flags.auditLogPath],
    ["--audit-webhook-config-file", flags.auditWebhookConfigFile],
  ] as const)
    if (given !== undefined && flags.auditPolicyFile === undefined)
      return `${flag} needs --audit-policy-file (the policy says what to record)`;
  if (flags.auditLogPath !== undefined && flags.auditWebhookConfigFile !== undefined)
    return "--audit-log-path and --audit-webhook-config-file: choose one";
  return flags;
}

/** Takes `--flag value` or `--flag=value` out of `args`: the flag as written and its value, or undefined when absent. */
function takeValue(args: string[], name: string): { flag: string; value: string | undefined } | undefined {
  const at = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (at === -1) return undefined;
  const [flag, inline] = args[at]!.split(/=(.*)/s, 2) as [string, string | undefined];
  const value = inline ?? args[at + 1];
  args.splice(at, inline === undefined ? 2 : 1);
  return { flag, value };
}

/** What to try once the cluster runs. */
function usage(
  apiUrl: string,
  managerUrl: string,
  dashboardUrl: string,
  nodeCount: number,
  kubeconfig: string,
  requestLogPath: string,
): string {
  return `API server on ${apiUrl}; the controller manager (its /healthz, /readyz, /metrics and /debug/machinery on ${managerUrl}), the scheduler and ${nodeCount} simulated nodes running.

  Watch it live: ${dashboardUrl}   (nodes, workloads, Services, and each component's queues, reconciles, scheduling decisions and pod workers)

Try:

  export KUBECONFIG=${kubeconfig}
  kubectl api-resources
  kubectl auth whoami && kubectl auth can-i create deployments
  kubectl get nodes -o wide
  kubectl create -f - <<'YAML'
  apiVersion: apps/v1
  kind: ReplicaSet
  metadata: { name: web }
  spec:
    replicas: 3
    selector: { matchLabels: { app: web } }
    template:
      metadata: { labels: { app: web } }
      spec: { containers: [{ name: web, image: nginx:1.27 }] }
  YAML
  kubectl get rs,pods -o wide
  kubectl describe pod -l app=web
  kubectl logs -l app=web
  kubectl scale rs web --replicas=5 && kubectl get pods -w
  kubectl create deployment hello --image=nginx:1.27 --replicas=3
  kubectl rollout status deployment/hello
  kubectl set image deployment/hello nginx=nginx:1.28 && kubectl rollout status deployment/hello
  kubectl rollout history deployment/hello && kubectl rollout undo deployment/hello
  kubectl create service clusterip hello --tcp=80:80 && kubectl get endpoints,endpointslices -l app=hello
  kubectl describe pod -l app=hello   # Scheduled … Pulled … Started events
  kubectl cordon node-1 && kubectl get nodes
  kubectl create namespace scratch && kubectl get sa -A   # default in every namespace
  kubectl delete namespace scratch --wait=false && kubectl get ns   # Terminating, then gone
  kubectl create configmap settings --from-literal=color=red --dry-run=client -o yaml | kubectl apply --server-side -f -
  kubectl get configmap settings -o yaml --show-managed-fields
  kubectl explain deployment.spec.replicas
  kubectl apply -f - <<'YAML'
  apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: { name: crontabs.stable.example.com }
  spec:
    group: stable.example.com
    scope: Namespaced
    names: { plural: crontabs, kind: CronTab, shortNames: [ct] }
    versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { cronSpec: { type: string }, replicas: { type: integer, default: 1 } } }
  YAML
  kubectl wait --for=condition=established crd/crontabs.stable.example.com && kubectl explain crontab.spec
  curl -s ${managerUrl}/healthz?verbose; curl -s ${managerUrl}/metrics | grep ^workqueue_adds_total
  kubectl get --raw /metrics | grep ^apiserver_request_total
  tail -f ${requestLogPath}   # the API server's request log

Ctrl-C stops it.`;
}
