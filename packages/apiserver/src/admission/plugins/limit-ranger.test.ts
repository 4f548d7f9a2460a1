import { limitRanges, type Pod, pods } from "@reconcile/api";
import type {
  LimitRange,
  LimitRangeItem,
  PersistentVolumeClaim,
  ResourceRequirements,
} from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import { claimProblems, defaultPodResources, limitRangerAnnotation, podProblems } from "./limit-ranger.js";

// Upstream plugin/pkg/admission/limitranger/admission_test.go: its helpers and tables.
function resources(cpu: string, memory: string): Record<string, string> {
  const list: Record<string, string> = {};
  if (cpu) list.cpu = cpu;
  if (memory) list.memory = memory;
  return list;
}
function requirements(
  requests: Record<string, string>,
  limits: Record<string, string>,
): ResourceRequirements {
  return { requests, limits };
}
function limitRange(
  type: string,
  bounds: {
    min?: Record<string, string>;
    max?: Record<string, string>;
    defaultRequest?: Record<string, string>;
    default?: Record<string, string>;
    maxLimitRequestRatio?: Record<string, string>;
  },
): LimitRange {
  const item: LimitRangeItem = { type, ...bounds };
  return { metadata: { name: "abc", namespace: "test" }, spec: { limits: [item] } };
}
function validPod(name: string, containers: number, resources: ResourceRequirements): Pod {
  return {
    metadata: { name, namespace: "test" },
    spec: {
      containers: Array.from({ length: containers }, (_, i) => ({
        name: `foo-${i}`,
        image: "foo:V1",
        resources: structuredClone(resources),
      })),
    },
  };
}
function validPodInit(pod: Pod, ...init: ResourceRequirements[]): Pod {
  pod.spec!.initContainers = init.map((resources, i) => ({
    name: `foo-init-${i}`,
    image: "foo:V1",
    resources,
  }));
  return pod;
}
function check(range: LimitRange, pod: Pod): string[] {
  defaultPodResources(range, pod);
  return podProblems(range, pod);
}

describe("LimitRanger: defaults (upstream TestDefaultContainerResourceRequirements, TestMergePodResourceRequirements)", () => {
  const range = limitRange("Container", {
    defaultRequest: resources("100m", "1Gi"),
    default: resources("50m", "5Gi"),
  });

  it("fills unset requests and limits and notes them in the annotation", () => {
    const pod = validPod("empty-resources", 1, requirements({}, {}));
    defaultPodResources(range, pod);
    expect(pod.spec!.containers[0]!.resources).toEqual({
      requests: { cpu: "100m", memory: "1Gi" },
      limits: { cpu: "50m", memory: "5Gi" },
    });
    expect(pod.metadata!.annotations).toEqual({
      [limitRangerAnnotation]:
        "LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0",
    });
  });

  it("keeps what the container sets and names only what it filled, init containers included", () => {
    const pod = validPodInit(
      validPod("pod", 1, requirements(resources("", "2Gi"), resources("1", ""))),
      requirements(resources("10m", "1Mi"), resources("20m", "2Mi")),
    );
    defaultPodResources(range, pod);
    expect(pod.spec!.containers[0]!.resources).toEqual({
      requests: { memory: "2Gi", cpu: "100m" },
      limits: { cpu: "1", memory: "5Gi" },
    });
    expect(pod.spec!.initContainers![0]!.resources).toEqual(
      requirements(resources("10m", "1Mi"), resources("20m", "2Mi")),
    );
    expect(pod.metadata!.annotations![limitRangerAnnotation]).toBe(
      "LimitRanger plugin set: cpu request for container foo-0; memory limit for container foo-0",
    );
  });

  it("sets nothing, not even the annotation, when there is nothing to default", () => {
    const pod = validPod("full", 1, requirements(resources("1", "1Gi"), resources("1", "1Gi")));
    defaultPodResources(range, pod);
    expect(pod.metadata!.annotations).toBeUndefined();
  });
});

