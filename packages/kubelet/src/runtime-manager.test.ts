import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { emptyStatus, type RuntimePodStatus } from "./pleg.js";
import type { ContainerRecord, PodSandbox } from "./runtime/runtime.js";
import { computePodActions, containerHash, goDuration } from "./runtime-manager.js";

const spec = (restartPolicy: "Always" | "OnFailure" | "Never", inits: string[] = []): Pod => ({
  metadata: { name: "p", namespace: "default", uid: "u" },
  spec: {
    restartPolicy,
    containers: [
      { name: "a", image: "nginx" },
      { name: "b", image: "nginx" },
    ],
    ...(inits.length > 0 ? { initContainers: inits.map((name) => ({ name, image: "busybox" })) } : {}),
  },
});

const sandbox = (over: Partial<PodSandbox> = {}): PodSandbox => ({
  id: "s1",
  podUid: "u",
  name: "p",
  namespace: "default",
  attempt: 0,
  state: "ready",
  createdAt: 0,
  ip: "10.0.0.9",
  ...over,
});

function container(
  pod: Pod,
  name: string,
  state: ContainerRecord["state"],
  exitCode?: number,
): ContainerRecord {
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (x) => x.name === name,
  )!;
  return {
    id: `id-${name}`,
    mounts: [],
    sandboxId: "s1",
    podUid: "u",
    name,
    attempt: 0,
    specHash: containerHash(c),
    image: "nginx",
    imageRef: "ref",
    state,
    createdAt: 0,
    startedAt: 0,
    finishedAt: state === "exited" ? 1 : undefined,
    exitCode,
    reason: undefined,
    message: undefined,
  };
}

const status = (sandboxes: PodSandbox[], containers: ContainerRecord[]): RuntimePodStatus => ({
  ...emptyStatus("u", "p", "default"),
  sandboxes,
  containers,
});
const noProbes = { failure: () => undefined };

