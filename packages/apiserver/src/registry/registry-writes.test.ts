import {
  type Deployment,
  deployments,
  isInvalid,
  type KubeObject,
  leases,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeServers, deployment, newServer, pod, rejection, replicaSet } from "./registry.test-util.js";

afterEach(closeServers);

describe("defaulting", () => {
  it("defaults a Deployment as kube-apiserver does", async () => {
    const created = await newServer().client().resource(deployments, "default").create(deployment("web"));
    expect(created.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
    });
    expect(created.spec?.template.spec).toMatchObject({
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
    });
    expect(created.spec?.template.spec?.containers[0]).toMatchObject({
      imagePullPolicy: "IfNotPresent",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
    });
    expect(created.status).toEqual({});
  });

  it("defaults a ReplicaSet to 1 replica and a Pod to restartPolicy Always, grace 30 and phase Pending", async () => {
    const client = newServer().client();
    const rs = await client.resource(replicaSets, "default").create(replicaSet("rs"));
    expect(rs.spec?.replicas).toBe(1);
    const created = await client.resource(pods, "default").create({
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
      status: { phase: "Running" },
    });
    expect(created.spec).toMatchObject({ restartPolicy: "Always", terminationGracePeriodSeconds: 30 });
    expect(created.spec?.containers[0]?.imagePullPolicy).toBe("Always");
    expect(created.status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
  });
});

describe("validation", () => {
  const cases: {
    name: string;
    resource: typeof pods | typeof deployments | typeof replicaSets | typeof leases;
    object: KubeObject;
    causes: string[];
  }[] = [
    {
      name: "a pod without containers",
      resource: pods,
      object: { metadata: { name: "p" }, spec: { containers: [] } } as Pod,
      causes: ["spec.containers"],
    },
    {
      name: "a pod with a container without image",
      resource: pods,
      object: { metadata: { name: "p" }, spec: { containers: [{ name: "c" }] } } as Pod,
      causes: ["spec.containers[0].image"],
    },
    {
      name: "an invalid name",
      resource: pods,
      object: { metadata: { name: "Not_Valid" }, spec: { containers: [{ name: "c", image: "x" }] } } as Pod,
      causes: ["metadata.name"],
    },
    {
      name: "a missing name",
      resource: pods,
      object: { metadata: {}, spec: { containers: [{ name: "c", image: "x" }] } } as Pod,
      causes: ["metadata.name"],
    },
    {
      name: "a deployment whose selector does not match its template",
      resource: deployments,
      object: {
        ...deployment("web"),
        spec: { ...deployment("web").spec!, selector: { matchLabels: { app: "other" } } },
      } as Deployment,
      causes: ["spec.template.metadata.labels"],
    },
    {
      name: "a deployment without selector",
      resource: deployments,
      object: {
        ...deployment("web"),
        spec: { ...deployment("web").spec!, selector: undefined as never },
      } as Deployment,
      // Upstream: Required, and the template fails to match a selector that selects nothing.
      causes: ["spec.selector", "spec.template.metadata.labels"],
    },
    {
      name: "negative replicas",
      resource: deployments,
      object: deployment("web", { replicas: -1 }),
      causes: ["spec.replicas"],
    },
    {
      name: "a replica set with a template restartPolicy other than Always",
      resource: replicaSets,
      object: {
        ...replicaSet("rs"),
        spec: {
          ...replicaSet("rs").spec!,
          template: {
            metadata: { labels: { app: "rs" } },
            spec: { restartPolicy: "Never", containers: [{ name: "c", image: "x" }] },
          },
        },
      } as ReplicaSet,
      causes: ["spec.template.spec.restartPolicy"],
    },
    {
      name: "a lease with a zero duration",
      resource: leases,
      object: { metadata: { name: "l" }, spec: { leaseDurationSeconds: 0 } } as KubeObject,
      causes: ["spec.leaseDurationSeconds"],
    },
  ];
  for (const { name, resource, object, causes } of cases) {
    it(`rejects ${name} with 422 Invalid naming the field`, async () => {
      const server = newServer();
      const client = server.client().resource(resource as typeof pods, "default");
      await server.flush();
      const before = await server.storage.currentRevision();
      const error = await rejection(client.create(object as Pod));
      expect(isInvalid(error)).toBe(true);
      expect(error.status.code).toBe(422);
      expect(error.status.details?.causes?.map((c) => c.field)).toEqual(causes);
      expect(await server.storage.currentRevision()).toBe(before);
    });
  }

  it("words the Invalid message as kube-apiserver does", async () => {
    const error = await rejection(
      newServer()
        .client()
        .resource(deployments, "default")
        .create(deployment("web", { replicas: -1 })),
    );
    expect(error.message).toBe(
      'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });

  it("refuses to change a deployment's selector", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.create(deployment("web"));
    const changed = structuredClone(created);
    changed.spec!.selector = { matchLabels: { app: "web", tier: "x" } };
    changed.spec!.template.metadata!.labels = { app: "web", tier: "x" };
    const error = await rejection(client.update(changed));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["spec.selector"]);
  });

  it("lets a pod update change images but not other spec fields", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create(pod("p"));
    const newImage = structuredClone(created);
    newImage.spec!.containers[0]!.image = "nginx:2";
    const updated = await client.update(newImage);
    expect(updated.spec?.containers[0]?.image).toBe("nginx:2");
    const other = structuredClone(updated);
    other.spec!.restartPolicy = "Never";
    const error = await rejection(client.update(other));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["spec"]);
  });
});