describe("LimitRanger: bounds (upstream TestPodLimitFunc)", () => {
  const success: [string, Pod, LimitRange][] = [
    [
      "ctr-min-cpu-request",
      validPod("a", 1, requirements(resources("100m", ""), {})),
      limitRange("Container", { min: resources("50m", "") }),
    ],
    [
      "ctr-min-cpu-request-limit",
      validPod("a", 1, requirements(resources("100m", ""), resources("200m", ""))),
      limitRange("Container", { min: resources("50m", "") }),
    ],
    [
      "ctr-min-memory-request",
      validPod("a", 1, requirements(resources("", "60Mi"), {})),
      limitRange("Container", { min: resources("", "50Mi") }),
    ],
    [
      "ctr-min-memory-request-limit",
      validPod("a", 1, requirements(resources("", "60Mi"), resources("", "80Mi"))),
      limitRange("Container", { min: resources("", "50Mi") }),
    ],
    [
      "ctr-max-cpu-request-limit",
      validPod("a", 1, requirements(resources("500m", ""), resources("1", ""))),
      limitRange("Container", { max: resources("2", "") }),
    ],
    [
      "ctr-max-cpu-limit",
      validPod("a", 1, requirements({}, resources("1", ""))),
      limitRange("Container", { max: resources("2", "") }),
    ],
    [
      "ctr-max-mem-request-limit",
      validPod("a", 1, requirements(resources("", "250Mi"), resources("", "500Mi"))),
      limitRange("Container", { max: resources("", "1Gi") }),
    ],
    [
      "ctr-max-cpu-ratio",
      validPod("a", 1, requirements(resources("500m", ""), resources("750m", ""))),
      limitRange("Container", { maxLimitRequestRatio: resources("1.5", "") }),
    ],
    [
      "ctr-max-mem-limit",
      validPod("a", 1, requirements({}, resources("", "500Mi"))),
      limitRange("Container", { max: resources("", "1Gi") }),
    ],
    [
      "pod-min-cpu-request",
      validPod("a", 2, requirements(resources("75m", ""), {})),
      limitRange("Pod", { min: resources("100m", "") }),
    ],
    [
      "pod-min-cpu-request-limit",
      validPod("a", 2, requirements(resources("75m", ""), resources("200m", ""))),
      limitRange("Pod", { min: resources("100m", "") }),
    ],
    [
      "pod-min-memory-request",
      validPod("a", 2, requirements(resources("", "60Mi"), {})),
      limitRange("Pod", { min: resources("", "100Mi") }),
    ],
    [
      "pod-max-cpu-request-limit",
      validPod("a", 2, requirements(resources("500m", ""), resources("1", ""))),
      limitRange("Pod", { max: resources("2", "") }),
    ],
    [
      "pod-max-cpu-limit",
      validPod("a", 3, requirements({}, resources("1", ""))),
      limitRange("Pod", { max: resources("3", "") }),
    ],
    [
      "pod-max-mem-ratio",
      validPod("a", 3, requirements(resources("", "250Mi"), resources("", "500Mi"))),
      limitRange("Pod", { maxLimitRequestRatio: resources("", "2") }),
    ],
    [
      "pod-max-cpu-init-container",
      validPodInit(
        validPod("a", 1, requirements({}, resources("1", ""))),
        requirements({}, resources("3", "")),
      ),
      limitRange("Pod", { max: resources("3", "") }),
    ],
    [
      "ctr-default-request-min",
      validPod("a", 1, requirements({}, {})),
      limitRange("Container", { min: resources("50m", ""), defaultRequest: resources("100m", "") }),
    ],
  ];
  for (const [name, pod, range] of success) {
    it(`admits ${name}`, () => {
      expect(check(range, pod)).toEqual([]);
    });
  }

  const errors: [string, Pod, LimitRange, string[]][] = [
    [
      "ctr-min-cpu-request",
      validPod("a", 1, requirements(resources("40m", ""), {})),
      limitRange("Container", { min: resources("50m", "") }),
      ["minimum cpu usage per Container is 50m, but request is 40m"],
    ],
    [
      "ctr-min-cpu-request-limit",
      validPod("a", 1, requirements(resources("100m", ""), resources("40m", ""))),
      limitRange("Container", { min: resources("50m", "") }),
      ["minimum cpu usage per Container is 50m, but limit is 40m"],
    ],
    [
      "ctr-min-cpu-no-request-limit",
      validPod("a", 1, requirements({}, {})),
      limitRange("Container", { min: resources("50m", "") }),
      ["minimum cpu usage per Container is 50m.  No request is specified"],
    ],
    [
      "ctr-min-memory-request",
      validPod("a", 1, requirements(resources("", "40Mi"), {})),
      limitRange("Container", { min: resources("", "50Mi") }),
      ["minimum memory usage per Container is 50Mi, but request is 40Mi"],
    ],
    [
      "ctr-max-cpu-request-limit",
      validPod("a", 1, requirements(resources("500m", ""), resources("2500m", ""))),
      limitRange("Container", { max: resources("2", "") }),
      ["maximum cpu usage per Container is 2, but limit is 2500m"],
    ],
    [
      "ctr-max-cpu-no-request-limit",
      validPod("a", 1, requirements({}, {})),
      limitRange("Container", { max: resources("2", "") }),
      ["maximum cpu usage per Container is 2.  No limit is specified"],
    ],
    [
      "ctr-max-mem-limit",
      validPod("a", 1, requirements({}, resources("", "2Gi"))),
      limitRange("Container", { max: resources("", "1Gi") }),
      ["maximum memory usage per Container is 1Gi, but limit is 2Gi"],
    ],
    [
      "ctr-max-cpu-ratio",
      validPod("a", 1, requirements(resources("1250m", ""), resources("2500m", ""))),
      limitRange("Container", { maxLimitRequestRatio: resources("1", "") }),
      ["cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000"],
    ],
    [
      "ctr-max-cpu-ratio-no-request",
      validPod("a", 1, requirements({}, resources("2500m", ""))),
      limitRange("Container", { maxLimitRequestRatio: resources("1", "") }),
      ["cpu max limit to request ratio per Container is 1, but no request is specified or request is 0"],
    ],
    [
      "pod-min-cpu-request",
      validPod("a", 1, requirements(resources("75m", ""), {})),
      limitRange("Pod", { min: resources("100m", "") }),
      ["minimum cpu usage per Pod is 100m, but request is 75m"],
    ],
    [
      "pod-max-cpu-limit",
      validPod("a", 3, requirements(resources("500m", ""), resources("1", ""))),
      limitRange("Pod", { max: resources("2", "") }),
      ["maximum cpu usage per Pod is 2, but limit is 3"],
    ],
    [
      "pod-max-mem-ratio",
      validPod("a", 3, requirements(resources("", "250Mi"), resources("", "600Mi"))),
      limitRange("Pod", { maxLimitRequestRatio: resources("", "2") }),
      ["memory max limit to request ratio per Pod is 2, but provided ratio is 2.400000"],
    ],
    [
      "pod-max-cpu-init-container",
      validPodInit(
        validPod("a", 1, requirements({}, resources("1", ""))),
        requirements({}, resources("5", "")),
      ),
      limitRange("Pod", { max: resources("3", "") }),
      ["maximum cpu usage per Pod is 3, but limit is 5"],
    ],
    [
      "ctr-max-cpu-limit in every container, init containers too",
      validPodInit(
        validPod("a", 1, requirements({}, resources("3", ""))),
        requirements({}, resources("4", "")),
      ),
      limitRange("Container", { max: resources("2", "") }),
      [
        "maximum cpu usage per Container is 2, but limit is 3",
        "maximum cpu usage per Container is 2, but limit is 4",
      ],
    ],
  ];
  for (const [name, pod, range, want] of errors) {
    it(`refuses ${name}`, () => {
      expect(check(range, pod)).toEqual(want);
    });
  }
});

