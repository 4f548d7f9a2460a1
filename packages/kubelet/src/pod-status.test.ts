import type { DeepReadonly, Pod } from "@reconcile/api";
import type { ContainerStatus } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { emptyStatus, type RuntimePodStatus } from "./pleg.js";
import { generateAPIPodStatus, getPhase, qosClassOf } from "./pod-status.js";
import type { ContainerRecord } from "./runtime/runtime.js";

function podWith(
  restartPolicy: "Always" | "OnFailure" | "Never",
  containers: string[],
  inits: string[] = [],
): Pod {
  return {
    metadata: { name: "p", namespace: "default", uid: "uid-1" },
    spec: {
      restartPolicy,
      containers: containers.map((name) => ({ name, image: "nginx" })),
      ...(inits.length > 0 ? { initContainers: inits.map((name) => ({ name, image: "busybox" })) } : {}),
    },
  };
}

const running = (name: string): ContainerStatus => ({
  name,
  image: "nginx",
  imageID: "",
  ready: true,
  restartCount: 0,
  state: { running: {} },
});
const exited = (name: string, exitCode: number): ContainerStatus => ({
  name,
  image: "nginx",
  imageID: "",
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode } },
});
const waiting = (name: string, lastExit?: number): ContainerStatus => ({
  name,
  image: "nginx",
  imageID: "",
  ready: false,
  restartCount: 0,
  state: { waiting: { reason: "ContainerCreating" } },
  ...(lastExit !== undefined ? { lastState: { terminated: { exitCode: lastExit } } } : {}),
});

// After upstream's TestGetPhase / TestPodPhaseWithRestart* tables (kubelet_pods_test.go).
describe("getPhase", () => {
  it.each([
    ["all running", "Always", [running("a"), running("b")], [], false, "Running"],
    ["all waiting", "Always", [waiting("a"), waiting("b")], [], false, "Pending"],
    ["one waiting, one running", "Always", [running("a"), waiting("b")], [], false, "Pending"],
    ["a status missing", "Always", [running("a")], [], false, "Pending"],
    ["all stopped, Always", "Always", [exited("a", 0), exited("b", 1)], [], false, "Running"],
    ["all succeeded, Always", "Always", [exited("a", 0), exited("b", 0)], [], false, "Running"],
    ["restarting after a crash, Always", "Always", [running("a"), waiting("b", 1)], [], false, "Running"],
    ["all succeeded, Never", "Never", [exited("a", 0), exited("b", 0)], [], false, "Succeeded"],
    ["one failed, Never", "Never", [exited("a", 0), exited("b", 1)], [], false, "Failed"],
    ["one failed, OnFailure", "OnFailure", [exited("a", 0), exited("b", 1)], [], false, "Running"],
    ["all succeeded, OnFailure", "OnFailure", [exited("a", 0), exited("b", 0)], [], false, "Succeeded"],
    ["terminal with a failure, Always", "Always", [exited("a", 0), exited("b", 137)], [], true, "Failed"],
    ["terminal all exit 0, Always", "Always", [exited("a", 0), exited("b", 0)], [], true, "Succeeded"],
  ] as const)("%s: %s", (_, policy, statuses, inits, terminal, phase) => {
    expect(getPhase(podWith(policy, ["a", "b"]), inits, statuses, terminal)).toBe(phase);
  });

  it.each([
    ["init running", "Always", [running("i")], "Pending"],
    ["init waiting", "Always", [waiting("i")], "Pending"],
    ["init failed, Never", "Never", [exited("i", 1)], "Failed"],
    ["init failed, Always (it will be restarted)", "Always", [waiting("i", 1)], "Pending"],
  ] as const)("init containers: %s", (_, policy, inits, phase) => {
    expect(getPhase(podWith(policy, ["a"], ["i"]), inits, [waiting("a")], false)).toBe(phase);
  });

  // After upstream's TestPodPhaseWithRestartAlwaysRestartableInitContainers and
  // TestPodPhaseWithRestartNeverRestartableInitContainers (kubelet_pods_test.go).
  const sidecarPod = (policy: "Always" | "Never"): Pod => ({
    ...podWith(policy, ["a"]),
    spec: {
      ...podWith(policy, ["a"]).spec!,
      initContainers: [{ name: "s", image: "envoy", restartPolicy: "Always" }],
    },
  });
  const started = (status: ContainerStatus, value: boolean): ContainerStatus => ({
    ...status,
    started: value,
  });
  it.each([
    ["sidecar waiting, main waiting", "Always", [waiting("s")], [waiting("a")], "Pending"],
    ["sidecar running, not started", "Always", [started(running("s"), false)], [], "Pending"],
    [
      "sidecar running and started, main not yet created",
      "Always",
      [started(running("s"), true)],
      [],
      "Pending",
    ],
    ["sidecar and main running", "Always", [started(running("s"), true)], [running("a")], "Running"],
    ["sidecar exited, main running", "Always", [exited("s", 1)], [running("a")], "Running"],
    ["sidecar in back-off, main running", "Always", [waiting("s", 1)], [running("a")], "Running"],
    [
      "sidecar restarting, not started, main running",
      "Always",
      [started(running("s"), false)],
      [running("a")],
      "Running",
    ],
    [
      "main succeeded, sidecar still running, Never",
      "Never",
      [started(running("s"), true)],
      [exited("a", 0)],
      "Running",
    ],
    ["main succeeded, sidecar stopped, Never", "Never", [exited("s", 137)], [exited("a", 0)], "Succeeded"],
    ["main failed, sidecar stopped, Never", "Never", [exited("s", 0)], [exited("a", 1)], "Failed"],
  ] as const)("sidecars: %s (%s) is %s", (_, policy, inits, statuses, phase) => {
    expect(getPhase(sidecarPod(policy), inits, statuses, false)).toBe(phase);
  });
});