// After upstream's TestComputePodActions (kuberuntime_manager_test.go).
describe("computePodActions", () => {
  it("creates a sandbox and starts every container for a new pod", () => {
    expect(computePodActions(spec("Always"), status([], []), noProbes)).toEqual({
      killPod: true,
      createSandbox: true,
      attempt: 0,
      initContainersToStart: [],
      containersToStart: [0, 1],
      containersToKill: [],
    });
  });

  it("starts init container 0 first when there are init containers", () => {
    const actions = computePodActions(spec("Always", ["i1", "i2"]), status([], []), noProbes);
    expect(actions).toMatchObject({
      createSandbox: true,
      initContainersToStart: [0],
      containersToStart: [],
    });
  });

  it("does nothing while every container runs", () => {
    const pod = spec("Always");
    const actions = computePodActions(
      pod,
      status([sandbox()], [container(pod, "a", "running"), container(pod, "b", "running")]),
      noProbes,
    );
    expect(actions).toMatchObject({
      killPod: false,
      createSandbox: false,
      containersToStart: [],
      containersToKill: [],
    });
  });

  it.each([
    ["Always", 0, [1]],
    ["Always", 1, [1]],
    ["OnFailure", 0, []],
    ["OnFailure", 1, [1]],
    ["Never", 1, []],
  ] as const)("restartPolicy %s restarts an exited (code %d) container: %j", (policy, code, toStart) => {
    const pod = spec(policy);
    const actions = computePodActions(
      pod,
      status([sandbox()], [container(pod, "a", "running"), container(pod, "b", "exited", code)]),
      noProbes,
    );
    expect(actions.containersToStart).toEqual(toStart);
    expect(actions.killPod).toBe(false);
  });

  it("kills the pod when nothing runs and nothing is to be started", () => {
    const pod = spec("Never");
    const actions = computePodActions(
      pod,
      status([sandbox()], [container(pod, "a", "exited", 0), container(pod, "b", "exited", 1)]),
      noProbes,
    );
    expect(actions).toMatchObject({ killPod: true, createSandbox: false, containersToStart: [] });
  });

  it("kills a container whose liveness probe failed and restarts it unless restartPolicy is Never", () => {
    const pod = spec("Always");
    const probes = {
      failure: (id: string) => (id === "id-a" ? { type: "liveness" as const } : undefined),
    };
    const actions = computePodActions(
      pod,
      status([sandbox()], [container(pod, "a", "running"), container(pod, "b", "running")]),
      probes,
    );
    expect(actions.containersToStart).toEqual([0]);
    expect(actions.containersToKill).toEqual([
      {
        id: "id-a",
        name: "a",
        message: "Container a failed liveness probe, will be restarted",
        reason: "livenessProbe",
      },
    ]);
    const never = computePodActions(
      spec("Never"),
      status([sandbox()], [container(pod, "a", "running"), container(pod, "b", "running")]),
      probes,
    );
    expect(never.containersToKill[0]?.message).toBe("Container a failed liveness probe");
    expect(never.containersToStart).toEqual([]);
  });

  it("restarts a running container whose spec changed, whatever the restartPolicy", () => {
    const pod = spec("Never");
    const stale = { ...container(pod, "a", "running"), specHash: "old" };
    const actions = computePodActions(
      pod,
      status([sandbox()], [stale, container(pod, "b", "running")]),
      noProbes,
    );
    expect(actions.containersToStart).toEqual([0]);
    expect(actions.containersToKill[0]?.message).toBe("Container a definition changed, will be restarted");
  });

  it("replaces a sandbox that is no longer ready, with the next attempt number", () => {
    const pod = spec("Always");
    const actions = computePodActions(
      pod,
      status([sandbox({ state: "notready" })], [container(pod, "a", "exited", 0)]),
      noProbes,
    );
    expect(actions).toMatchObject({
      killPod: true,
      createSandbox: true,
      attempt: 1,
      containersToStart: [0, 1],
    });
  });

  it("with restartPolicy Never, a dead sandbox is not replaced once containers ran", () => {
    const pod = spec("Never");
    const actions = computePodActions(
      pod,
      status([sandbox({ state: "notready" })], [container(pod, "a", "exited", 0)]),
      noProbes,
    );
    expect(actions).toMatchObject({ killPod: true, createSandbox: false });
  });

  it("walks init containers in order: the next after a success, a failed one again, the pod killed under Never", () => {
    const pod = spec("Always", ["i1", "i2"]);
    expect(
      computePodActions(pod, status([sandbox()], [container(pod, "i1", "exited", 0)]), noProbes)
        .initContainersToStart,
    ).toEqual([1]);
    expect(
      computePodActions(pod, status([sandbox()], [container(pod, "i1", "exited", 1)]), noProbes)
        .initContainersToStart,
    ).toEqual([0]);
    expect(
      computePodActions(pod, status([sandbox()], [container(pod, "i1", "running")]), noProbes),
    ).toMatchObject({
      initContainersToStart: [],
      containersToStart: [],
    });
    const done = computePodActions(
      pod,
      status([sandbox()], [container(pod, "i2", "exited", 0), container(pod, "i1", "exited", 0)]),
      noProbes,
    );
    expect(done.containersToStart).toEqual([0, 1]);
    const never = spec("Never", ["i1"]);
    expect(
      computePodActions(never, status([sandbox()], [container(never, "i1", "exited", 1)]), noProbes).killPod,
    ).toBe(true);
  });
});

describe("goDuration", () => {
  it.each([
    [0, "0s"],
    [812, "812ms"],
    [1512, "1.512s"],
    [10_000, "10s"],
    [40_000, "40s"],
    [80_000, "1m20s"],
    [160_000, "2m40s"],
    [300_000, "5m0s"],
    [62_003, "1m2.003s"],
  ])("%d ms is %s", (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });
});
