import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leases, pods, replicaSets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { describe, expect, it } from "vitest";
import { FlagError, parseControllerManagerFlags, runControllerManagerCommand } from "./command.js";

describe("parseControllerManagerFlags", () => {
  it("has kube-controller-manager's defaults", () => {
    expect(parseControllerManagerFlags([])).toEqual({
      kubeconfig: undefined,
      controllers: "*",
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      leaseNamespace: "kube-system",
      leaseName: "kube-controller-manager",
      bindAddress: "127.0.0.1",
      port: 10257,
      alwaysAllowPaths: ["/healthz", "/readyz", "/livez"],
      kubeApiQps: 20,
      kubeApiBurst: 30,
      clusterSigningCertFile: undefined,
      clusterSigningKeyFile: undefined,
      clusterSigningDurationMs: 365 * 24 * 60 * 60 * 1000,
      help: false,
    });
  });

  it("reads durations, booleans and numbers", () => {
    const flags = parseControllerManagerFlags([
      "--leader-elect=false",
      "--leader-elect-lease-duration=30s",
      "--leader-elect-retry-period",
      "500ms",
      "--port=0",
      "--controllers=*,-deployment",
      "--cluster-signing-cert-file=/etc/ca.crt",
      "--cluster-signing-key-file=/etc/ca.key",
      "--cluster-signing-duration=1h30m",
    ]);
    expect(flags).toMatchObject({
      leaderElect: false,
      leaseDurationMs: 30_000,
      retryPeriodMs: 500,
      port: 0,
      controllers: "*,-deployment",
      clusterSigningCertFile: "/etc/ca.crt",
      clusterSigningKeyFile: "/etc/ca.key",
      clusterSigningDurationMs: 90 * 60_000,
    });
  });

  it("refuses positional arguments, unknown flags and bad values with a message naming them", () => {
    expect(() => parseControllerManagerFlags(["extra"])).toThrow(
      new FlagError('"kube-controller-manager" does not take any arguments, got ["extra"]'),
    );
    expect(() => parseControllerManagerFlags(["--nope=1"])).toThrow(/--nope/);
    try {
      parseControllerManagerFlags(["extra"]);
    } catch (error) {
      expect(FlagError.isInstance(error) && (error as FlagError).code).toBe(
        "controller-manager.invalid-flag",
      );
    }
    expect(() => parseControllerManagerFlags(["--port=70000"])).toThrow(
      'invalid argument "70000" for "--port" flag',
    );
    expect(() => parseControllerManagerFlags(["--leader-elect=yes"])).toThrow(
      'invalid argument "yes" for "--leader-elect" flag: must be true or false',
    );
    expect(() => parseControllerManagerFlags(["--leader-elect-renew-deadline=10"])).toThrow(
      /"--leader-elect-renew-deadline" flag: not a duration/,
    );
    expect(() => parseControllerManagerFlags(["--cluster-signing-cert-file=/etc/ca.crt"])).toThrow(
      "--cluster-signing-cert-file and --cluster-signing-key-file must be given together",
    );
  });
});

describe("runControllerManagerCommand", () => {
  it("--help lists every controller and the disabled-by-default ones, and exits 0", async () => {
    let text = "";
    expect(await runControllerManagerCommand(["--help"], { out: (t) => (text += t) })).toBe(0);
    expect(text).toContain(
      "All controllers: certificatesigningrequest-approving-controller, certificatesigningrequest-cleaner-controller, cronjob-controller, daemonset-controller, deployment-controller, disruption-controller, endpoints-controller, endpointslice-controller, horizontal-pod-autoscaler-controller, job-controller, namespace-controller, node-lifecycle-controller, persistentvolume-binder-controller, persistentvolume-protection-controller, persistentvolumeclaim-protection-controller, pod-garbage-collector-controller, replicaset-controller, resourcequota-controller, serviceaccount-controller, statefulset-controller, taint-eviction-controller, ttl-after-finished-controller",
    );
    expect(text).toContain('Disabled-by-default controllers: none (default "*")');
  });

  it("runs against an API server over HTTP from a kubeconfig, serves /healthz, and exits 0 on stop", async () => {
    const server = new ApiServer();
    const listening = await server.listen({ token: "admin-token" });
    const dir = mkdtempSync(join(tmpdir(), "cm-command-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, listening.kubeconfig());
    const lines: string[] = [];
    const stop = new AbortController();
    try {
      const exit = runControllerManagerCommand(
        [
          `--kubeconfig=${kubeconfig}`,
          "--port=0",
          "--controllers=replicaset",
          "--leader-elect-retry-period=100ms",
        ],
        { signal: stop.signal, write: (line) => lines.push(line) },
      );
      const client = server.client();
      await client.resource(replicaSets, "default").create({
        metadata: { name: "web", namespace: "default" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "c", image: "nginx" }] },
          },
        },
      });
      await expect
        .poll(async () => (await client.resource(pods, "default").list()).items.length, { timeout: 10_000 })
        .toBe(2);
      const serving = lines
        .map((line) => JSON.parse(line))
        .find((r) => r.msg === "Serving healthz and metrics");
      expect(serving).toMatchObject({
        level: 30,
        component: "kube-controller-manager",
        controllers: ["replicaset-controller"],
      });
      const healthz = await fetch(`${serving.url}/healthz?verbose`);
      expect(await healthz.text()).toBe(
        "[+]leaderElection ok\n[+]replicaset-controller ok\nhealthz check passed\n",
      );
      const host = new URL(listening.url).host;
      // /metrics as kube-controller-manager's: a token the API server accepts and allows; the health paths are open.
      const metrics = (token?: string) =>
        fetch(
          `${serving.url}/metrics`,
          token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
        );
      expect(await (await metrics("admin-token")).text()).toMatch(
        new RegExp(`^rest_client_requests_total\\{code="200",method="GET",host="${host}"\\} [1-9]`, "m"),
      );
      const anonymous = await metrics();
      expect([anonymous.status, await anonymous.text()]).toEqual([
        403,
        'forbidden: User "system:anonymous" cannot get path "/metrics"\n',
      ]);
      expect((await metrics("wrong")).status).toBe(401);
      // A page whose DNS name resolves to 127.0.0.1 (DNS rebinding) is not answered.
      const rebound = await new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest(
          `${serving.url}/healthz`,
          { headers: { host: "attacker.example:10257" } },
          (r) => {
            r.resume();
            resolve(r.statusCode);
          },
        );
        request.once("error", reject);
        request.end();
      });
      expect(rebound).toBe(403);
      const lease = await client.resource(leases, "kube-system").get("kube-controller-manager");
      expect(lease.spec?.leaseDurationSeconds).toBe(15);
      stop.abort();
      expect(await exit).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    }
  });

  it("exits 1 with the reason on a bad --controllers entry", async () => {
    const lines: string[] = [];
    const server = new ApiServer();
    const listening = await server.listen();
    const dir = mkdtempSync(join(tmpdir(), "cm-command-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, listening.kubeconfig());
    try {
      const code = await runControllerManagerCommand(
        [`--kubeconfig=${kubeconfig}`, "--controllers=*,-bogus"],
        {
          write: (line) => lines.push(line),
        },
      );
      expect(code).toBe(1);
      expect(lines).toEqual(["Error: bogus is not in the list of known controllers\n"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    }
  });
});
