import { defineResource } from "./resources.js";
import type { KubeObject } from "./types.js";

// The resource metrics API (`metrics.k8s.io/v1beta1`, served by metrics-server on a
// cluster): what nodes and pods use now, read by `kubectl top` and the HPA.

/** Usage by resource name: `cpu` (e.g. `"250m"` or `"12345n"`) and `memory` (e.g. `"64Mi"`). */
export type ResourceUsage = Record<string, string>;

/** A node's usage over the last window (`metrics.k8s.io/v1beta1` NodeMetrics). */
export interface NodeMetrics extends KubeObject {
  /** When the window ended (RFC 3339). */
  timestamp: string;
  /** The window's length, as a Go duration (`"20.004s"`). */
  window: string;
  usage: ResourceUsage;
}

/** A pod's usage per container over the last window (`metrics.k8s.io/v1beta1` PodMetrics). */
export interface PodMetrics extends KubeObject {
  timestamp: string;
  window: string;
  containers: { name: string; usage: ResourceUsage }[];
}

export const nodeMetrics = defineResource<NodeMetrics>({
  group: "metrics.k8s.io",
  version: "v1beta1",
  kind: "NodeMetrics",
  plural: "nodes",
  namespaced: false,
});

export const podMetrics = defineResource<PodMetrics>({
  group: "metrics.k8s.io",
  version: "v1beta1",
  kind: "PodMetrics",
  plural: "pods",
  namespaced: true,
});
