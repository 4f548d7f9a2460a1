import {
  defineResource,
  deployments,
  events,
  jobs,
  type KubeObject,
  leases,
  namespaces,
  nodes,
  pods,
  type ResourceDescriptor,
  replicaSets,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { definitionFor } from "../kinds/builtin.js";
import { formatLabelSelector } from "../kinds/printers/index.js";
import { requestedTableVersion } from "./negotiation.js";
import { parseIncludeObject, type TableOptions, toTable } from "./table.js";

/** A table with the columns the resource's built-in definition prints. */
const tableOf = (
  resource: ResourceDescriptor,
  objects: readonly KubeObject[],
  listMeta: Parameters<typeof toTable>[2],
  options: Omit<TableOptions, "printer">,
) => toTable(resource, objects, listMeta, { ...options, printer: definitionFor(resource).printer });

const now = Date.parse("2026-01-01T01:00:00Z");
const created = "2026-01-01T00:55:00Z";

const columnsOf = (table: ReturnType<typeof toTable>) =>
  table.columnDefinitions.map((c) => (c.priority === 1 ? `${c.name}*` : c.name));

describe("toTable", () => {
  it("prints pods with kubectl's columns, wide ones at priority 1", () => {
    const pod = {
      metadata: { name: "web-1", namespace: "default", creationTimestamp: created },
      spec: { containers: [{ name: "a" }, { name: "b" }], nodeName: "node-1" },
      status: {
        phase: "Running",
        podIP: "10.0.0.7",
        containerStatuses: [
          {
            name: "a",
            ready: true,
            restartCount: 2,
            state: { running: {} },
            lastState: { terminated: { exitCode: 1, finishedAt: "2026-01-01T00:58:00Z" } },
          },
          {
            name: "b",
            ready: false,
            restartCount: 1,
            state: { waiting: { reason: "CrashLoopBackOff" } },
          },
        ],
      },
    };
    const table = tableOf(pods, [pod], { resourceVersion: "12" }, { now });
    expect(table.kind).toBe("Table");
    expect(table.apiVersion).toBe("meta.k8s.io/v1");
    expect(table.metadata).toEqual({ resourceVersion: "12" });
    expect(columnsOf(table)).toEqual([
      "Name",
      "Ready",
      "Status",
      "Restarts",
      "Age",
      "IP*",
      "Node*",
      "Nominated Node*",
      "Readiness Gates*",
    ]);
    expect(table.rows[0]!.cells).toEqual([
      "web-1",
      "1/2",
      "CrashLoopBackOff",
      "3 (2m ago)",
      "5m",
      "10.0.0.7",
      "node-1",
      "<none>",
      "<none>",
    ]);
    expect(table.rows[0]!.object).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: pod.metadata,
    });
  });

  it("shows a pod being deleted as Terminating", () => {
    const pod = {
      metadata: { name: "p", deletionTimestamp: created },
      spec: { containers: [] },
      status: { phase: "Running" },
    };
    expect(tableOf(pods, [pod], {}, { now }).rows[0]!.cells[2]).toBe("Terminating");
  });

  it("prints deployments and replicasets with ready counts, containers, images and the selector", () => {
    const template = {
      spec: {
        containers: [
          { name: "nginx", image: "nginx:1.27" },
          { name: "side", image: "busybox" },
        ],
      },
    };
    const selector = { matchLabels: { tier: "fe", app: "web" } };
    const deployment = {
      metadata: { name: "web", creationTimestamp: created },
      spec: { replicas: 3, selector, template },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    const table = tableOf(deployments, [deployment], {}, { now });
    expect(columnsOf(table)).toEqual([
      "Name",
      "Ready",
      "Up-to-date",
      "Available",
      "Age",
      "Containers*",
      "Images*",
      "Selector*",
    ]);
    expect(table.rows[0]!.cells).toEqual([
      "web",
      "2/3",
      3,
      2,
      "5m",
      "nginx,side",
      "nginx:1.27,busybox",
      "app=web,tier=fe",
    ]);

    const rs = {
      metadata: { name: "web-abc", creationTimestamp: created },
      spec: { replicas: 3, selector, template },
      status: { replicas: 3, readyReplicas: 1 },
    };
    const rsTable = tableOf(replicaSets, [rs], {}, { now });
    expect(columnsOf(rsTable)).toEqual([
      "Name",
      "Desired",
      "Current",
      "Ready",
      "Age",
      "Containers*",
      "Images*",
      "Selector*",
    ]);
    expect(rsTable.rows[0]!.cells).toEqual([
      "web-abc",
      3,
      3,
      1,
      "5m",
      "nginx,side",
      "nginx:1.27,busybox",
      "app=web,tier=fe",
    ]);
  });

  it("prints leases, namespaces, nodes and events", () => {
    const lease = {
      metadata: { name: "ctrl", creationTimestamp: created },
      spec: { holderIdentity: "pod-1" },
    };
    expect(tableOf(leases, [lease], {}, { now }).rows[0]!.cells).toEqual(["ctrl", "pod-1", "5m"]);

    const ns = { metadata: { name: "default", creationTimestamp: created }, status: { phase: "Active" } };
    expect(tableOf(namespaces, [ns], {}, { now }).rows[0]!.cells).toEqual(["default", "Active", "5m"]);

    const node = {
      metadata: {
        name: "node-1",
        creationTimestamp: created,
        labels: { "node-role.kubernetes.io/control-plane": "" },
      },
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: [{ type: "InternalIP", address: "10.1.0.1" }],
        nodeInfo: {
          kubeletVersion: "v1.32.0",
          osImage: "Debian",
          kernelVersion: "6.1",
          containerRuntimeVersion: "sim://1",
        },
      },
    };
    expect(tableOf(nodes, [node], {}, { now }).rows[0]!.cells).toEqual([
      "node-1",
      "Ready,SchedulingDisabled",
      "control-plane",
      "5m",
      "v1.32.0",
      "10.1.0.1",
      "<none>",
      "Debian",
      "6.1",
      "sim://1",
    ]);

    const event = {
      metadata: { name: "web.1", creationTimestamp: created },
      involvedObject: { kind: "Deployment", name: "web" },
      reason: "ScalingReplicaSet",
      message: "Scaled up replica set web-abc to 3",
      type: "Normal",
      source: { component: "deployment-controller" },
      firstTimestamp: "2026-01-01T00:50:00Z",
      lastTimestamp: created,
      count: 4,
    };
    // Upstream's printEvent: the last time alone (kubectl describe and kubectl events add "(x4 over 10m)").
    expect(tableOf(events, [event], {}, { now }).rows[0]!.cells).toEqual([
      "5m",
      "Normal",
      "ScalingReplicaSet",
      "deployment/web",
      "",
      "deployment-controller",
      "Scaled up replica set web-abc to 3",
      "10m",
      4,
      "web.1",
    ]);
  });

  it("prints jobs with their status, completions and duration", () => {
    const template = { spec: { containers: [{ name: "once", image: "busybox" }] } };
    const running = {
      metadata: { name: "running", creationTimestamp: created },
      spec: { parallelism: 3, template, selector: { matchLabels: { "job-name": "running" } } },
      status: { startTime: created, succeeded: 1 },
    };
    const done = {
      metadata: { name: "done", creationTimestamp: created },
      spec: { completions: 2, template },
      status: {
        startTime: created,
        completionTime: "2026-01-01T00:55:42Z",
        succeeded: 2,
        conditions: [{ type: "Complete", status: "True" }],
      },
    };
    const suspended = {
      metadata: { name: "later", creationTimestamp: created },
      spec: { suspend: true, template },
    };
    const table = tableOf(jobs, [running, done, suspended], {}, { now });
    expect(columnsOf(table)).toEqual([
      "Name",
      "Status",
      "Completions",
      "Duration",
      "Age",
      "Containers*",
      "Images*",
      "Selector*",
    ]);
    expect(table.rows.map((r) => r.cells.slice(0, 5))).toEqual([
      ["running", "Running", "1/1 of 3", "5m", "5m"],
      ["done", "Complete", "2/2", "42s", "5m"],
      ["later", "Suspended", "0/1", "", "5m"],
    ]);
  });

  it("falls back to Name and Created At for kinds without a printer", () => {
    const widgets = defineResource({
      group: "example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: true,
    });
    const table = tableOf(widgets, [{ metadata: { name: "w", creationTimestamp: created } }], {}, { now });
    expect(table.columnDefinitions.map((c) => [c.name, c.type])).toEqual([
      ["Name", "string"],
      ["Created At", "date"],
    ]);
    expect(table.rows[0]!.cells).toEqual(["w", created]);
  });

  it("carries the full object with includeObject=Object, none with None, and no headers when asked", () => {
    const pod = { metadata: { name: "p" }, spec: { containers: [] } };
    expect(tableOf(pods, [pod], {}, { now, includeObject: "Object" }).rows[0]!.object).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      ...pod,
    });
    expect(tableOf(pods, [pod], {}, { now, includeObject: "None" }).rows[0]).toEqual({
      cells: ["p", "0/0", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"],
    });
    expect(tableOf(pods, [pod], {}, { now, noHeaders: true }).columnDefinitions).toEqual([]);
  });

  it("rejects an unknown includeObject value by name", () => {
    expect(parseIncludeObject(null)).toBe("Metadata");
    expect(parseIncludeObject("Object")).toBe("Object");
    expect(() => parseIncludeObject("Everything")).toThrow(
      'includeObject must be one of None, Metadata, Object, not "Everything"',
    );
  });
});

describe("requestedTableVersion", () => {
  it.each([
    [
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
      "v1",
    ],
    ["application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json", "v1beta1"],
    ["application/json", undefined],
    ["application/vnd.kubernetes.protobuf,application/json", undefined],
    [undefined, undefined],
  ])("Accept %s asks for Table %s", (accept, expected) => {
    expect(requestedTableVersion(accept)).toBe(expected);
  });
});

describe("formatLabelSelector", () => {
  it("formats matchLabels and matchExpressions as kubectl prints them", () => {
    expect(
      formatLabelSelector({
        matchLabels: { b: "2", a: "1" },
        matchExpressions: [
          { key: "env", operator: "In", values: ["prod", "dev"] },
          { key: "x", operator: "NotIn", values: ["y"] },
          { key: "has", operator: "Exists" },
          { key: "not", operator: "DoesNotExist" },
        ],
      }),
    ).toBe("a=1,b=2,env in (dev,prod),x notin (y),has,!not");
    expect(formatLabelSelector(undefined)).toBe("<none>");
    expect(formatLabelSelector({})).toBe("<none>");
  });
});