describe("qosClassOf", () => {
  const pod = (resources: object[]): DeepReadonly<Pod> => ({
    spec: { containers: resources.map((r, i) => ({ name: `c${i}`, image: "x", resources: r })) },
  });
  it.each([
    ["no requests or limits", [{}], "BestEffort"],
    ["zero requests", [{ requests: { cpu: "0" } }], "BestEffort"],
    ["limits only (requests default to them)", [{ limits: { cpu: "1", memory: "1Gi" } }], "Guaranteed"],
    [
      "requests equal limits",
      [{ requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } }],
      "Guaranteed",
    ],
    ["requests only", [{ requests: { cpu: "100m" } }], "Burstable"],
    [
      "one container without memory limit",
      [{ limits: { cpu: "1", memory: "1Gi" } }, { limits: { cpu: "1" } }],
      "Burstable",
    ],
  ])("%s is %s", (_, resources, qos) => {
    expect(qosClassOf(pod(resources))).toBe(qos);
  });
});

describe("generateAPIPodStatus", () => {
  const record = (over: Partial<ContainerRecord>): ContainerRecord => ({
    id: "a".repeat(64),
    mounts: [],
    sandboxId: "s",
    podUid: "uid-1",
    name: "a",
    attempt: 0,
    specHash: "h",
    image: "docker.io/library/nginx:latest",
    imageRef: "docker.io/library/nginx@sha256:abc",
    state: "running",
    createdAt: 0,
    startedAt: 1000,
    finishedAt: undefined,
    exitCode: undefined,
    reason: undefined,
    message: undefined,
    ...over,
  });
  const runtimeWith = (containers: ContainerRecord[]): RuntimePodStatus => ({
    ...emptyStatus("uid-1", "p", "default"),
    sandboxes: [
      {
        id: "s",
        podUid: "uid-1",
        name: "p",
        namespace: "default",
        attempt: 0,
        state: "ready",
        createdAt: 0,
        ip: "10.244.0.5",
      },
    ],
    containers,
    ips: ["10.244.0.5"],
  });
  const options = {
    oldStatus: undefined,
    podIsTerminal: false,
    nodeIPs: ["10.0.0.2"],
    runtimeName: "containerd",
    startFailures: new Map(),
    probeState: () => ({ started: true, ready: true }),
    deleting: false,
  };

  it("a pod the runtime does not know yet is Pending with ContainerCreating (PodInitializing with init containers)", () => {
    const status = generateAPIPodStatus(
      podWith("Always", ["a"]),
      emptyStatus("uid-1", "p", "default"),
      options,
    );
    expect(status.phase).toBe("Pending");
    expect(status.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: "ContainerCreating" } });
    expect(status.conditions?.map((c) => [c.type, c.status, c.reason ?? ""])).toEqual([
      ["PodReadyToStartContainers", "False", ""],
      ["Initialized", "True", ""],
      ["Ready", "False", "ContainersNotReady"],
      ["ContainersReady", "False", "ContainersNotReady"],
      ["PodScheduled", "True", ""],
    ]);
    const withInit = generateAPIPodStatus(
      podWith("Always", ["a"], ["i"]),
      emptyStatus("uid-1", "p", "default"),
      options,
    );
    expect(withInit.initContainerStatuses?.[0]?.state).toEqual({ waiting: { reason: "PodInitializing" } });
    expect(withInit.conditions?.[1]).toMatchObject({
      type: "Initialized",
      status: "False",
      reason: "ContainersNotInitialized",
      message: "containers with incomplete status: [i]",
    });
  });

  it("the newest instance fills state and the one before it lastState", () => {
    const status = generateAPIPodStatus(
      podWith("Always", ["a"]),
      runtimeWith([
        record({ id: "b".repeat(64), attempt: 1, createdAt: 5000, startedAt: 5000 }),
        record({ state: "exited", exitCode: 2, reason: "Error", finishedAt: 4000 }),
      ]),
      options,
    );
    expect(status.containerStatuses?.[0]).toEqual({
      name: "a",
      image: "docker.io/library/nginx:latest",
      imageID: "docker.io/library/nginx@sha256:abc",
      containerID: `containerd://${"b".repeat(64)}`,
      ready: true,
      started: true,
      restartCount: 1,
      state: { running: { startedAt: "1970-01-01T00:00:05Z" } },
      lastState: {
        terminated: {
          exitCode: 2,
          reason: "Error",
          startedAt: "1970-01-01T00:00:01Z",
          finishedAt: "1970-01-01T00:00:04Z",
          containerID: `containerd://${"a".repeat(64)}`,
        },
      },
    });
    expect(status).toMatchObject({
      phase: "Running",
      hostIP: "10.0.0.2",
      podIP: "10.244.0.5",
      qosClass: "BestEffort",
    });
  });

  it("a remembered start failure shows as waiting with its reason, the terminated instance moving to lastState", () => {
    const status = generateAPIPodStatus(
      podWith("Always", ["a"]),
      runtimeWith([record({ state: "exited", exitCode: 1, reason: "Error", finishedAt: 2000 })]),
      {
        ...options,
        startFailures: new Map([["a", { reason: "CrashLoopBackOff", message: "back-off 10s …" }]]),
      },
    );
    expect(status.containerStatuses?.[0]?.state).toEqual({
      waiting: { reason: "CrashLoopBackOff", message: "back-off 10s …" },
    });
    expect(status.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
    expect(status.phase).toBe("Running");
  });

  it("a terminal phase is never left", () => {
    const status = generateAPIPodStatus(podWith("Always", ["a"]), runtimeWith([record({})]), {
      ...options,
      oldStatus: { phase: "Failed", reason: "OutOfcpu" },
    });
    expect(status).toMatchObject({ phase: "Failed", reason: "OutOfcpu" });
  });
});