describe("bad input", () => {
  const cases: { name: string; body: unknown; code: number; message: RegExp }[] = [
    { name: "a string body", body: "pod", code: 400, message: /must be a JSON object, got string/ },
    { name: "an array body", body: [], code: 400, message: /must be a JSON object, got an array/ },
    { name: "null", body: null, code: 400, message: /got null/ },
    {
      name: "the wrong kind",
      body: { kind: "Service", metadata: { name: "x" } },
      code: 400,
      message: /kind in the data \(Service\)/,
    },
    {
      name: "the wrong apiVersion",
      body: { apiVersion: "apps/v1", metadata: { name: "x" } },
      code: 400,
      message: /API version in the data \(apps\/v1\)/,
    },
    {
      name: "a number for a name",
      body: { metadata: { name: 7 } },
      code: 400,
      message:
        /: json: cannot unmarshal number into Go struct field ObjectMeta\.metadata\.name of type string$/,
    },
    {
      name: "a string for terminationGracePeriodSeconds",
      body: { metadata: { name: "p" }, spec: { containers: [], terminationGracePeriodSeconds: "30" } },
      code: 400,
      message:
        /: json: cannot unmarshal string into Go struct field PodSpec\.spec\.terminationGracePeriodSeconds of type int64$/,
    },
    {
      name: "labels that are not strings",
      body: { metadata: { name: "p", labels: { a: 1 } } },
      code: 400,
      message:
        /: json: cannot unmarshal number into Go struct field ObjectMeta\.metadata\.labels of type string$/,
    },
    {
      name: "an oversized body",
      body: {
        metadata: { name: "p", annotations: { big: "x".repeat(2 * 1024 * 1024) } },
        spec: { containers: [] },
      },
      code: 413,
      message: /Request entity too large/,
    },
    {
      name: "a container port beyond int32",
      body: {
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 3_000_000_000 }] }] },
      },
      code: 400,
      message:
        /: json: cannot unmarshal number 3000000000 into Go struct field ContainerPort\.spec\.containers\.ports\.containerPort of type int32$/,
    },
    {
      name: "a terminationGracePeriodSeconds beyond int64",
      body: { metadata: { name: "p" }, spec: { containers: [], terminationGracePeriodSeconds: 1e20 } },
      code: 400,
      message:
        /: json: cannot unmarshal number 100000000000000000000 into Go struct field PodSpec\.spec\.terminationGracePeriodSeconds of type int64$/,
    },
    {
      name: "a null container",
      body: { metadata: { name: "p" }, spec: { containers: [null] } },
      code: 400,
      message: /spec\.containers\[0\]: expected object, got null/,
    },
    {
      name: "a null owner reference",
      body: { metadata: { name: "p", ownerReferences: [null] }, spec: { containers: [] } },
      code: 400,
      message: /metadata\.ownerReferences\[0\]: expected object, got null/,
    },
    {
      name: "a null finalizer",
      body: { metadata: { name: "p", finalizers: [null] }, spec: { containers: [] } },
      code: 400,
      message: /metadata\.finalizers\[0\]: expected string, got null/,
    },
    {
      name: "a resourceVersion on create",
      body: { metadata: { name: "p", resourceVersion: "5" } },
      code: 400,
      message: /resourceVersion should not be set/,
    },
  ];
  for (const { name, body, code, message } of cases) {
    it(`answers ${code} for ${name} and stores nothing`, async () => {
      const server = newServer();
      await server.flush();
      const before = await server.storage.currentRevision();
      const error = await rejection(
        server
          .client()
          .resource(pods, "default")
          .create(body as Pod),
      );
      expect(error.status.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(await server.storage.currentRevision()).toBe(before);
    });
  }

  it("drops a __proto__ member of a body rather than storing it (a copy would turn it into a prototype)", async () => {
    const client = newServer().client().resource(pods, "default");
    const body = JSON.parse(
      '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],"__proto__":{"nodeName":"n1"}}}',
    );
    await client.create(body);
    const stored = await client.get("p");
    expect(stored.spec?.nodeName).toBeUndefined();
    expect(Object.getPrototypeOf(stored.spec)).toBe(Object.prototype);
  });

  it("answers 400 for a namespace that disagrees with the client's", async () => {
    const error = await rejection(
      newServer()
        .client()
        .resource(pods, "default")
        .create({ ...pod("p"), metadata: { name: "p", namespace: "kube-system" } }),
    );
    expect(error.status.code).toBe(400);
    expect(error.message).toBe(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("answers 400 for a malformed selector, limit or resourceVersion", async () => {
    const client = newServer().client().resource(pods, "default");
    expect((await rejection(client.list({ labelSelector: "a in (" }))).status.code).toBe(400);
    expect((await rejection(client.list({ fieldSelector: "spec.bogus=x" }))).message).toBe(
      "field label not supported: spec.bogus",
    );
    expect((await rejection(client.list({ limit: -1 }))).status.code).toBe(400);
    expect((await rejection(client.list({ resourceVersion: "abc" }))).status.code).toBe(400);
    expect((await rejection(client.watch({ resourceVersion: "-3" }))).status.code).toBe(400);
    expect((await rejection(client.list({ limit: 1, continue: "!!not-a-token" }))).status.code).toBe(400);
  });

  it("answers 400 for a resourceVersionMatch without a resourceVersion, or with a continue token", async () => {
    const client = newServer().client().resource(pods, "default");
    for (const name of ["a", "b"]) await client.create(pod(name));
    const first = await client.list({ limit: 1 });
    const withContinue = await rejection(
      client.list({ limit: 1, continue: first.metadata.continue, resourceVersionMatch: "NotOlderThan" }),
    );
    expect(withContinue.status.code).toBe(400);
    expect(withContinue.message).toBe("resourceVersionMatch is forbidden when continue is provided");
    const withoutVersion = await rejection(client.list({ resourceVersionMatch: "NotOlderThan" }));
    expect(withoutVersion.status.code).toBe(400);
    expect(withoutVersion.message).toBe(
      "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
  });
});
