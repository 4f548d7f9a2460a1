// The real kubectl drives rollouts end to end: the embedded API server over
// HTTP, the ReplicaSet and Deployment controllers on real time, and the
// kubelet stand-in marking pods ready.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Deployment, deployments, type ReplicaSet, replicaSets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { realClock } from "@reconcile/clock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revisionAnnotation } from "./deployment-util.js";
import { type Controllers, startControllers } from "./integration-harness.test-util.js";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let api: ApiServer;
let controllers: Controllers;
let home: string;
let close: () => Promise<void>;
let kubectl: (...args: string[]) => Promise<Result>;

beforeAll(async () => {
  api = new ApiServer();
  const listening = await api.listen({ port: 0 });
  controllers = startControllers({ client: api.client(), clock: realClock });
  home = await mkdtemp(join(tmpdir(), "reconcile-deployment-e2e-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, listening.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  kubectl = (...args) =>
    new Promise((resolve) => {
      execFile(
        "kubectl",
        ["--request-timeout=20s", ...args],
        { env, timeout: 30_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  close = async () => {
    await controllers.stop();
    await listening.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  };
});

afterAll(async () => {
  await close?.();
});

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl(...args);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function rolloutStatus(): Promise<string> {
  return ok("rollout", "status", "deployment/web", "--timeout=20s");
}

async function webReplicaSets(): Promise<ReplicaSet[]> {
  const items = (await api.client().resource(replicaSets, "default").list()).items;
  return items
    .filter((rs) => rs.metadata?.name?.startsWith("web-"))
    .sort((a, b) => revision(a) - revision(b));
}

function revision(obj: ReplicaSet | Deployment): number {
  return Number(obj.metadata?.annotations?.[revisionAnnotation] ?? 0);
}

/** Waits (briefly, on real time: kubectl's world) until the controller has observed the latest spec. */
async function observed(): Promise<Deployment> {
  for (let i = 0; i < 500; i++) {
    const d = await api.client().resource(deployments, "default").get("web");
    if ((d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1)) return d;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the Deployment controller did not observe the latest generation");
}

function historyRows(stdout: string): string[][] {
  return stdout
    .trim()
    .split("\n")
    .slice(2)
    .map((line) => line.trim().split(/\s{2,}/));
}

describe("kubectl against the Deployment controller", () => {
  it("create deployment, then rollout status reports it rolled out", async () => {
    expect(await ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")).toContain(
      "deployment.apps/web created",
    );
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const table = await ok("get", "deployment", "web", "--no-headers");
    expect(table.trim().split(/\s+/).slice(0, 4)).toEqual(["web", "3/3", "3", "3"]);
  });

  it("set image rolls out a second revision, and rollout history shows both with their change-cause", async () => {
    await ok("set", "image", "deployment/web", "nginx=nginx:1.28");
    // After the template change: the annotation goes to the new ReplicaSet only.
    await ok("annotate", "deployment", "web", "kubernetes.io/change-cause=to 1.28");
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const rows = historyRows(await ok("rollout", "history", "deployment/web"));
    expect(rows).toEqual([
      ["1", "<none>"],
      ["2", "to 1.28"],
    ]);
    const rss = await webReplicaSets();
    expect(rss.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas])).toEqual([
      ["nginx:1.27", 0],
      ["nginx:1.28", 3],
    ]);
  });

  it("rollout undo goes back to the previous template, which becomes revision 3", async () => {
    expect(await ok("rollout", "undo", "deployment/web")).toContain("deployment.apps/web rolled back");
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const rows = historyRows(await ok("rollout", "history", "deployment/web"));
    expect(rows.map((row) => row[0])).toEqual(["2", "3"]);
    const rss = await webReplicaSets();
    expect(
      rss.map((rs) => [revision(rs), rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas]),
    ).toEqual([
      [2, "nginx:1.28", 0],
      [3, "nginx:1.27", 3],
    ]);
    expect(rss[1]!.metadata?.annotations?.["deployment.kubernetes.io/revision-history"]).toBe("1");
  });

  it("rollout pause holds a template change back; scale still applies; resume rolls it out", async () => {
    expect(await ok("rollout", "pause", "deployment/web")).toContain("deployment.apps/web paused");
    await ok("set", "image", "deployment/web", "nginx=nginx:1.29");
    await ok("scale", "deployment", "web", "--replicas=4");
    const paused = await observed();
    expect(paused.status?.conditions?.find((c) => c.type === "Progressing")?.reason).toBe("DeploymentPaused");
    expect((await webReplicaSets()).map((rs) => rs.spec?.replicas)).toEqual([0, 4]);
    expect(await ok("rollout", "resume", "deployment/web")).toContain("deployment.apps/web resumed");
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const rss = await webReplicaSets();
    expect(rss.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas])).toEqual([
      ["nginx:1.28", 0],
      ["nginx:1.27", 0],
      ["nginx:1.29", 4],
    ]);
  });

  it("rollout restart replaces every pod through a new revision", async () => {
    const before = (await webReplicaSets()).length;
    expect(await ok("rollout", "restart", "deployment/web")).toContain("deployment.apps/web restarted");
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const rss = await webReplicaSets();
    expect(rss).toHaveLength(before + 1);
    const newest = rss.at(-1)!;
    expect(newest.spec?.template?.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"]).toBeDefined();
    expect(newest.spec?.replicas).toBe(4);
  });

  it("scale deployment resizes the current ReplicaSet, and describe reads like a real cluster", async () => {
    expect(await ok("scale", "deployment", "web", "--replicas=2")).toContain("deployment.apps/web scaled");
    expect(await rolloutStatus()).toContain('deployment "web" successfully rolled out');
    const ready = await ok(
      "get",
      "deployment",
      "web",
      "-o",
      "jsonpath={.status.readyReplicas}/{.status.replicas}",
    );
    expect(ready).toBe("2/2");
    const describe = await ok("describe", "deployment", "web");
    expect(describe).toMatch(/Available\s+True\s+MinimumReplicasAvailable/);
    expect(describe).toMatch(/Progressing\s+True\s+NewReplicaSetAvailable/);
    // Events are written in the background: the first rollout's are there by now.
    expect(describe).toMatch(
      /ScalingReplicaSet\s+.*deployment-controller\s+Scaled up replica set web-[456789bcdf]+ from 0 to 3/,
    );
    expect(describe).toMatch(/NewReplicaSet:\s+web-[456789bcdf]+ \(2\/2 replicas created\)/);
  });
});

describe("kubectl and the progress deadline", () => {
  it("rollout status fails once progressDeadlineSeconds pass without progress, and a fix completes the rollout", async () => {
    controllers.kubelet.ready = (pod) => pod.spec?.containers[0]?.image !== "nginx:broken";
    await ok("create", "deployment", "slow", "--image=nginx:1.27", "--replicas=2");
    await ok("rollout", "status", "deployment/slow", "--timeout=20s");
    await ok("patch", "deployment", "slow", "-p", '{"spec":{"progressDeadlineSeconds":2}}');
    await ok("set", "image", "deployment/slow", "nginx=nginx:broken");
    const stuck = await kubectl("rollout", "status", "deployment/slow", "--timeout=20s");
    expect(stuck.code).not.toBe(0);
    expect(stuck.stderr).toContain('deployment "slow" exceeded its progress deadline');
    const reason = await ok(
      "get",
      "deployment",
      "slow",
      "-o",
      'jsonpath={.status.conditions[?(@.type=="Progressing")].reason}',
    );
    expect(reason).toBe("ProgressDeadlineExceeded");
    await ok("set", "image", "deployment/slow", "nginx=nginx:1.28");
    expect(await ok("rollout", "status", "deployment/slow", "--timeout=20s")).toContain(
      'deployment "slow" successfully rolled out',
    );
  });
});
