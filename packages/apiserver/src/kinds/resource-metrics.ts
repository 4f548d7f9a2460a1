import {
  type KubeObject,
  type NodeMetrics,
  nodeMetrics,
  type PodMetrics,
  podMetrics,
  Quantity,
} from "@reconcile/api";
import type { ResourceDefinition } from "../registry/resource-definition.js";
import { defineKind } from "./definition.js";
import { column, type Loose, nameColumn } from "./printers/columns.js";

/**
 * Where the resource metrics come from (metrics-server's scrape of the
 * kubelets): each node's and each running pod's usage now.
 */
export interface ResourceMetricsProvider {
  nodeMetrics(): readonly NodeMetrics[];
  /** The pods of `namespace`, or of every namespace when it is undefined. */
  podMetrics(namespace: string | undefined): readonly PodMetrics[];
}

const usageColumns = [
  { ...nameColumn, description: "Name of the resource" },
  column("CPU", "string", "CPU usage"),
  column("Memory", "string", "Memory usage"),
  column("Window", "string", "Interval from which metrics were collected"),
];

/** The sum of one resource over usages, as a quantity's text ("0" when none has it). */
function total(usages: readonly Loose[], resource: string): string {
  let sum = Quantity.parse("0");
  for (const usage of usages) {
    const value = usage?.[resource];
    if (typeof value !== "string") continue;
    try {
      sum = sum.add(Quantity.parse(value));
    } catch {
      // An odd value is left out of the sum rather than failing the table.
    }
  }
  return sum.toString();
}

/**
 * `metrics.k8s.io/v1beta1` NodeMetrics and PodMetrics, computed on each
 * request from `provider` (get and list only, label and field selectors
 * applied), with metrics-server's table: Name, CPU, Memory, Window.
 */
export function resourceMetricsDefinitions(provider: ResourceMetricsProvider): ResourceDefinition[] {
  return [
    defineKind({
      descriptor: nodeMetrics,
      verbs: ["get", "list"],
      openAPI: undefined,
      source: { list: () => provider.nodeMetrics() as readonly KubeObject[] },
      printer: {
        columns: usageColumns,
        cells: (object: Loose) => [
          object.metadata?.name ?? "",
          total([object.usage], "cpu"),
          total([object.usage], "memory"),
          object.window ?? "",
        ],
      },
    }),
    defineKind({
      descriptor: podMetrics,
      verbs: ["get", "list"],
      openAPI: undefined,
      source: { list: (namespace) => provider.podMetrics(namespace) as readonly KubeObject[] },
      printer: {
        columns: usageColumns,
        cells: (object: Loose) => {
          const usages = Array.isArray(object.containers)
            ? object.containers.map((c: Loose) => c?.usage)
            : [];
          return [
            object.metadata?.name ?? "",
            total(usages, "cpu"),
            total(usages, "memory"),
            object.window ?? "",
          ];
        },
      },
    }),
  ];
}
