import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { emptyStatus, type RuntimePodStatus } from "./pleg.js";
import { computePodActions, containerHash } from "./pod-actions.js";
import type { ContainerRecord, PodSandbox } from "./runtime/runtime.js";
import { goDuration } from "./runtime-manager.js";

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

// After upstream's TestComputePodActionsWithRestartableInitContainers (kuberuntime_manager_test.go).
describe("computePodActions with sidecars (restartable init containers)", () => {
  const sidecarSpec = (
    restartPolicy: "Always" | "Never" = "Always",
    startupProbe = false,
    inits: { name: string; sidecar: boolean }[] = [
      { name: "s1", sidecar: true },
      { name: "s2", sidecar: true },
      { name: "s3", sidecar: true },
    ],
  ): Pod => ({
    ...spec(restartPolicy),
    spec: {
      ...spec(restartPolicy).spec!,
      initContainers: inits.map(({ name, sidecar }) => ({
        name,
        image: "busybox",
        ...(sidecar ? { restartPolicy: "Always" } : {}),
        ...(startupProbe && sidecar ? { startupProbe: { exec: { command: ["true"] } } } : {}),
      })),
    },
  });
  type Case = {
    name: string;
    pod: Pod;
    containers: [string, ContainerRecord["state"], number?][];
    probes?: {
      failure?: (id: string) => { type: "liveness" | "startup" } | undefined;
      startup?: (id: string) => "success" | "failure" | undefined;
    };
    expected: { killPod?: boolean; init: number[]; start: number[]; kill: string[] };
  };
  const cases: Case[] = [
    {
      name: "initialization completed: start every main container",
      pod: sidecarSpec(),
      containers: [
        ["s1", "running"],
        ["s2", "running"],
        ["s3", "running"],
      ],
      expected: { init: [], start: [0, 1], kill: [] },
    },
    {
      name: "nothing started yet: start the first init container",
      pod: sidecarSpec(),
      containers: [],
      expected: { init: [0], start: [], kill: [] },
    },
    {
      name: "a running sidecar lets the next init container start",
      pod: sidecarSpec(),
      containers: [["s1", "running"]],
      expected: { init: [1], start: [], kill: [] },
    },
    {
      name: "an init container left in the created state is started again",
      pod: sidecarSpec(),
      containers: [
        ["s1", "running"],
        ["s2", "created"],
      ],
      expected: { init: [1], start: [], kill: [] },
    },
    {
      name: "a sidecar whose startup probe has not run yet holds the next one back",
      pod: sidecarSpec("Always", true),
      containers: [["s1", "running"]],
      probes: { startup: () => undefined },
      expected: { init: [], start: [], kill: [] },
    },
    {
      name: "a sidecar whose startup probe succeeded lets the next one start",
      pod: sidecarSpec("Always", true),
      containers: [["s1", "running"]],
      probes: { startup: () => "success" },
      expected: { init: [1], start: [], kill: [] },
    },
    {
      name: "a sidecar whose startup probe failed is killed and started again",
      pod: sidecarSpec("Always", true),
      containers: [["s1", "running"]],
      probes: { startup: () => "failure" },
      expected: { init: [0], start: [], kill: ["s1: Init container s1 failed startup probe"] },
    },
    {
      name: "a sidecar that exited after initialization is restarted; the main containers keep running",
      pod: sidecarSpec("Never"),
      containers: [
        ["s1", "running"],
        ["s2", "exited", 1],
        ["s3", "running"],
        ["a", "running"],
        ["b", "running"],
      ],
      expected: { init: [1], start: [], kill: [] },
    },
    {
      name: "a sidecar failing its liveness probe is killed and restarted",
      pod: {
        ...sidecarSpec(),
        spec: {
          ...sidecarSpec().spec!,
          initContainers: sidecarSpec().spec!.initContainers!.map((c) =>
            c.name === "s2" ? { ...c, livenessProbe: { exec: { command: ["true"] } } } : c,
          ),
        },
      },
      containers: [
        ["s1", "running"],
        ["s2", "running"],
        ["s3", "running"],
        ["a", "running"],
        ["b", "running"],
      ],
      probes: { failure: (id) => (id === "id-s2" ? { type: "liveness" } : undefined) },
      expected: { init: [1], start: [], kill: ["s2: Init container s2 failed liveness probe"] },
    },
    {
      name: "main containers done in a pod that never restarts: the pod is killed, sidecars not restarted",
      pod: sidecarSpec("Never"),
      containers: [
        ["s1", "running"],
        ["s2", "exited", 137],
        ["s3", "running"],
        ["a", "exited", 0],
        ["b", "exited", 0],
      ],
      expected: { killPod: true, init: [], start: [], kill: [] },
    },
    {
      name: "a regular init container after a sidecar runs once; then the main containers start",
      pod: sidecarSpec("Always", false, [
        { name: "s1", sidecar: true },
        { name: "i2", sidecar: false },
      ]),
      containers: [
        ["s1", "running"],
        ["i2", "exited", 0],
      ],
      expected: { init: [], start: [0, 1], kill: [] },
    },
  ];

  it.each(cases)("$name", ({ pod, containers, probes, expected }) => {
    const records = containers.map(([name, state, code]) => container(pod, name, state, code));
    const actions = computePodActions(pod, status([sandbox()], records), {
      failure: probes?.failure ?? (() => undefined),
      startup: probes?.startup ?? (() => "success"),
    });
    expect({
      killPod: actions.killPod,
      init: actions.initContainersToStart,
      start: actions.containersToStart,
      kill: actions.containersToKill.map((k) => `${k.name}: ${k.message}`),
    }).toEqual({
      killPod: expected.killPod ?? false,
      init: expected.init,
      start: expected.start,
      kill: expected.kill,
    });
  });
});
