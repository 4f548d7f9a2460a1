import {
  type KubeObject,
  nodes,
  type ResourceDescriptor,
  replicationControllers,
  services,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { emptyValueFiller } from "./empty-values.js";

// What kube-apiserver writes for unset fields, because it decodes into Go
// structs and encodes them with encoding/json: struct values always, scalars
// without `omitempty` as their zero value. Expected objects are what a v1.32
// kube-apiserver returns for the same create.

const server = () => new ApiServer({ kubernetesService: false });

function descriptor(group: string, version: string, plural: string, kind: string, namespaced = true) {
  return {
    group,
    version,
    plural,
    kind,
    namespaced,
    subresources: ["status"],
  } as unknown as ResourceDescriptor;
}

// biome-ignore lint/suspicious/noExplicitAny: objects of many kinds, read loosely and asserted exactly
type Loose = KubeObject & Record<string, any>;

async function created(body: KubeObject, resource: ResourceDescriptor): Promise<Loose> {
  const api = server();
  try {
    const client = api.client().resource(resource, resource.namespaced ? "default" : undefined);
    return (await client.create(body)) as never;
  } finally {
    await api.close();
  }
}

const template = { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i" }] } };

describe("the parts kube-apiserver always writes", () => {
  it("statuses of kinds with struct and non-omitempty fields", async () => {
    const service = await created(
      { metadata: { name: "s" }, spec: { ports: [{ port: 80 }] } } as KubeObject,
      services,
    );
    expect(service.status).toEqual({ loadBalancer: {} });
    const rc = await created(
      { metadata: { name: "rc" }, spec: { selector: { a: "b" }, template } } as KubeObject,
      replicationControllers,
    );
    expect(rc.status).toEqual({ replicas: 0 });
    const daemonSet = await created(
      {
        metadata: { name: "ds" },
        spec: { selector: { matchLabels: { a: "b" } }, template },
      } as KubeObject,
      descriptor("apps", "v1", "daemonsets", "DaemonSet"),
    );
    expect(daemonSet.status).toEqual({
      currentNumberScheduled: 0,
      desiredNumberScheduled: 0,
      numberMisscheduled: 0,
      numberReady: 0,
    });
    const job = await created(
      {
        metadata: { name: "j" },
        spec: { template: { spec: { ...template.spec, restartPolicy: "Never" } } },
      } as KubeObject,
      descriptor("batch", "v1", "jobs", "Job"),
    );
    expect(job.status).toEqual({});
    const budget = await created(
      { metadata: { name: "p" }, spec: { minAvailable: 1 } } as KubeObject,
      descriptor("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
    );
    expect(budget.status).toEqual({
      currentHealthy: 0,
      desiredHealthy: 0,
      disruptionsAllowed: 0,
      expectedPods: 0,
    });
    const ingress = await created(
      {
        metadata: { name: "i" },
        spec: { defaultBackend: { service: { name: "s", port: { number: 80 } } } },
      } as KubeObject,
      descriptor("networking.k8s.io", "v1", "ingresses", "Ingress"),
    );
    expect(ingress.status).toEqual({ loadBalancer: {} });
  });

  it("nested structs are filled in turn: a Node's daemon endpoints and system info", async () => {
    const node = await created({ metadata: { name: "n1" } } as KubeObject, nodes);
    expect(node.spec).toEqual({});
    expect(node.status).toMatchObject({
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: {
        architecture: "",
        bootID: "",
        containerRuntimeVersion: "",
        kernelVersion: "",
        kubeProxyVersion: "",
        kubeletVersion: "",
        machineID: "",
        operatingSystem: "",
        osImage: "",
        systemUUID: "",
      },
    });
  });

  it("an Event's non-omitempty strings and its source", async () => {
    const event = await created(
      {
        metadata: { name: "e" },
        involvedObject: { kind: "Pod", name: "p", namespace: "default" },
        reason: "Started",
        message: "started",
        type: "Normal",
      } as KubeObject,
      descriptor("", "v1", "events", "Event"),
    );
    expect([event.reportingComponent, event.reportingInstance, event.source]).toEqual(["", "", {}]);
    // A zero metav1.MicroTime is written as null; set times are kept.
    expect(event.eventTime).toBeNull();
    expect("firstTimestamp" in event).toBe(true);
    expect(event.firstTimestamp).toBeNull();
  });

  it("a nil slice without omitempty is null: an EndpointSlice without endpoints, a Role without rules", async () => {
    const slice = await created(
      { metadata: { name: "s" }, addressType: "IPv4" } as KubeObject,
      descriptor("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    );
    expect([slice.endpoints, slice.ports]).toEqual([null, null]);
    const role = await created(
      { metadata: { name: "r" } } as KubeObject,
      descriptor("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    );
    expect(role.rules).toBeNull();
    // An empty list that was sent stays a list, as a non-nil Go slice does.
    const sent = await created(
      { metadata: { name: "r" }, rules: [] } as KubeObject,
      descriptor("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    );
    expect(sent.rules).toEqual([]);
  });

  it("a zero time held by value is null: templates' creationTimestamp, conditions' lastProbeTime", async () => {
    const replicaSet = await created(
      { metadata: { name: "rs" }, spec: { selector: { matchLabels: { a: "b" } }, template } } as KubeObject,
      descriptor("apps", "v1", "replicasets", "ReplicaSet"),
    );
    expect(replicaSet.spec.template.metadata).toEqual({ creationTimestamp: null, labels: { a: "b" } });
    expect(replicaSet.metadata?.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const cronJob = await created(
      {
        metadata: { name: "cj" },
        spec: {
          schedule: "@hourly",
          jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: "Never" } } } },
        },
      } as KubeObject,
      descriptor("batch", "v1", "cronjobs", "CronJob"),
    );
    expect(cronJob.spec.jobTemplate.metadata).toEqual({ creationTimestamp: null });
    expect(cronJob.spec.jobTemplate.spec.template.metadata).toEqual({ creationTimestamp: null });

    const fill = emptyValueFiller("io.k8s.api.core.v1.PodStatus")!;
    const status: Record<string, unknown> = {
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: "2024-01-01T00:00:00Z" },
        { type: "PodScheduled", status: "True", lastProbeTime: null },
      ],
    };
    fill(status);
    expect(status.conditions).toEqual([
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2024-01-01T00:00:00Z" },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: null },
    ]);
  });

  it("every write fills them again; set values are kept; array items are filled too", async () => {
    const api = server();
    try {
      const client = api.client().resource(replicationControllers, "default");
      await client.create({ metadata: { name: "rc" }, spec: { selector: { a: "b" }, template } } as never);
      const status = await client.updateStatus({
        ...(await client.get("rc")),
        status: { readyReplicas: 2, conditions: [{ type: "ReplicaFailure", status: "True" }] },
      } as never);
      expect(status.status).toEqual({
        replicas: 0,
        readyReplicas: 2,
        conditions: [{ type: "ReplicaFailure", status: "True", lastTransitionTime: null }],
      });
      const three = await client.updateStatus({ ...status, status: { replicas: 3 } } as never);
      expect(three.status).toEqual({ replicas: 3 });
    } finally {
      await api.close();
    }
  });

  it("before validation every part but the nil ones is filled, after it only the nil ones", () => {
    const fill = emptyValueFiller("io.k8s.api.discovery.v1.EndpointSlice")!;
    const slice: Record<string, unknown> = { endpoints: [{ addresses: ["10.0.0.1"] }] };
    fill(slice, "beforeValidation");
    expect(slice).toEqual({
      metadata: { creationTimestamp: null },
      endpoints: [{ addresses: ["10.0.0.1"], conditions: {} }],
    });
    const bare: Record<string, unknown> = {};
    fill(bare, "afterValidation");
    expect(bare).toEqual({ endpoints: null, ports: null });
  });

  it("kinds without Go types get nothing; a filler is made only where there is something to fill", () => {
    expect(emptyValueFiller("com.example.v1.Widget")).toBeUndefined();
    expect(emptyValueFiller("io.k8s.api.core.v1.LocalObjectReference")).toBeUndefined();
    const fill = emptyValueFiller("io.k8s.api.core.v1.PodStatus")!;
    const status: Record<string, unknown> = { containerStatuses: [{ name: "c", ready: true }] };
    fill(status);
    expect(status).toEqual({
      containerStatuses: [
        { name: "c", ready: true, image: "", imageID: "", restartCount: 0, state: {}, lastState: {} },
      ],
    });
  });
});
