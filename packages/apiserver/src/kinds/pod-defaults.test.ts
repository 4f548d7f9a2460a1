import { type Deployment, deployments, type Pod, type PodSpec, pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../index.js";

// Upstream's pkg/apis/core/v1/defaults_test.go, through a create: what a v1.32
// kube-apiserver stores for a Pod, and for a template, that leaves fields unset.

const servers: ApiServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

async function createdPod(spec: Partial<PodSpec>): Promise<Pod> {
  const server = new ApiServer({ kubernetesService: false });
  servers.push(server);
  const body = { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "i:1" }], ...spec } };
  return server
    .client()
    .resource(pods, "default")
    .create(body as Pod);
}

// biome-ignore lint/suspicious/noExplicitAny: nested parts read loosely and asserted exactly
const loose = (value: unknown): any => value;

describe("a Pod's defaults (SetObjectDefaults_Pod)", () => {
  it("probes get their thresholds and periods, an httpGet its path and scheme, a grpc probe its service", async () => {
    const pod = await createdPod({
      containers: [
        {
          name: "c",
          image: "i:1",
          livenessProbe: { httpGet: { port: 80 } },
          readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 },
          startupProbe: { grpc: { port: 9000 } },
          lifecycle: { preStop: { httpGet: { port: 8080, path: "/stop" } } },
        },
      ],
    });
    const [container] = pod.spec!.containers;
    expect(container!.livenessProbe).toEqual({
      httpGet: { port: 80, path: "/", scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(container!.readinessProbe).toEqual({
      tcpSocket: { port: 80 },
      timeoutSeconds: 1,
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(loose(container!.startupProbe).grpc).toEqual({ port: 9000, service: "" });
    expect(container!.lifecycle).toEqual({
      preStop: { httpGet: { port: 8080, path: "/stop", scheme: "HTTP" } },
    });
  });

  it("requests default to limits, resource by resource, so the QoS class is Guaranteed (TestSetDefaultRequestsPod)", async () => {
    const pod = await createdPod({
      containers: [
        { name: "a", image: "i:1", resources: { limits: { cpu: "100m", memory: "64Mi" } } },
        {
          name: "b",
          image: "i:1",
          resources: { limits: { cpu: "200m", memory: "64Mi" }, requests: { cpu: "200m" } },
        },
      ],
      initContainers: [{ name: "init", image: "i:1", resources: { limits: { cpu: "1" } } }],
    });
    expect(pod.spec!.containers.map((c) => c.resources?.requests)).toEqual([
      { cpu: "100m", memory: "64Mi" },
      { cpu: "200m", memory: "64Mi" },
    ]);
    expect(pod.spec!.initContainers![0]!.resources?.requests).toEqual({ cpu: "1" });
  });

  it("quantities are kept in their canonical form, as resource.Quantity writes them", async () => {
    const pod = await createdPod({
      containers: [
        {
          name: "c",
          image: "i:1",
          resources: {
            limits: { cpu: 0.5 as never, memory: "1.5Gi", "ephemeral-storage": "1000M" },
            requests: { cpu: "250m", memory: "1e3" },
          },
        },
      ],
    });
    expect(pod.spec!.containers[0]!.resources).toEqual({
      limits: { cpu: "500m", memory: "1536Mi", "ephemeral-storage": "1G" },
      requests: { cpu: "250m", memory: "1e3", "ephemeral-storage": "1G" },
    });
  });

  it("a resource list's quantities finer than a milli-unit are rounded up to one (SetDefaults_ResourceList)", async () => {
    const pod = await createdPod({
      containers: [
        {
          name: "c",
          image: "i:1",
          resources: {
            requests: {
              cpu: "0.0001",
              memory: "1.5",
              "example.com/dev": "1e-4",
              "example.com/huge": "99999999999999999999u",
            },
          },
        },
      ],
    });
    expect(pod.spec!.containers[0]!.resources?.requests).toEqual({
      cpu: "1m",
      memory: "1500m",
      "example.com/dev": "1e-3",
      // Past 2^53 milli-units the count is not exact in a float: kept as written, not a 500.
      "example.com/huge": "99999999999999999999u",
    });
  });

  it("enableServiceLinks is true unless set (TestSetDefaultEnableServiceLinks)", async () => {
    expect((await createdPod({})).spec!.enableServiceLinks).toBe(true);
    expect((await createdPod({ enableServiceLinks: false })).spec!.enableServiceLinks).toBe(false);
  });

  it("with the host's network every container port is a host port (TestSetDefaultPodSpecHostNetwork)", async () => {
    const pod = await createdPod({
      hostNetwork: true,
      containers: [
        { name: "c", image: "i:1", ports: [{ containerPort: 8080 }, { containerPort: 53, hostPort: 53 }] },
      ],
    });
    expect(pod.spec!.containers[0]!.ports).toEqual([
      { containerPort: 8080, hostPort: 8080, protocol: "TCP" },
      { containerPort: 53, hostPort: 53, protocol: "TCP" },
    ]);
  });

  it("volumes: no source is an emptyDir; file modes are 0644; a token lives an hour; hostPath's type is empty", async () => {
    const pod = await createdPod({
      volumes: [
        { name: "scratch" },
        { name: "cm", configMap: { name: "x" } },
        { name: "s", secret: { secretName: "x", defaultMode: 0o400 } },
        { name: "d", downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } },
        {
          name: "proj",
          projected: {
            sources: [
              { serviceAccountToken: { path: "token" } },
              { downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } },
            ],
          },
        },
        { name: "host", hostPath: { path: "/var/log" } },
        {
          name: "eph",
          ephemeral: {
            volumeClaimTemplate: {
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
            },
          },
        },
      ],
    });
    expect(pod.spec!.volumes).toEqual([
      { name: "scratch", emptyDir: {} },
      { name: "cm", configMap: { name: "x", defaultMode: 420 } },
      { name: "s", secret: { secretName: "x", defaultMode: 256 } },
      {
        name: "d",
        downwardAPI: {
          defaultMode: 420,
          items: [{ path: "n", fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } }],
        },
      },
      {
        name: "proj",
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
            {
              downwardAPI: {
                items: [{ path: "ns", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
              },
            },
          ],
        },
      },
      { name: "host", hostPath: { path: "/var/log", type: "" } },
      {
        name: "eph",
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { creationTimestamp: null },
            spec: {
              accessModes: ["ReadWriteOnce"],
              resources: { requests: { storage: "1Gi" } },
              volumeMode: "Filesystem",
            },
          },
        },
      },
    ]);
  });

  it("serviceAccount is the deprecated alias of serviceAccountName, in both directions", async () => {
    const byAlias = await createdPod({ serviceAccount: "builder" } as Partial<PodSpec>);
    expect([byAlias.spec!.serviceAccountName, loose(byAlias.spec).serviceAccount]).toEqual([
      "builder",
      "builder",
    ]);
    const both = await createdPod({
      serviceAccountName: "runner",
      serviceAccount: "builder",
    } as Partial<PodSpec>);
    expect([both.spec!.serviceAccountName, loose(both.spec).serviceAccount]).toEqual(["runner", "runner"]);
  });
});

describe("a template's defaults (SetDefaults_PodSpec without SetDefaults_Pod)", () => {
  it("gets the PodSpec's and its probes' defaults, but no requests from limits and no enableServiceLinks", async () => {
    const server = new ApiServer({ kubernetesService: false });
    servers.push(server);
    const created = await server
      .client()
      .resource(deployments, "default")
      .create({
        metadata: { name: "web" },
        spec: {
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              serviceAccountName: "web",
              containers: [
                {
                  name: "c",
                  image: "i:1",
                  resources: { limits: { cpu: "1" } },
                  readinessProbe: { httpGet: { port: 80 } },
                },
              ],
              volumes: [{ name: "scratch" }],
            },
          },
        },
      } as Deployment);
    const spec = created.spec!.template.spec!;
    expect(spec.containers[0]!.resources).toEqual({ limits: { cpu: "1" } });
    expect(spec.containers[0]!.readinessProbe).toEqual({
      httpGet: { port: 80, path: "/", scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(spec.enableServiceLinks).toBeUndefined();
    expect(loose(spec).serviceAccount).toBe("web");
    expect(spec.volumes).toEqual([{ name: "scratch", emptyDir: {} }]);
  });
});