describe("LimitRanger: claims (upstream TestPersistentVolumeClaimLimitFunc)", () => {
  const claim = (storage: string | undefined): PersistentVolumeClaim => ({
    metadata: { name: "c", namespace: "test" },
    spec: { resources: storage === undefined ? {} : { requests: { storage } } },
  });
  const range = limitRange("PersistentVolumeClaim", { min: { storage: "1Gi" }, max: { storage: "10Gi" } });
  it("admits a request inside the bounds", () => {
    expect(claimProblems(range, claim("5Gi"))).toEqual([]);
  });
  it("refuses a request outside them, and a claim without one", () => {
    expect(claimProblems(range, claim("500Mi"))).toEqual([
      "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi",
    ]);
    expect(claimProblems(range, claim("20Gi"))).toEqual([
      "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi",
    ]);
    expect(claimProblems(range, claim(undefined))).toEqual([
      "minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified",
      "maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified",
    ]);
  });
});

describe("LimitRanger in the API server", () => {
  it("defaults a pod from the namespace's LimitRange and refuses one over its max with upstream's 403", async () => {
    const server = new ApiServer();
    try {
      const client = server.client();
      await client.resource(limitRanges, "default").create({
        metadata: { name: "limits" },
        spec: {
          limits: [
            {
              type: "Container",
              default: { cpu: "500m", memory: "128Mi" },
              defaultRequest: { cpu: "250m" },
              max: { cpu: "1" },
            },
          ],
        },
      } as never);
      const created = await client.resource(pods, "default").create({
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      });
      expect(created.spec?.containers[0]?.resources).toEqual({
        limits: { cpu: "500m", memory: "128Mi" },
        requests: { cpu: "250m", memory: "128Mi" },
      });
      expect(created.metadata?.annotations?.[limitRangerAnnotation]).toBe(
        "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c",
      );
      // The LimitRange's own defaults gave memory a default request equal to its default limit;
      // Guaranteed would need cpu's to be equal too.
      expect(created.status?.qosClass).toBe("Burstable");
      const refused = client.resource(pods, "default").create({
        metadata: { generateName: "big-" },
        spec: { containers: [{ name: "c", image: "nginx", resources: { limits: { cpu: "2" } } }] },
      });
      await expect(refused).rejects.toMatchObject({
        code: 403,
        reason: "Forbidden",
        // Validation sees the generated name, as upstream's (the name is made before it runs).
        message: expect.stringMatching(
          /^pods "big-[a-z0-9]{5}" is forbidden: maximum cpu usage per Container is 1, but limit is 2$/,
        ),
      });
    } finally {
      await server.close();
    }
  });
});
